/**
 * "Log in with Google / Microsoft / your SSO": the OpenID Connect
 * authorization code flow (OpenID Connect Core 1.0 §3.1) with PKCE
 * (RFC 7636, S256), state and nonce, built on openid-client.
 *
 * Wiring expected from the account pages (they own the routes and the session):
 *
 *   const login = createOidcLogin(loadOidcConfig(flags.oidcConfig ?? env.NETINTEL_OIDC_CONFIG));
 *   login page:            one button per login.providers() entry, linking to /login/<id>
 *   GET /login/:id         const { url, pending } = await login.begin(id, `${publicUrl}/login/${id}/callback`);
 *                          session.set('oidc', pending); redirect 303 to url
 *   GET /login/:id/callback
 *                          const pending = session.get('oidc'); session.set('oidc', undefined);
 *                          const identity = await login.finish(id, new URL(request.url, publicUrl), pending);
 *                          const email = linkableEmail(identity);
 *                          email === null → refuse with a page that says why (no verified e-mail);
 *                          else the account with that address (accounts.findByEmail) is logged in.
 *
 * A NetintelError from begin/finish has a message meant for the person at the
 * browser; its code maps to a status through src/errors.ts.
 */

import * as client from 'openid-client';
import { canonicalEmailOrNull } from '../accounts/email-address.js';
import { NetintelError, type ErrorCode } from '../errors.js';
import type { OidcProviderConfig } from './oidc-config.js';

export type { OidcProviderConfig } from './oidc-config.js';

/** What the caller keeps in its session between begin and finish. JSON-serialisable. */
export interface OidcPending {
  provider: string;
  state: string;
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
  /** Epoch milliseconds when the login started. */
  startedAt: number;
}

export interface OidcIdentity {
  /** The `iss` of the ID token (for Microsoft `common`/`organizations`: the user's own tenant). */
  issuer: string;
  /** The `sub` of the ID token: stable per issuer (and, for some providers, per client). */
  subject: string;
  email: string | null;
  emailVerified: boolean;
}

export interface OidcLoginOptions {
  /**
   * Allows http:// issuers anywhere. Without it an issuer must be https,
   * unless it is on the loopback interface (localhost, 127.0.0.0/8, [::1]),
   * where no network sits between the server and the provider.
   */
  allowHttpIssuers?: boolean;
  /** Deadline of each request to a provider (discovery, token, keys, userinfo). */
  timeoutMs?: number;
  /** How long a started login may wait for its callback. */
  maxPendingMs?: number;
  /**
   * The fetch for every request to a provider, e.g. one that goes through the
   * HTTPS_PROXY of the host (Node's own fetch ignores it). Node's fetch by default.
   */
  fetch?: client.CustomFetch;
  now?: () => number;
}

export interface OidcLogin {
  providers(): { id: string; name: string }[];
  begin(id: string, redirectUri: string): Promise<{ url: string; pending: OidcPending }>;
  finish(id: string, callbackUrl: URL, pending: OidcPending): Promise<OidcIdentity>;
}

const SCOPE = 'openid email profile';
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_PENDING_MS = 15 * 60_000;
const CLOCK_SLACK_MS = 60_000;

/**
 * The address an account may be found by, or null. Only an address the
 * provider vouches for (`email_verified: true`, OpenID Connect Core 1.0 §5.1)
 * links a login to an existing account: an unverified address could be any
 * address someone typed at the provider, and linking by it would hand that
 * account over to them. The address comes back in the one form the account
 * store keeps (canonicalEmail), so it can be looked up as it is; an address
 * that has none (control or direction characters in it) links nothing.
 */
export function linkableEmail(identity: OidcIdentity): string | null {
  if (!identity.emailVerified || identity.email === null) return null;
  return canonicalEmailOrNull(identity.email);
}

export function createOidcLogin(providers: OidcProviderConfig[], options: OidcLoginOptions = {}): OidcLogin {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxPendingMs = options.maxPendingMs ?? DEFAULT_MAX_PENDING_MS;
  const now = options.now ?? Date.now;
  const byId = new Map<string, OidcProviderConfig>();
  const httpAllowed = (provider: OidcProviderConfig) => options.allowHttpIssuers === true || isLoopbackUrl(provider.issuer);
  for (const provider of providers) {
    if (!httpAllowed(provider) && new URL(provider.issuer).protocol !== 'https:') {
      throw new NetintelError('usage', `the login provider ${provider.id} has the issuer ${provider.issuer}, which is not https (give its https URL)`, { details: { provider: provider.id } });
    }
    byId.set(provider.id, provider);
  }
  // One discovery per provider; a failed one is forgotten so that the next login tries again.
  const discovered = new Map<string, Promise<client.Configuration>>();

  function providerFor(id: string): OidcProviderConfig {
    const provider = byId.get(id);
    if (provider === undefined) throw new NetintelError('not_found', `there is no login provider ${JSON.stringify(id)} (the login page lists the ones there are)`, { details: { provider: id } });
    return provider;
  }

  function configurationOf(provider: OidcProviderConfig): Promise<client.Configuration> {
    let configuration = discovered.get(provider.id);
    if (configuration === undefined) {
      configuration = discover(provider, timeoutMs, httpAllowed(provider), options.fetch);
      discovered.set(provider.id, configuration);
      configuration.catch(() => {
        if (discovered.get(provider.id) === configuration) discovered.delete(provider.id);
      });
    }
    return configuration;
  }

  return {
    providers: () => [...byId.values()].map(({ id, name }) => ({ id, name })),

    async begin(id, redirectUri) {
      const provider = providerFor(id);
      if (!isWebUrl(redirectUri)) throw new NetintelError('usage', `the redirect URI ${JSON.stringify(redirectUri)} is not an absolute http(s) URL without query or fragment`, { details: { redirect_uri: redirectUri } });
      const configuration = await configurationOf(provider);
      const pending: OidcPending = {
        provider: provider.id,
        state: client.randomState(),
        nonce: client.randomNonce(),
        codeVerifier: client.randomPKCECodeVerifier(),
        redirectUri,
        startedAt: now(),
      };
      const url = client.buildAuthorizationUrl(configuration, {
        redirect_uri: redirectUri,
        scope: SCOPE,
        response_type: 'code',
        state: pending.state,
        nonce: pending.nonce,
        code_challenge: await client.calculatePKCECodeChallenge(pending.codeVerifier),
        code_challenge_method: 'S256',
      });
      return { url: url.href, pending };
    },

    async finish(id, callbackUrl, pending) {
      const provider = providerFor(id);
      if (!isPending(pending) || pending.provider !== provider.id) {
        throw failure('usage', `no login with ${provider.name} was started in this browser (start the login again)`, provider, 'no_pending_login');
      }
      // A little slack for a start time set by another server of the same site whose clock runs ahead.
      if (now() - pending.startedAt > maxPendingMs || pending.startedAt > now() + CLOCK_SLACK_MS) {
        throw failure('usage', `the login with ${provider.name} took too long (start the login again)`, provider, 'login_expired');
      }
      // RFC 6749 §10.12: a callback whose state is not the one this browser sent is someone else's
      // login (or a forged one) and is refused before its code is used or its error believed.
      if (callbackUrl.searchParams.get('state') !== pending.state) {
        throw failure('usage', `the answer from ${provider.name} does not belong to the login started in this browser (state mismatch: start the login again)`, provider, 'state_mismatch');
      }
      const configuration = await configurationOf(provider);
      // The token request must repeat the redirect_uri of the authorization request (RFC 6749 §4.1.3);
      // the callback's own URL may differ behind a proxy, so the parameters move onto the one begin used.
      const responseUrl = new URL(pending.redirectUri);
      responseUrl.search = callbackUrl.search;
      let claims: client.IDToken;
      let accessToken: string;
      try {
        const tokens = await client.authorizationCodeGrant(configuration, responseUrl, {
          expectedState: pending.state,
          expectedNonce: pending.nonce,
          pkceCodeVerifier: pending.codeVerifier,
          idTokenExpected: true,
        });
        const idClaims = tokens.claims();
        if (idClaims === undefined) throw failure('upstream', `${provider.name} answered without an ID token (the login cannot be checked)`, provider, 'no_id_token');
        claims = idClaims;
        accessToken = tokens.access_token;
      } catch (error) {
        throw describeFailure(error, provider, 'callback');
      }
      let source: Record<string, unknown> = claims;
      if (typeof claims.email !== 'string' && configuration.serverMetadata().userinfo_endpoint !== undefined) {
        try {
          source = await client.fetchUserInfo(configuration, accessToken, claims.sub);
        } catch (error) {
          throw describeFailure(error, provider, 'userinfo');
        }
      }
      const email = typeof source.email === 'string' && source.email !== '' ? source.email : null;
      return { issuer: claims.iss, subject: claims.sub, email, emailVerified: email !== null && vouchesForEmail(source, provider) };
    },
  };
}

function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname;
  return host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

async function discover(provider: OidcProviderConfig, timeoutMs: number, allowHttp: boolean, fetch: client.CustomFetch | undefined): Promise<client.Configuration> {
  try {
    return await client.discovery(new URL(provider.issuer), provider.clientId, undefined, secretAuthentication(provider.clientSecret), {
      timeout: timeoutMs / 1000,
      execute: allowHttp ? [client.allowInsecureRequests] : [],
      ...(fetch === undefined ? {} : { [client.customFetch]: fetch }),
    });
  } catch (error) {
    throw describeFailure(error, provider, 'discovery');
  }
}

/**
 * client_secret_basic unless the provider lists only client_secret_post: basic is the default
 * of OpenID Connect Discovery 1.0 §3 (token_endpoint_auth_methods_supported).
 */
function secretAuthentication(secret: string): client.ClientAuth {
  const basic = client.ClientSecretBasic(secret);
  const post = client.ClientSecretPost(secret);
  return (as, metadata, body, headers) => {
    const methods = as.token_endpoint_auth_methods_supported;
    const usePost = methods !== undefined && !methods.includes('client_secret_basic') && methods.includes('client_secret_post');
    return (usePost ? post : basic)(as, metadata, body, headers);
  };
}

/**
 * Whether the provider vouches for the address. `email_verified` is a boolean in
 * OpenID Connect Core 1.0 §5.1; some providers send the string "true". Microsoft
 * sends no `email_verified`; its optional `xms_edov` claim says the address's
 * domain is verified by the tenant, which is what it offers instead.
 */
function vouchesForEmail(claims: Record<string, unknown>, provider: OidcProviderConfig): boolean {
  if (claims.email_verified === true || claims.email_verified === 'true') return true;
  return provider.preset === 'microsoft' && (claims.xms_edov === true || claims.xms_edov === 'true');
}

type Phase = 'discovery' | 'callback' | 'userinfo';

function failure(code: ErrorCode, message: string, provider: OidcProviderConfig, reason: string, cause?: unknown): NetintelError {
  return new NetintelError(code, message, { cause, details: { provider: provider.id, reason } });
}

/** Turns what openid-client or the network threw into an error a person can read. No secret or stack trace goes into it. */
function describeFailure(error: unknown, provider: OidcProviderConfig, phase: Phase): NetintelError {
  if (error instanceof NetintelError) return error;
  const name = provider.name;
  const retry = 'try again in a moment';
  if (error instanceof client.AuthorizationResponseError) {
    const said = /^[a-z_]{1,64}$/.test(error.error) ? error.error : 'an error';
    if (error.error === 'access_denied') return failure('forbidden', `the login with ${name} was cancelled or refused at ${name} (access_denied)`, provider, 'access_denied', error);
    return failure('upstream', `${name} did not log you in (it answered ${said}; ${retry})`, provider, said, error);
  }
  if (error instanceof client.ResponseBodyError) {
    const said = /^[a-z_]{1,64}$/.test(error.error) ? error.error : `HTTP ${error.status}`;
    return failure('upstream', `${name} refused to complete the login (${said}; start the login again)`, provider, said, error);
  }
  const system = systemCode(error);
  if (system !== null) {
    if (/^(ETIMEDOUT|UND_ERR_CONNECT_TIMEOUT|UND_ERR_HEADERS_TIMEOUT|UND_ERR_BODY_TIMEOUT)$/.test(system)) return timedOut(provider, error);
    if (/CERT|SSL|TLS|UNABLE_TO|SELF_SIGNED/.test(system)) return failure('tls', `the TLS certificate of ${name} (${provider.issuer}) could not be verified (${system}); the login cannot go on`, provider, system, error);
    return failure('unreachable', `${name} cannot be reached at ${provider.issuer} (${system}; ${retry})`, provider, system, error);
  }
  const code = codeOf(error);
  if (code === 'OAUTH_TIMEOUT' || code === 'OAUTH_ABORT' || isTimeoutException(error)) return timedOut(provider, error);
  if (phase === 'discovery') {
    const what = code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED' ? 'names another issuer' : 'is not a usable OpenID Connect discovery document';
    return failure('upstream', `the discovery document of ${name} at ${provider.issuer} ${what} (check the issuer in the OIDC config; ${retry})`, provider, code ?? 'discovery_failed', error);
  }
  if (code === 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' || code === 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED' || code === 'OAUTH_KEY_SELECTION_FAILED' || code === 'OAUTH_INVALID_RESPONSE' || code === 'OAUTH_PARSE_ERROR') {
    return failure('unauthorized', `the answer from ${name} did not pass the login checks (${phase === 'userinfo' ? 'user info' : 'ID token'}: ${code.replace(/^OAUTH_/, '').toLowerCase()}); start the login again`, provider, code, error);
  }
  return failure('upstream', `${name} gave an answer the login cannot use (${code === null ? 'unexpected response' : code.replace(/^OAUTH_/, '').toLowerCase()}; ${retry})`, provider, code ?? 'unexpected_response', error);
}

function timedOut(provider: OidcProviderConfig, cause: unknown): NetintelError {
  return failure('timeout', `${provider.name} did not answer in time (${provider.issuer}; try again in a moment)`, provider, 'timeout', cause);
}

/** The errno-style code (ECONNREFUSED, ENOTFOUND, CERT_HAS_EXPIRED, ...) somewhere in a chain of causes. */
function systemCode(error: unknown): string | null {
  for (let current = error, depth = 0; current instanceof Error && depth < 6; current = current.cause, depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && !code.startsWith('OAUTH_') && !code.startsWith('ERR_INVALID_ARG') && /^[A-Z0-9_]{2,64}$/.test(code)) return code;
  }
  return null;
}

function codeOf(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^OAUTH_[A-Z_]+$/.test(code) ? code : null;
}

function isTimeoutException(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 6; current = current.cause, depth += 1) {
    if (current.name === 'TimeoutError' || current.name === 'AbortError') return true;
  }
  return false;
}

function isWebUrl(value: string): boolean {
  try {
    const url = new URL(value);
    // No query: finish puts the callback's query onto this URL.
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.search === '' && url.hash === '' && !/[?#]/.test(value);
  } catch {
    return false;
  }
}

function isPending(value: unknown): value is OidcPending {
  if (typeof value !== 'object' || value === null) return false;
  const pending = value as Record<string, unknown>;
  return ['provider', 'state', 'nonce', 'codeVerifier', 'redirectUri'].every((key) => typeof pending[key] === 'string' && pending[key] !== '')
    && typeof pending.startedAt === 'number' && Number.isFinite(pending.startedAt) && isWebUrl(pending.redirectUri as string);
}
