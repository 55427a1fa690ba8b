import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetintelError } from '../../src/errors.js';
import { createOidcLogin, linkableEmail, type OidcIdentity, type OidcLogin, type OidcPending } from '../../src/web/oidc.js';
import { loadOidcConfig, parseOidcConfig, parseOidcConfigText, type OidcProviderConfig } from '../../src/web/oidc-config.js';
import { CLIENT_ID, CLIENT_SECRET, ProviderBrowser, REDIRECT_URI, startIssuer, type TestIssuer } from '../support/oidc-provider.js';


function corpProvider(issuer: string): OidcProviderConfig {
  return { id: 'corp', name: 'Corp SSO', issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, preset: null };
}

async function errorOf(promise: Promise<unknown>): Promise<NetintelError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(NetintelError);
    return error as NetintelError;
  }
  throw new Error('expected a NetintelError, the call succeeded');
}

/** A readable error: one line, no stack trace, no secret, no code verifier. */
function expectReadable(error: NetintelError, pending?: OidcPending): void {
  expect(error.message).not.toMatch(/[\r\n]|node_modules|\.[jt]s:\d+/);
  expect(error.message).not.toContain(CLIENT_SECRET);
  if (pending !== undefined) {
    expect(error.message).not.toContain(pending.codeVerifier);
    expect(JSON.stringify(error.toJSON())).not.toContain(pending.codeVerifier);
  }
  expect(JSON.stringify(error.toJSON())).not.toContain(CLIENT_SECRET);
}

for (const claimsInIdToken of [true, false]) {
  describe(`OIDC login against oidc-provider (e-mail ${claimsInIdToken ? 'in the ID token' : 'from userinfo'})`, () => {
    let issuer: TestIssuer;
    let login: OidcLogin;

    beforeAll(async () => {
      issuer = await startIssuer({ claimsInIdToken });
      login = createOidcLogin([corpProvider(issuer.issuer)], { allowHttpIssuers: true, timeoutMs: 5000 });
    });
    afterAll(async () => {
      await issuer.close();
    });

    async function loginAs(account: string): Promise<{ identity: OidcIdentity; pending: OidcPending; callback: URL }> {
      const { url, pending } = await login.begin('corp', REDIRECT_URI);
      const callback = await new ProviderBrowser().logIn(url, { account });
      const identity = await login.finish('corp', callback, JSON.parse(JSON.stringify(pending)) as OidcPending);
      return { identity, pending, callback };
    }

    it('lists the provider for the login page', () => {
      expect(login.providers()).toEqual([{ id: 'corp', name: 'Corp SSO' }]);
    });

    it('sends the browser to the provider with PKCE (S256), state and nonce', async () => {
      const { url, pending } = await login.begin('corp', REDIRECT_URI);
      const sent = new URL(url);
      expect(sent.origin).toBe(issuer.issuer);
      expect(Object.fromEntries(sent.searchParams)).toMatchObject({
        client_id: CLIENT_ID,
        redirect_uri: REDIRECT_URI,
        response_type: 'code',
        scope: 'openid email profile',
        state: pending.state,
        nonce: pending.nonce,
        code_challenge_method: 'S256',
      });
      expect(sent.searchParams.get('code_challenge')).not.toBe(pending.codeVerifier);
      expect(pending.provider).toBe('corp');
      // Survives the session's JSON round trip unchanged.
      expect(JSON.parse(JSON.stringify(pending))).toEqual(pending);
      const second = await login.begin('corp', REDIRECT_URI);
      expect(second.pending.state).not.toBe(pending.state);
      expect(second.pending.nonce).not.toBe(pending.nonce);
      expect(second.pending.codeVerifier).not.toBe(pending.codeVerifier);
    });

    it('logs in an account with a verified e-mail: linkable by that address', async () => {
      const before = issuer.requests.filter((path) => path === '/me').length;
      const { identity } = await loginAs('ada');
      expect(identity).toEqual({ issuer: issuer.issuer, subject: 'ada', email: 'Ada@Example.COM', emailVerified: true });
      expect(linkableEmail(identity)).toBe('Ada@example.com');
      const userinfoCalls = issuer.requests.filter((path) => path === '/me').length - before;
      expect(userinfoCalls).toBe(claimsInIdToken ? 0 : 1);
    });

    it('logs in an account whose e-mail is not verified: not linkable', async () => {
      const { identity } = await loginAs('mallory');
      expect(identity).toEqual({ issuer: issuer.issuer, subject: 'mallory', email: 'ada@example.com', emailVerified: false });
      expect(linkableEmail(identity)).toBeNull();
    });

    it('logs in an account without an e-mail: not linkable', async () => {
      const { identity } = await loginAs('noemail');
      expect(identity).toEqual({ issuer: issuer.issuer, subject: 'noemail', email: null, emailVerified: false });
      expect(linkableEmail(identity)).toBeNull();
    });

    it('refuses a callback whose state was tampered with, before using its code', async () => {
      const { url, pending } = await login.begin('corp', REDIRECT_URI);
      const callback = await new ProviderBrowser().logIn(url, { account: 'ada' });
      const tampered = new URL(callback);
      tampered.searchParams.set('state', `${pending.state}x`);
      const tokenCallsBefore = issuer.requests.filter((path) => path === '/token').length;
      const error = await errorOf(login.finish('corp', tampered, pending));
      expect(error.code).toBe('usage');
      expect(error.message).toMatch(/^the answer from Corp SSO does not belong to the login started in this browser \(state mismatch/);
      expect(error.details).toMatchObject({ provider: 'corp', reason: 'state_mismatch' });
      expectReadable(error, pending);
      expect(issuer.requests.filter((path) => path === '/token').length).toBe(tokenCallsBefore);
      // The untouched callback still completes: the refusal used nothing up.
      await expect(login.finish('corp', callback, pending)).resolves.toMatchObject({ subject: 'ada' });
    });

    it('refuses a callback without a started login, or one for another login', async () => {
      const { url, pending } = await login.begin('corp', REDIRECT_URI);
      const callback = await new ProviderBrowser().logIn(url, { account: 'ada' });
      const other = (await login.begin('corp', REDIRECT_URI)).pending;
      for (const wrong of [undefined, null, {}, { ...pending, codeVerifier: 7 }, other]) {
        const error = await errorOf(login.finish('corp', callback, wrong as unknown as OidcPending));
        expect(error.code).toBe('usage');
        expectReadable(error, pending);
      }
    });

    it('refuses a callback with the right state but another login\'s nonce and PKCE verifier (checked by openid-client)', async () => {
      const first = await login.begin('corp', REDIRECT_URI);
      const second = await login.begin('corp', REDIRECT_URI);
      const callback = await new ProviderBrowser().logIn(first.url, { account: 'ada' });
      // The state matches; the code verifier is another login's, so the token endpoint refuses the code (RFC 7636 §4.6).
      const wrongVerifier = await errorOf(login.finish('corp', callback, { ...first.pending, codeVerifier: second.pending.codeVerifier }));
      expect(wrongVerifier.code).toBe('upstream');
      expect(wrongVerifier.message).toBe('Corp SSO refused to complete the login (invalid_grant; start the login again)');
      expectReadable(wrongVerifier, first.pending);

      const third = await login.begin('corp', REDIRECT_URI);
      const callback3 = await new ProviderBrowser().logIn(third.url, { account: 'ada' });
      const wrongNonce = await errorOf(login.finish('corp', callback3, { ...third.pending, nonce: second.pending.nonce }));
      expect(wrongNonce.code).toBe('unauthorized');
      expect(wrongNonce.message).toMatch(/^the answer from Corp SSO did not pass the login checks \(ID token: /);
      expectReadable(wrongNonce, third.pending);
    });

    it('reports a code used twice as a refusal by the provider', async () => {
      const { url, pending } = await login.begin('corp', REDIRECT_URI);
      const callback = await new ProviderBrowser().logIn(url, { account: 'ada' });
      await login.finish('corp', callback, pending);
      const error = await errorOf(login.finish('corp', callback, pending));
      expect(error.code).toBe('upstream');
      expect(error.message).toBe('Corp SSO refused to complete the login (invalid_grant; start the login again)');
      expect(error.details).toMatchObject({ provider: 'corp', reason: 'invalid_grant' });
      expectReadable(error, pending);
    });

    it('reports a login cancelled at the provider (error=access_denied)', async () => {
      const { url, pending } = await login.begin('corp', REDIRECT_URI);
      const callback = await new ProviderBrowser().logIn(url, 'cancel');
      expect(callback.searchParams.get('error')).toBe('access_denied');
      const error = await errorOf(login.finish('corp', callback, pending));
      expect(error.code).toBe('forbidden');
      expect(error.message).toBe('the login with Corp SSO was cancelled or refused at Corp SSO (access_denied)');
      expectReadable(error, pending);
    });

    it('refuses an unknown provider id and a redirect URI that is not a URL', async () => {
      const unknown = await errorOf(login.begin('nope', REDIRECT_URI));
      expect(unknown.code).toBe('not_found');
      expect(unknown.message).toBe('there is no login provider "nope" (the login page lists the ones there are)');
      for (const bad of ['/login/corp/callback', `${REDIRECT_URI}?next=/`, `${REDIRECT_URI}#top`, 'javascript:alert(1)']) {
        const error = await errorOf(login.begin('corp', bad));
        expect(error.code).toBe('usage');
        expect(error.message).toBe(`the redirect URI ${JSON.stringify(bad)} is not an absolute http(s) URL without query or fragment`);
      }
    });

    it('refuses a login that waited too long for its callback', async () => {
      let clock = Date.now();
      const slow = createOidcLogin([corpProvider(issuer.issuer)], { allowHttpIssuers: true, maxPendingMs: 60_000, now: () => clock });
      const { url, pending } = await slow.begin('corp', REDIRECT_URI);
      const callback = await new ProviderBrowser().logIn(url, { account: 'ada' });
      clock += 60_001;
      const error = await errorOf(slow.finish('corp', callback, pending));
      expect(error.code).toBe('usage');
      expect(error.message).toBe('the login with Corp SSO took too long (start the login again)');
    });
  });
}

describe('OIDC login when the issuer is down', () => {
  it('gives a clear error, tries discovery again on the next login, and works once the issuer is up', async () => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const { port } = probe.address() as AddressInfo;
    probe.close();
    await once(probe, 'close');

    const issuerUrl = `http://127.0.0.1:${port}`;
    const login = createOidcLogin([corpProvider(issuerUrl)], { allowHttpIssuers: true, timeoutMs: 5000 });
    const down = await errorOf(login.begin('corp', REDIRECT_URI));
    expect(down.code).toBe('unreachable');
    expect(down.message).toBe(`Corp SSO cannot be reached at ${issuerUrl} (ECONNREFUSED; try again in a moment)`);
    expect(down.details).toEqual({ provider: 'corp', reason: 'ECONNREFUSED' });
    expectReadable(down);
    // Still down: the failure was not cached as the answer, it is tried again.
    expect((await errorOf(login.begin('corp', REDIRECT_URI))).code).toBe('unreachable');

    const issuer = await startIssuer({ claimsInIdToken: true, port });
    try {
      const { url, pending } = await login.begin('corp', REDIRECT_URI);
      const callback = await new ProviderBrowser().logIn(url, { account: 'ada' });
      const identity = await login.finish('corp', callback, pending);
      expect(linkableEmail(identity)).toBe('Ada@example.com');
      // Discovery is cached once it worked.
      await login.begin('corp', REDIRECT_URI);
      expect(issuer.requests.filter((path) => path === '/.well-known/openid-configuration')).toHaveLength(1);
    } finally {
      await issuer.close();
    }
  });

  it('gives a timeout error when the issuer accepts the connection and never answers', async () => {
    const silent = createServer(() => { /* never answers */ });
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const { port } = silent.address() as AddressInfo;
    try {
      const login = createOidcLogin([corpProvider(`http://127.0.0.1:${port}`)], { allowHttpIssuers: true, timeoutMs: 300 });
      const error = await errorOf(login.begin('corp', REDIRECT_URI));
      expect(error.code).toBe('timeout');
      expect(error.message).toBe(`Corp SSO did not answer in time (http://127.0.0.1:${port}; try again in a moment)`);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  it('refuses a discovery document that names another issuer', async () => {
    const liar = createServer((_request, response) => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ issuer: 'https://elsewhere.example', authorization_endpoint: 'https://elsewhere.example/auth', token_endpoint: 'https://elsewhere.example/token', jwks_uri: 'https://elsewhere.example/jwks' }));
    });
    liar.listen(0, '127.0.0.1');
    await once(liar, 'listening');
    const { port } = liar.address() as AddressInfo;
    try {
      const login = createOidcLogin([corpProvider(`http://127.0.0.1:${port}`)], { allowHttpIssuers: true });
      const error = await errorOf(login.begin('corp', REDIRECT_URI));
      expect(error.code).toBe('upstream');
      expect(error.message).toBe(`the discovery document of Corp SSO at http://127.0.0.1:${port} names another issuer (check the issuer in the OIDC config; try again in a moment)`);
    } finally {
      liar.close();
    }
  });

  it('refuses an http issuer unless it is on the loopback interface, or allowed', () => {
    expect(() => createOidcLogin([corpProvider('http://sso.corp.example')])).toThrow(expect.objectContaining({ code: 'usage', message: 'the login provider corp has the issuer http://sso.corp.example, which is not https (give its https URL)' }));
    expect(() => createOidcLogin([corpProvider('http://127.0.0.2:1')])).not.toThrow();
    expect(() => createOidcLogin([corpProvider('http://[::1]:1')])).not.toThrow();
    expect(() => createOidcLogin([corpProvider('http://localhost:1')])).not.toThrow();
    expect(() => createOidcLogin([corpProvider('http://sso.corp.example')], { allowHttpIssuers: true })).not.toThrow();
  });
});

/**
 * Microsoft's multi-tenant endpoints (`common`, `organizations`) publish the issuer
 * `https://login.microsoftonline.com/{tenantid}/v2.0` while each ID token names the user's own
 * tenant. A stand-in for login.microsoftonline.com on 127.0.0.1 serves that discovery document
 * and signs ID tokens, reached through the `fetch` option, to pin down how openid-client treats
 * the placeholder: it accepts the discovery document and checks each ID token's `iss` against
 * the template filled with the token's own `tid`.
 */
describe('OIDC login with the Microsoft preset (common tenant)', () => {
  const MICROSOFT = 'https://login.microsoftonline.com';
  const TENANT = '11111111-2222-3333-4444-555555555555';
  const OTHER_TENANT = '99999999-8888-7777-6666-555555555555';
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = 'test-key';
  let server: Server;
  let origin: string;
  /** What the next ID token says, set by each case. */
  let nextIdToken: Record<string, unknown> = {};
  const codes = new Map<string, string>();

  function signedJwt(payload: Record<string, unknown>): string {
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const input = `${part({ alg: 'RS256', kid, typ: 'JWT' })}.${part(payload)}`;
    return `${input}.${sign('RSA-SHA256', Buffer.from(input), privateKey).toString('base64url')}`;
  }

  beforeAll(async () => {
    server = createServer((request, response) => {
      const path = new URL(request.url ?? '/', 'http://x').pathname;
      const json = (body: unknown) => {
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify(body));
      };
      if (path === '/common/v2.0/.well-known/openid-configuration') {
        json({
          issuer: `${MICROSOFT}/{tenantid}/v2.0`,
          authorization_endpoint: `${MICROSOFT}/common/oauth2/v2.0/authorize`,
          token_endpoint: `${MICROSOFT}/common/oauth2/v2.0/token`,
          jwks_uri: `${MICROSOFT}/common/discovery/v2.0/keys`,
          response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
          subject_types_supported: ['pairwise'],
          id_token_signing_alg_values_supported: ['RS256'],
          token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
          scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
        });
      } else if (path === '/common/discovery/v2.0/keys') {
        json({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid, use: 'sig', alg: 'RS256' }] });
      } else if (path === '/common/oauth2/v2.0/token') {
        let body = '';
        request.on('data', (chunk: Buffer) => { body += chunk.toString(); });
        request.on('end', () => {
          const form = new URLSearchParams(body);
          const nonce = codes.get(form.get('code') ?? '');
          // client_secret_basic: both parts form-encoded, then Base64 (RFC 6749 §2.3.1).
          const [id, secret] = Buffer.from((request.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString().split(':').map(decodeURIComponent);
          if (nonce === undefined || id !== CLIENT_ID || secret !== CLIENT_SECRET) {
            response.statusCode = 400;
            json({ error: 'invalid_grant' });
            return;
          }
          const now = Math.floor(Date.now() / 1000);
          json({
            token_type: 'Bearer',
            access_token: randomUUID(),
            expires_in: 3600,
            id_token: signedJwt({ aud: CLIENT_ID, iat: now, nbf: now, exp: now + 3600, nonce, ver: '2.0', ...nextIdToken }),
          });
        });
      } else {
        response.statusCode = 404;
        response.end();
      }
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.close();
  });

  function microsoftLogin(): OidcLogin {
    const [provider] = parseOidcConfig({ providers: [{ id: 'microsoft', preset: 'microsoft', clientId: CLIENT_ID, clientSecret: CLIENT_SECRET }] }, 'oidc.json', {});
    // Every request meant for login.microsoftonline.com goes to the stand-in.
    const toStandIn = (url: string, init: RequestInit) => fetch(url.replace(MICROSOFT, origin), init);
    return createOidcLogin([provider!], { fetch: toStandIn });
  }

  /** The callback Microsoft would send the browser to after the person logged in. */
  async function callbackFor(login: OidcLogin): Promise<{ callback: URL; pending: OidcPending }> {
    const { url, pending } = await login.begin('microsoft', REDIRECT_URI);
    expect(new URL(url).href.startsWith(`${MICROSOFT}/common/oauth2/v2.0/authorize?`)).toBe(true);
    const code = randomUUID();
    codes.set(code, pending.nonce);
    const callback = new URL(REDIRECT_URI);
    callback.searchParams.set('code', code);
    callback.searchParams.set('state', pending.state);
    return { callback, pending };
  }

  it('accepts an ID token whose iss is the {tenantid} template filled with its own tid; the identity names that tenant', async () => {
    const login = microsoftLogin();
    nextIdToken = { iss: `${MICROSOFT}/${TENANT}/v2.0`, tid: TENANT, sub: 'pairwise-sub-1', email: 'ada@contoso.example', xms_edov: true };
    const { callback, pending } = await callbackFor(login);
    const identity = await login.finish('microsoft', callback, pending);
    expect(identity).toEqual({ issuer: `${MICROSOFT}/${TENANT}/v2.0`, subject: 'pairwise-sub-1', email: 'ada@contoso.example', emailVerified: true });
    expect(linkableEmail(identity)).toBe('ada@contoso.example');
  });

  it('treats a Microsoft address without xms_edov (or email_verified) as unverified', async () => {
    const login = microsoftLogin();
    nextIdToken = { iss: `${MICROSOFT}/${TENANT}/v2.0`, tid: TENANT, sub: 'pairwise-sub-2', email: 'boss@contoso.example' };
    const { callback, pending } = await callbackFor(login);
    const identity = await login.finish('microsoft', callback, pending);
    expect(identity.emailVerified).toBe(false);
    expect(linkableEmail(identity)).toBeNull();
  });

  it('refuses an ID token whose iss names another tenant than its tid', async () => {
    const login = microsoftLogin();
    nextIdToken = { iss: `${MICROSOFT}/${OTHER_TENANT}/v2.0`, tid: TENANT, sub: 'pairwise-sub-3', email: 'ada@contoso.example', xms_edov: true };
    const { callback, pending } = await callbackFor(login);
    const error = await errorOf(login.finish('microsoft', callback, pending));
    expect(error.code).toBe('unauthorized');
    expect(error.message).toBe('the answer from Microsoft did not pass the login checks (ID token: jwt_claim_comparison_failed); start the login again');
    expectReadable(error, pending);
  });
});

describe('linkableEmail', () => {
  const identity = (email: string | null, emailVerified: boolean): OidcIdentity => ({ issuer: 'https://sso.example', subject: 's', email, emailVerified });

  it('gives the address in the account store\'s form only when the provider verified it', () => {
    expect(linkableEmail(identity(' Ada@Example.COM ', true))).toBe('Ada@example.com');
    expect(linkableEmail(identity('ada@example.com', false))).toBeNull();
    expect(linkableEmail(identity(null, true))).toBeNull();
    expect(linkableEmail(identity('not an address', true))).toBeNull();
  });

  it('never throws, and never links an unverified address (property)', () => {
    fc.assert(fc.property(fc.option(fc.string()), fc.boolean(), (email, verified) => {
      const linked = linkableEmail(identity(email, verified));
      if (!verified || email === null) expect(linked).toBeNull();
      if (linked !== null) expect(linked).toContain('@');
    }));
  });
});

describe('OIDC config file', () => {
  const SOURCE = '/etc/netintel/oidc.json';
  const env = { GOOGLE_SECRET: 'g-secret-from-env' };

  function usageMessage(json: unknown, environment: NodeJS.ProcessEnv = env): string {
    try {
      parseOidcConfig(json, SOURCE, environment);
    } catch (error) {
      expect(error).toBeInstanceOf(NetintelError);
      expect((error as NetintelError).code).toBe('usage');
      return (error as NetintelError).message;
    }
    throw new Error('expected a usage error');
  }

  it('fills Google and Microsoft from their presets and takes any issuer', () => {
    const providers = parseOidcConfig({
      providers: [
        { id: 'google', preset: 'google', clientId: 'g-id', clientSecretEnv: 'GOOGLE_SECRET' },
        { id: 'microsoft', preset: 'microsoft', tenant: 'consumers', clientId: 'm-id', clientSecret: 'm-secret' },
        { id: 'work', preset: 'microsoft', tenant: 'A1B2C3D4-0000-1111-2222-333344445555', name: 'Work account', clientId: 'w-id', clientSecret: 'w' },
        { id: 'ms-any', preset: 'microsoft', clientId: 'a-id', clientSecret: 'a' },
        { id: 'corp', name: 'Corp SSO', issuer: 'https://sso.corp.example', clientId: 'c-id', clientSecret: 'c-secret' },
      ],
    }, SOURCE, env);
    expect(providers).toEqual([
      { id: 'google', name: 'Google', issuer: 'https://accounts.google.com', clientId: 'g-id', clientSecret: 'g-secret-from-env', preset: 'google' },
      { id: 'microsoft', name: 'Microsoft', issuer: 'https://login.microsoftonline.com/consumers/v2.0', clientId: 'm-id', clientSecret: 'm-secret', preset: 'microsoft' },
      { id: 'work', name: 'Work account', issuer: 'https://login.microsoftonline.com/a1b2c3d4-0000-1111-2222-333344445555/v2.0', clientId: 'w-id', clientSecret: 'w', preset: 'microsoft' },
      { id: 'ms-any', name: 'Microsoft', issuer: 'https://login.microsoftonline.com/common/v2.0', clientId: 'a-id', clientSecret: 'a', preset: 'microsoft' },
      { id: 'corp', name: 'Corp SSO', issuer: 'https://sso.corp.example', clientId: 'c-id', clientSecret: 'c-secret', preset: null },
    ]);
  });

  it('names the file and the field in one line for each mistake', () => {
    const ok = { id: 'corp', issuer: 'https://sso.example', clientId: 'c', clientSecret: 's' };
    const cases: Array<[unknown, string]> = [
      [[], 'the top level must be an object with a "providers" list'],
      [{}, 'providers must be a list of providers'],
      [{ providers: [] }, 'providers is empty (list at least one provider, or leave --oidc-config out)'],
      [{ providers: [ok], extra: 1 }, 'extra is not a known field (the top level holds only "providers")'],
      [{ providers: ['corp'] }, 'providers[0] must be an object'],
      [{ providers: [{ ...ok, id: 'Corp' }] }, 'providers[0].id must be 1 to 32 lowercase letters, digits or hyphens'],
      [{ providers: [{ ...ok, id: 'a'.repeat(33) }] }, 'providers[0].id must be 1 to 32 lowercase letters, digits or hyphens'],
      [{ providers: [ok, ok] }, 'providers[1].id "corp" is used by an earlier provider (ids must be unique)'],
      [{ providers: [{ ...ok, clientSecret: undefined }] }, 'providers[0].clientSecret is missing (give clientSecret, or clientSecretEnv naming an environment variable that holds it)'],
      [{ providers: [{ ...ok, clientSecretEnv: 'GOOGLE_SECRET' }] }, 'providers[0].clientSecret and clientSecretEnv cannot both be given (keep one)'],
      [{ providers: [{ ...ok, clientSecret: undefined, clientSecretEnv: 'MISSING_SECRET' }] }, 'providers[0].clientSecretEnv names MISSING_SECRET, which is not set (export it before starting netintel serve)'],
      [{ providers: [{ ...ok, clientSecret: undefined, clientSecretEnv: 'not a name' }] }, 'providers[0].clientSecretEnv must be the name of an environment variable (letters, digits, _)'],
      [{ providers: [{ ...ok, clientId: '' }] }, 'providers[0].clientId must be the client id the provider issued (a non-empty string)'],
      [{ providers: [{ ...ok, issuer: undefined }] }, 'providers[0].issuer is missing (give the issuer URL, or a "preset")'],
      [{ providers: [{ ...ok, issuer: 'sso.example' }] }, 'providers[0].issuer "sso.example" is not a URL'],
      [{ providers: [{ ...ok, issuer: 'ftp://sso.example' }] }, 'providers[0].issuer "ftp://sso.example" must be an https URL'],
      [{ providers: [{ ...ok, issuer: 'https://sso.example/?tenant=1' }] }, 'providers[0].issuer "https://sso.example/?tenant=1" must not have a query or fragment'],
      [{ providers: [{ ...ok, issuer: 'https://sso.example/.well-known/openid-configuration' }] }, 'providers[0].issuer "https://sso.example/.well-known/openid-configuration" is a discovery document URL (give the issuer: the URL before /.well-known/)'],
      [{ providers: [{ ...ok, preset: 'github' }] }, 'providers[0].preset must be "google" or "microsoft" (or left out, with "issuer" given)'],
      [{ providers: [{ ...ok, preset: 'google' }] }, 'providers[0].issuer cannot be given with "preset": "google" (the preset sets it)'],
      [{ providers: [{ ...ok, tenant: 'common' }] }, 'providers[0].tenant applies only to "preset": "microsoft"'],
      [{ providers: [{ ...ok, issuer: undefined, preset: 'microsoft', tenant: 'a/b' }] }, 'providers[0].tenant must be "common", "consumers", "organizations", a tenant id or a verified domain of the tenant'],
      [{ providers: [{ ...ok, name: 'Corp\nSSO' }] }, 'providers[0].name must be 1 to 64 printable characters'],
      [{ providers: [{ ...ok, clientSecrett: 's' }] }, 'providers[0].clientSecrett is not a known field (known: id, name, preset, tenant, issuer, clientId, clientSecret, clientSecretEnv)'],
    ];
    for (const [json, problem] of cases) {
      const cleaned = JSON.parse(JSON.stringify(json)) as unknown;
      expect(usageMessage(cleaned)).toBe(`the OIDC config file ${SOURCE}: ${problem}`);
    }
  });

  it('never puts a secret into a message', () => {
    const message = usageMessage({ providers: [{ id: 'corp', issuer: 'https://sso.example', clientId: 'c', clientSecret: 'hunter2-secret', name: 7 }] });
    expect(message).not.toContain('hunter2');
    const fromEnv = usageMessage({ providers: [{ id: 'x', preset: 'google', clientId: 'c', clientSecretEnv: 'GOOGLE_SECRET', tenant: 'common' }] });
    expect(fromEnv).not.toContain(env.GOOGLE_SECRET);
  });

  it('reads the file, and says so in one line when it cannot or it is not JSON', () => {
    const dir = mkdtempSync(join(tmpdir(), 'netintel-oidc-'));
    try {
      const path = join(dir, 'oidc.json');
      writeFileSync(path, JSON.stringify({ providers: [{ id: 'google', preset: 'google', clientId: 'g', clientSecretEnv: 'GOOGLE_SECRET' }] }));
      expect(loadOidcConfig(path, env)).toEqual([{ id: 'google', name: 'Google', issuer: 'https://accounts.google.com', clientId: 'g', clientSecret: env.GOOGLE_SECRET, preset: 'google' }]);
      writeFileSync(path, '{ "providers": [ ');
      expect(() => loadOidcConfig(path, env)).toThrow(expect.objectContaining({ code: 'usage', message: expect.stringMatching(new RegExp(`^the OIDC config file ${path} is not valid JSON \\([^\\n]+\\)$`)) }));
      expect(() => loadOidcConfig(join(dir, 'missing.json'), env)).toThrow(expect.objectContaining({
        code: 'usage',
        message: `cannot read the OIDC config file ${join(dir, 'missing.json')} (ENOENT: check the path given to --oidc-config or NETINTEL_OIDC_CONFIG)`,
      }));
      // Never read whole: /dev/zero stops at the limit, in one line naming the file and the limit.
      expect(() => loadOidcConfig('/dev/zero', env)).toThrow(expect.objectContaining({
        code: 'usage',
        message: 'the OIDC config file /dev/zero is larger than the limit of 1 MiB (1048576 bytes); check the path given to --oidc-config or NETINTEL_OIDC_CONFIG',
      }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  function expectConfigOrUsage(run: () => OidcProviderConfig[]): void {
    try {
      const providers = run();
      expect(providers.length).toBeGreaterThan(0);
      for (const provider of providers) {
        expect(provider.id).toMatch(/^[a-z0-9-]{1,32}$/);
        expect(new URL(provider.issuer).protocol).toMatch(/^https?:$/);
        expect(provider.clientSecret.length).toBeGreaterThan(0);
      }
    } catch (error) {
      expect(error).toBeInstanceOf(NetintelError);
      expect((error as NetintelError).code).toBe('usage');
      expect((error as NetintelError).message).toMatch(/^(the OIDC config file|cannot read the OIDC config file) /);
      expect((error as NetintelError).message).not.toMatch(/[\n\r]/);
    }
  }

  it('turns any JSON value into a config or a usage error, never another exception (property)', () => {
    fc.assert(fc.property(fc.jsonValue(), (json) => expectConfigOrUsage(() => parseOidcConfig(json, SOURCE, env))), { numRuns: 2000 });
    fc.assert(fc.property(fc.string(), (text) => expectConfigOrUsage(() => parseOidcConfigText(text, SOURCE, env))), { numRuns: 500 });
  });

  it('turns near-valid provider lists into a config or a usage error (property)', () => {
    const anyValue = fc.jsonValue({ maxDepth: 1 });
    const field = <T>(valid: fc.Arbitrary<T>) => fc.oneof(valid, anyValue, fc.constant(undefined));
    const entry = fc.record({
      id: field(fc.stringMatching(/^[a-z0-9-]{0,34}$/)),
      name: field(fc.string({ maxLength: 70 })),
      preset: field(fc.constantFrom('google', 'microsoft', 'github')),
      tenant: field(fc.constantFrom('common', 'consumers', 'organizations', 'contoso.onmicrosoft.com', 'a/b', '')),
      issuer: field(fc.oneof(fc.webUrl({ withQueryParameters: true, withFragments: true }), fc.string())),
      clientId: field(fc.string({ maxLength: 10 })),
      clientSecret: field(fc.string({ maxLength: 10 })),
      clientSecretEnv: field(fc.constantFrom('GOOGLE_SECRET', 'UNSET_SECRET', '1BAD', '__proto__', 'constructor')),
    }, { requiredKeys: [] });
    fc.assert(fc.property(fc.array(entry, { maxLength: 4 }), (providers) => {
      const json = JSON.parse(JSON.stringify({ providers })) as unknown;
      expectConfigOrUsage(() => parseOidcConfig(json, SOURCE, env));
    }), { numRuns: 2000 });
  });
});
