import type { FastifyPluginAsync } from 'fastify';
import type { PlanTable } from '../keys/plans.js';
import type { LimitStore } from '../server/limits/limit-store.js';
import type { AccountStore } from '../store/account-store.js';
import type { KeyStore } from '../store/key-store.js';
import { DASHBOARD_SCRIPT, STYLESHEET } from './assets.js';
import { dashboardFlow } from './flows/dashboard.js';
import { logInFlow } from './flows/log-in.js';
import { resetFlow } from './flows/reset.js';
import { signUpFlow } from './flows/sign-up.js';
import { socialLoginFlow } from './flows/social-login.js';
import { verifyFlow } from './flows/verify.js';
import type { HashGate } from './hash-gate.js';
import type { OidcLogin } from './oidc.js';
import { registerPageProtections } from './page-protections.js';
import { createPagesContext } from './pages-context.js';

export interface AccountPagesDeps {
  accounts: AccountStore;
  keys: KeyStore;
  plans: PlanTable;
  /** Where the form throttles count (the API's limit store: Redis when shared). */
  limits: LimitStore;
  /** Told when a message was queued, so it goes out now rather than at the sender's next look (accounts/mail-sender.ts). */
  mail: { wake(): void };
  /** The address people reach the server at, without a trailing slash: links in mail and the curl example use it. */
  publicUrl: () => string;
  /** Whether the pages are served over https (a public URL of https): cookies are Secure and __Host-. */
  https: boolean;
  /** Seals the session cookies and signs device cookies (AccountStore.sessionKey: one per database, so every server reads them). */
  sessionKey: Buffer;
  /** Log in with an OpenID Connect provider (oidc.ts), when any is configured. */
  social?: OidcLogin;
  /** The way into scrypt (hash-gate.ts); one per server. */
  hashGate?: HashGate;
  now?: () => number;
}

/**
 * The self-service pages of docs/accounts.md, From nothing to a key: sign
 * up (by e-mail or a social login), verify the address, sign in and out, a
 * forgotten or changed password, and the dashboard where an account makes
 * and revokes its keys. Server-rendered HTML, no script needed (one adds copy buttons).
 * Registered as a context of their own: the form parser, session, CSRF and
 * headers apply to these pages only.
 *
 * A session is a row of the database (AccountStore.startSession) whose id
 * travels in a sealed cookie (@fastify/secure-session: encrypted and
 * authenticated, HttpOnly, SameSite=Lax, Secure and __Host- when the public
 * URL is https); every request looks the row up, so logging out, "log out
 * everywhere", a password change and disabling the account end sessions on
 * the server, whatever copies of the cookie exist. Every form carries a
 * CSRF token (@fastify/csrf-protection, its secret in the session); every
 * page has security headers (@fastify/helmet). Throttles are taken before
 * any password is hashed (throttles.ts), hashing waits its turn in the hash
 * gate (hash-gate.ts), and every message to send is a row written with what
 * it belongs to (the mail outbox).
 */
export const accountPages: FastifyPluginAsync<AccountPagesDeps> = async (pages, deps) => {
  await registerPageProtections(pages, deps);
  const context = createPagesContext(pages, deps);

  pages.get('/assets/netintel.css', (_request, reply) => reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(STYLESHEET));
  pages.get('/assets/dashboard.js', (_request, reply) => reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(DASHBOARD_SCRIPT));

  signUpFlow(context);
  logInFlow(context);
  verifyFlow(context);
  resetFlow(context);
  dashboardFlow(context);
  if (deps.social) socialLoginFlow(context, deps.social);
};
