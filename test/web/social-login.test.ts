/**
 * Log in with an OpenID Connect provider through the account pages: a real
 * oidc-provider on 127.0.0.1, the whole server (buildServer) with real
 * stores, and the provider's own log-in and consent pages walked as a
 * browser would.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AccountStore } from '../../src/store/account-store.js';
import { createMailer } from '../../src/accounts/mailer.js';
import { hashPassword } from '../../src/accounts/passwords.js';
import { createOidcLogin } from '../../src/web/oidc.js';
import { startTestServer, type TestServer } from '../server/harness.js';
import { CLIENT_ID, CLIENT_SECRET, ProviderBrowser, startIssuer, type TestIssuer } from '../support/oidc-provider.js';
import { PageClient } from './page-client.js';
import { openStore } from '../support/stores.js';

const PUBLIC_URL = 'http://netintel.test';
const CALLBACK = `${PUBLIC_URL}/login/corp/callback`;

let issuer: TestIssuer;
let server: TestServer;
let accounts: AccountStore;
let dir: string;

beforeAll(async () => {
  issuer = await startIssuer({ claimsInIdToken: true, redirectUris: [CALLBACK] });
});
afterAll(async () => {
  await issuer.close();
});

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'netintel-social-'));
  const file = join(dir, 'keys.db');
  const store = await openStore(file);
  accounts = store.accounts;
  server = await startTestServer({
    store,
    checkContract: false,
    accountPages: {
      mailer: createMailer({ from: 'netintel <no-reply@netintel.test>', outboxDir: join(dir, 'outbox') }),
      publicUrl: () => PUBLIC_URL,
      https: false,
      social: createOidcLogin([{ id: 'corp', name: 'Corp SSO', issuer: issuer.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, preset: null }]),
    },
  });
});
afterEach(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** From the log-in page's button to netintel's answer at the callback. */
async function socialLogIn(browser: PageClient, account: string) {
  const login = await browser.get('/login');
  expect(login.body).toContain('<a class="button secondary" href="/login/corp">Log in with Corp SSO</a>');
  const start = await browser.get('/login/corp');
  expect(start.status).toBe(303);
  expect(start.location!.startsWith(`${issuer.issuer}/`)).toBe(true);
  const callback = await new ProviderBrowser(CALLBACK).logIn(start.location!, { account });
  return browser.get(`${callback.pathname}${callback.search}`);
}

describe('log in with an OpenID Connect provider', () => {
  it('makes a verified Free account for a new verified address, signed in, ready to make keys', async () => {
    const browser = new PageClient(server.app);
    const landed = await socialLogIn(browser, 'ada');
    expect(landed).toMatchObject({ status: 303, location: '/dashboard' });
    const account = (await accounts.byEmail('Ada@example.com'))!;
    expect(account).toMatchObject({ plan: 'free-account', has_password: false });
    expect(account.email_verified_at).not.toBeNull();
    const dashboard = await browser.get('/dashboard');
    expect(dashboard.body).toContain('Ada@example.com (verified)');
    expect((await browser.post('/dashboard/keys', { label: 'sso' })).status).toBe(201);
  });

  it('links an existing verified account by its address: the same account, its password kept', async () => {
    const existing = await accounts.create({ email: 'Ada@example.com', passwordHash: await hashPassword('correct horse battery'), plan: 'pro' });
    await accounts.markVerified(existing.id);
    const browser = new PageClient(server.app);
    expect(await socialLogIn(browser, 'ada')).toMatchObject({ status: 303, location: '/dashboard' });
    expect((await accounts.list()).map((account) => account.id)).toEqual([existing.id]);
    expect((await accounts.byId(existing.id))!.has_password).toBe(true);
    expect((await browser.get('/dashboard')).body).toContain('<code>pro</code>');
  });

  it("takes over an unverified account with the address: the squatter's password and session stop working", async () => {
    const squatter = new PageClient(server.app, { 'x-forwarded-for': '192.0.2.66' });
    await squatter.get('/signup');
    await squatter.post('/signup', { email: 'Ada@example.com', password: 'squatters password' });
    await expect.poll(async () => accounts.byEmail('Ada@example.com')).not.toBeNull();
    await squatter.get('/login');
    expect((await squatter.post('/login', { email: 'Ada@example.com', password: 'squatters password' })).status).toBe(303);
    expect((await squatter.get('/dashboard')).status).toBe(200);

    const owner = new PageClient(server.app);
    expect(await socialLogIn(owner, 'ada')).toMatchObject({ status: 303, location: '/dashboard' });
    expect((await accounts.byEmail('Ada@example.com'))!.has_password).toBe(false);
    expect(await squatter.get('/dashboard')).toMatchObject({ status: 303, location: '/login' });
    await squatter.get('/login');
    expect((await squatter.post('/login', { email: 'Ada@example.com', password: 'squatters password' })).status).toBe(401);
  });

  it('refuses an address the provider has not verified, and makes no account', async () => {
    await accounts.create({ email: 'ada@example.com', passwordHash: await hashPassword('correct horse battery') });
    const browser = new PageClient(server.app);
    const page = await socialLogIn(browser, 'mallory');
    expect(page.status).toBe(400);
    expect(page.body).toContain('has no verified e-mail address');
    expect(await browser.get('/dashboard')).toMatchObject({ status: 303, location: '/login' });
    expect(await accounts.list()).toHaveLength(1);
  });

  it('refuses a callback that did not start in this browser', async () => {
    const starter = new PageClient(server.app);
    await starter.get('/login');
    const start = await starter.get('/login/corp');
    const callback = await new ProviderBrowser(CALLBACK).logIn(start.location!, { account: 'ada' });
    // Another browser (an attacker's link) arriving at the callback with the code.
    const other = new PageClient(server.app);
    await other.get('/login');
    const page = await other.get(`${callback.pathname}${callback.search}`);
    expect(page.status).toBe(400);
    expect(page.body).toContain('That sign-in did not start here');
    expect(await accounts.list()).toEqual([]);
  });

  it('answers any callback query with a page, never a 5xx, and signs no one in', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.constantFrom('code', 'state', 'error', 'error_description', 'iss', 'session_state', 'code[]'), fc.string({ unit: 'binary', maxLength: 80 })),
        fc.boolean(),
        async (query, started) => {
          const browser = new PageClient(server.app);
          await browser.get('/login');
          if (started) await browser.get('/login/corp');
          const page = await browser.get(`/login/corp/callback?${new URLSearchParams(query).toString()}`);
          expect(page.status).toBeLessThan(500);
          expect(page.status).not.toBe(303);
          expect(await browser.get('/dashboard')).toMatchObject({ status: 303, location: '/login' });
        },
      ),
      { numRuns: 40 },
    );
    expect(await accounts.list()).toEqual([]);
  });

  it('refuses a disabled account and an unknown provider', async () => {
    const account = await accounts.create({ email: 'Ada@example.com', passwordHash: null });
    await accounts.disable(account.id);
    const browser = new PageClient(server.app);
    const page = await socialLogIn(browser, 'ada');
    expect(page.status).toBe(403);
    expect(page.body).toContain('disabled');
    expect((await browser.get('/login/nope')).status).toBe(404);
  });
});
