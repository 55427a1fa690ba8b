import csrfProtection from '@fastify/csrf-protection';
import formBody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import secureSession from '@fastify/secure-session';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { normaliseEmail, type AccountRecord, type AccountStore } from '../accounts/account-store.js';
import { createLinkToken, LINK_TOKEN_PATTERN, type LinkPurpose } from '../accounts/link-tokens.js';
import type { MailMessage, Mailer } from '../accounts/mailer.js';
import { dummyVerify, hashPassword, passwordProblem, verifyPassword } from '../accounts/passwords.js';
import { NetintelError } from '../errors.js';
import type { KeyStore } from '../keys/key-store.js';
import { effectivePlan, type PlanTable } from '../keys/plans.js';
import type { LimitStore } from '../server/limits/limit-store.js';
import { DASHBOARD_SCRIPT, STYLESHEET } from './assets.js';
import { alreadyRegisteredMail, resetMail, verificationMail } from './mail-messages.js';
import {
  checkMailPage,
  confirmLinkPage,
  dashboardPage,
  deleteAccountPage,
  forgotPage,
  linkNotValidPage,
  logInPage,
  messagePage,
  signUpPage,
  type KeyRow,
  type Provider,
} from './pages.js';
import { linkableEmail, type OidcIdentity, type OidcLogin, type OidcPending } from './oidc.js';
import { FormThrottles, type ThrottleName, type Throttled } from './throttles.js';

declare module '@fastify/secure-session' {
  interface SessionData {
    /** The signed-in account. */
    account: string;
    /** Its session counter when signing in (AccountStore.sessionEpoch). */
    epoch: number;
    /** A social sign-in under way: the provider and what its callback is checked against. */
    oidc: { provider: string; pending: OidcPending };
    /** A one-time message for the next page. */
    flash: string;
  }
}

export interface AccountPagesDeps {
  accounts: AccountStore;
  keys: KeyStore;
  plans: PlanTable;
  /** Where the form throttles count (the API's limit store: Redis when shared). */
  limits: LimitStore;
  mailer: Mailer;
  /** The address people reach the server at, without a trailing slash: links in mail and the curl example use it. */
  publicUrl: () => string;
  /** Whether the pages are served over https (a public URL of https): cookies are Secure and __Host-. */
  https: boolean;
  /** Seals the session cookies (AccountStore.sessionKey: one per database, so every server reads every session). */
  sessionKey: Buffer;
  /** Log in with an OpenID Connect provider (oidc.ts), when any is configured. */
  social?: OidcLogin;
  now?: () => number;
}

/** How long a sign-in lasts. */
const SESSION_SECONDS = 7 * 24 * 3600;
/** Active keys an account may hold at once. */
const MAX_KEYS_PER_ACCOUNT = 20;
const FORM_BODY_LIMIT = 16 * 1024;
const LABEL_MAX = 64;

/**
 * The self-service pages of SPEC.md, Authentication 4: sign up (by e-mail
 * or a social login), verify the address, sign in and out, a forgotten
 * password, and the dashboard where an account makes and revokes its keys.
 * Server-rendered HTML, no script needed (one adds copy buttons).
 *
 * Sessions are sealed cookies (@fastify/secure-session: encrypted and
 * authenticated, HttpOnly, SameSite=Lax, Secure and __Host- when the public
 * URL is https), checked against the account at every request: a disabled
 * or deleted account, or one whose sessions were ended, is signed out.
 * Every form carries a CSRF token (@fastify/csrf-protection, its secret in
 * the session); every page has security headers (@fastify/helmet).
 */
export function registerAccountPages(app: FastifyInstance, deps: AccountPagesDeps): void {
  // Registered in a context of their own: the form parser, session, CSRF and headers apply to these pages only.
  void app.register(async (pages) => accountPages(pages, deps));
}

async function accountPages(pages: FastifyInstance, deps: AccountPagesDeps): Promise<void> {
  const { accounts, keys, plans, mailer, social, https } = deps;
  const now = deps.now ?? Date.now;
  const throttles = new FormThrottles(deps.limits, now);

  await pages.register(formBody, { bodyLimit: FORM_BODY_LIMIT });
  await pages.register(secureSession, {
    key: deps.sessionKey,
    // The __Host- prefix makes browsers refuse the cookie unless it is Secure, host-only and for path / (RFC 6265bis §4.1.3.2).
    cookieName: https ? '__Host-netintel-session' : 'netintel-session',
    expiry: SESSION_SECONDS,
    cookie: { path: '/', httpOnly: true, sameSite: 'lax', secure: https, maxAge: SESSION_SECONDS },
  });
  await pages.register(csrfProtection, { sessionPlugin: '@fastify/secure-session' });
  await pages.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
        ...(https ? { upgradeInsecureRequests: [] } : {}),
      },
    },
    // HSTS only where the pages are served over https; on http it would be ignored, or wrong behind a proxy that adds its own.
    strictTransportSecurity: https ? { maxAge: 15_552_000, includeSubDomains: false } : false,
    referrerPolicy: { policy: 'no-referrer' },
  });

  pages.addHook('onSend', (_request, reply, payload, done) => {
    // Pages carry CSRF tokens, keys and account details: never stored by a cache.
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    done(null, payload);
  });

  pages.setErrorHandler((error: FastifyError | NetintelError, request, reply) => {
    const base = { csrf: '', signedIn: null };
    if ((error as FastifyError).code?.startsWith('FST_CSRF')) {
      return sendPage(reply, 403, messagePage(base, {
        title: 'Form expired',
        kind: 'error',
        text: 'This form has expired or did not come from this site. Go back, reload the page and send it again.',
        next: { href: request.url.split('?')[0] ?? '/', label: 'Reload the form' },
      }));
    }
    const status = (error as FastifyError).statusCode;
    if (error instanceof NetintelError && error.code === 'data_unavailable') {
      request.log.error({ err: error }, 'account page failed');
      return sendPage(reply, 503, messagePage(base, { title: 'Try again shortly', kind: 'error', text: 'The account database cannot be reached just now. Try again in a minute.' }));
    }
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return sendPage(reply, status, messagePage(base, { title: 'That did not work', kind: 'error', text: 'The request could not be read. Go back and send the form again.', next: { href: '/', label: 'Start again' } }));
    }
    request.log.error({ err: error, path: request.url.split('?')[0] }, 'account page failed');
    return sendPage(reply, 500, messagePage(base, { title: 'Something went wrong', kind: 'error', text: 'The page failed; the server logged why. Try again in a minute.' }));
  });

  /** Mail goes out after the answer: its time must not tell which addresses have accounts, nor make a person wait for a relay. */
  const sendMail = (request: FastifyRequest, message: MailMessage): void => {
    void mailer.send(message).then(
      (delivery) =>
        request.log.info(
          delivery.via === 'outbox' ? { subject: message.subject, outbox: delivery.path } : { subject: message.subject, relay: delivery.relay, messageId: delivery.messageId },
          delivery.via === 'outbox' ? 'mail written to the outbox (no --smtp-url given)' : 'mail sent',
        ),
      (error: unknown) => request.log.error({ err: error, subject: message.subject }, 'mail could not be sent'),
    );
  };

  /** Runs work after the answer, logging a failure; for the paths that must answer alike whatever they find. */
  const later = (request: FastifyRequest, what: string, work: () => Promise<void>): void => {
    void work().catch((error: unknown) => request.log.error({ err: error }, what));
  };

  const linkTo = async (account: AccountRecord, purpose: LinkPurpose): Promise<string> => {
    const token = createLinkToken(purpose, new Date(now()));
    await accounts.storeLink({ accountId: account.id, purpose, tokenHash: token.hash, expiresAt: token.expiresAt });
    // The token in the path keeps a link to 76 characters on most hosts, a line mail does not wrap (RFC 2045 §6.7).
    return `${deps.publicUrl()}/${purpose === 'verify-email' ? 'verify' : 'reset'}/${token.token}`;
  };

  /** The signed-in account, or null; a session that no longer holds (deleted, disabled, ended) is cleared. */
  const signedIn = async (request: FastifyRequest): Promise<AccountRecord | null> => {
    const id = request.session.get('account');
    if (typeof id !== 'string') return null;
    const account = await accounts.byId(id);
    if (account === null || account.disabledAt !== null || (await accounts.sessionEpoch(id)) !== request.session.get('epoch')) {
      request.session.set('account', undefined);
      request.session.set('epoch', undefined);
      return null;
    }
    return account;
  };

  const signIn = async (request: FastifyRequest, account: AccountRecord): Promise<void> => {
    // A new session at sign-in, so one planted before it (session fixation) holds nothing afterwards.
    request.session.regenerate();
    request.session.set('account', account.id);
    request.session.set('epoch', await accounts.sessionEpoch(account.id));
  };

  const base = (reply: FastifyReply, account: AccountRecord | null) => ({ csrf: reply.generateCsrf(), signedIn: account?.email ?? null });
  const providers = (): Provider[] => social?.providers() ?? [];

  const throttledPage = (reply: FastifyReply, throttled: Throttled, account: AccountRecord | null) => {
    const minutes = Math.ceil(throttled.retryAfterSeconds / 60);
    reply.header('retry-after', throttled.retryAfterSeconds);
    return sendPage(reply, 429, messagePage(base(reply, account), {
      title: 'Too many attempts',
      kind: 'error',
      text: `Too many attempts for now. Wait ${minutes === 1 ? 'a minute' : `${minutes} minutes`} and try again.`,
      next: { href: '/forgot', label: 'Forgotten your password?' },
    }));
  };

  const protect = { preHandler: pages.csrfProtection };

  pages.get('/assets/netintel.css', (_request, reply) => reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(STYLESHEET));
  pages.get('/assets/dashboard.js', (_request, reply) => reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(DASHBOARD_SCRIPT));

  pages.get('/', async (request, reply) => reply.redirect((await signedIn(request)) ? '/dashboard' : '/login', 303));

  pages.get('/signup', async (request, reply) => {
    const account = await signedIn(request);
    if (account) return reply.redirect('/dashboard', 303);
    return sendPage(reply, 200, signUpPage(base(reply, null), { providers: providers() }));
  });

  pages.post('/signup', protect, async (request, reply) => {
    const body = formFields(request.body);
    const typed = body.email.trim();
    const email = emailOrNull(typed);
    const problem = passwordProblem(body.password);
    if (email === null || problem !== null) {
      return sendPage(reply, 400, signUpPage(base(reply, null), {
        providers: providers(),
        email: typed,
        errors: { ...(email === null ? { email: 'Enter an e-mail address such as name@example.com.' } : {}), ...(problem !== null ? { password: `${capitalise(problem)}.` } : {}) },
      }));
    }
    const throttled = await throttles.charge([['signUpsByClient', request.netintel.client], ['mailByEmail', email]]);
    if (throttled) return throttledPage(reply, throttled, null);
    // Both paths hash the password and answer alike; what differs happens after the answer.
    const [existing, passwordHash] = await Promise.all([accounts.byEmail(email), hashPassword(body.password)]);
    later(request, 'sign-up failed', async () => {
      if (existing !== null) {
        sendMail(request, alreadyRegisteredMail(existing.email, `${deps.publicUrl()}/login`, `${deps.publicUrl()}/forgot`));
        return;
      }
      const account = await accounts.create({ email, passwordHash, plan: plans.newAccounts });
      sendMail(request, verificationMail(account.email, await linkTo(account, 'verify-email')));
    });
    return sendPage(reply, 200, checkMailPage(base(reply, null), { email, what: 'verify' }));
  });

  pages.get('/login', async (request, reply) => {
    const account = await signedIn(request);
    if (account) return reply.redirect('/dashboard', 303);
    const flash = request.session.get('flash');
    if (flash) request.session.set('flash', undefined);
    return sendPage(reply, 200, logInPage(base(reply, null), { providers: providers(), ...(flash ? { notice: flash } : {}) }));
  });

  pages.post('/login', protect, async (request, reply) => {
    const body = formFields(request.body);
    const email = emailOrNull(body.email);
    const checks: Array<readonly [ThrottleName, string]> = [['signInFailuresByClient', request.netintel.client]];
    if (email !== null) checks.push(['signInFailuresByEmail', email]);
    const throttled = await throttles.check(checks);
    if (throttled) return throttledPage(reply, throttled, null);
    const account = email === null ? null : await accounts.byEmail(email);
    const stored = account === null ? null : await accounts.passwordHash(account.id);
    // An address without an account (or without a password) costs what a wrong password does.
    const matches = stored === null ? await dummyVerify(body.password) : await verifyPassword(body.password, stored);
    if (!matches || account === null) {
      await throttles.charge(checks);
      return sendPage(reply, 401, logInPage(base(reply, null), { providers: providers(), email: body.email.trim(), error: 'Wrong e-mail address or password.' }));
    }
    if (account.disabledAt !== null) {
      return sendPage(reply, 403, logInPage(base(reply, null), { providers: providers(), error: 'This account has been disabled by the operator of this server.' }));
    }
    await signIn(request, account);
    return reply.redirect('/dashboard', 303);
  });

  pages.post('/logout', protect, async (request, reply) => {
    request.session.delete();
    return reply.redirect('/login', 303);
  });

  /** The page a mailed link opens: its form when the link still works, else why not (before anything is typed). */
  const linkPage = (what: 'verify' | 'reset', purpose: LinkPurpose) =>
    pages.get<{ Params: { token: string } }>(`/${what}/:token`, async (request, reply) => {
      const token = linkToken(request.params.token);
      const account = await signedIn(request);
      const holder = token === null ? null : await accounts.linkHolder(token, purpose, new Date(now()));
      if (token === null || holder === null) return sendPage(reply, 400, linkNotValidPage(base(reply, account), what));
      return sendPage(reply, 200, confirmLinkPage(base(reply, account), { token, what, email: holder.email }));
    });

  linkPage('verify', 'verify-email');

  pages.post('/verify', protect, async (request, reply) => {
    const token = formFields(request.body).token;
    const current = await signedIn(request);
    const id = LINK_TOKEN_PATTERN.test(token) ? await accounts.consumeLink(token, 'verify-email', new Date(now())) : null;
    if (id === null) return sendPage(reply, 400, linkNotValidPage(base(reply, current), 'verify'));
    await accounts.markVerified(id);
    if (current?.id === id) {
      request.session.set('flash', 'Your e-mail address is verified. You can make API keys now.');
      return reply.redirect('/dashboard', 303);
    }
    request.session.set('flash', 'Your e-mail address is verified. Log in to make an API key.');
    return reply.redirect('/login', 303);
  });

  pages.post('/verify/resend', protect, async (request, reply) => {
    const account = await signedIn(request);
    if (account === null) return reply.redirect('/login', 303);
    if (account.emailVerifiedAt === null) {
      const throttled = await throttles.charge([['mailByEmail', account.email]]);
      if (throttled) return throttledPage(reply, throttled, account);
      sendMail(request, verificationMail(account.email, await linkTo(account, 'verify-email')));
      request.session.set('flash', `We sent a new link to ${account.email}.`);
    }
    return reply.redirect('/dashboard', 303);
  });

  pages.get('/forgot', async (request, reply) => sendPage(reply, 200, forgotPage(base(reply, await signedIn(request)))));

  pages.post('/forgot', protect, async (request, reply) => {
    const typed = formFields(request.body).email.trim();
    const email = emailOrNull(typed);
    const current = await signedIn(request);
    if (email === null) return sendPage(reply, 400, forgotPage(base(reply, current), { email: typed, error: 'Enter the e-mail address of your account.' }));
    const throttled = await throttles.charge([['resetsByClient', request.netintel.client], ['mailByEmail', email]]);
    if (throttled) return throttledPage(reply, throttled, current);
    const account = await accounts.byEmail(email);
    later(request, 'password reset failed', async () => {
      if (account === null || account.disabledAt !== null) return;
      sendMail(request, resetMail(account.email, await linkTo(account, 'reset-password')));
    });
    return sendPage(reply, 200, checkMailPage(base(reply, current), { email, what: 'reset' }));
  });

  linkPage('reset', 'reset-password');

  pages.post('/reset', protect, async (request, reply) => {
    const body = formFields(request.body);
    const current = await signedIn(request);
    if (!LINK_TOKEN_PATTERN.test(body.token)) return sendPage(reply, 400, linkNotValidPage(base(reply, current), 'reset'));
    // The password is checked before the link is used, so a refused password does not spend it.
    const problem = passwordProblem(body.password);
    if (problem !== null) {
      const holder = await accounts.linkHolder(body.token, 'reset-password', new Date(now()));
      if (holder === null) return sendPage(reply, 400, linkNotValidPage(base(reply, current), 'reset'));
      return sendPage(reply, 400, confirmLinkPage(base(reply, current), { token: body.token, what: 'reset', email: holder.email, error: `${capitalise(problem)}.` }));
    }
    const id = await accounts.consumeLink(body.token, 'reset-password', new Date(now()));
    if (id === null) return sendPage(reply, 400, linkNotValidPage(base(reply, current), 'reset'));
    await accounts.setPasswordHash(id, await hashPassword(body.password));
    // The link came by mail: the address is the holder's.
    await accounts.markVerified(id);
    await accounts.endSessions(id);
    // A fresh session (not a deleted one, whose cookie is cleared with everything in it) carries the notice.
    request.session.regenerate();
    request.session.set('flash', 'Your password is changed, and every other session is logged out. Log in with the new password.');
    return reply.redirect('/login', 303);
  });

  const dashboard = async (reply: FastifyReply, account: AccountRecord, extra: { newKey?: { key: string; label: string | null }; notice?: string; error?: string }, status = 200) => {
    const records = await accounts.keysOf(account.id);
    const usage = await keys.usage(records.map((record) => record.id), new Date(now()));
    const rows: KeyRow[] = records.map((record) => ({
      record,
      today: usage.get(record.id)?.today ?? 0,
      month: usage.get(record.id)?.month ?? 0,
    }));
    const plan = effectivePlan(plans, account.plan, null);
    return sendPage(reply, status, dashboardPage(base(reply, account), { account, plan, keys: rows, publicUrl: deps.publicUrl(), ...extra }));
  };

  pages.get('/dashboard', async (request, reply) => {
    const account = await signedIn(request);
    if (account === null) return reply.redirect('/login', 303);
    const flash = request.session.get('flash');
    if (flash) request.session.set('flash', undefined);
    return dashboard(reply, account, flash ? { notice: flash } : {});
  });

  pages.post('/dashboard/keys', protect, async (request, reply) => {
    const account = await signedIn(request);
    if (account === null) return reply.redirect('/login', 303);
    if (account.emailVerifiedAt === null) return dashboard(reply, account, { error: 'Verify your e-mail address first: keys are made only for verified addresses.' }, 403);
    const active = (await accounts.keysOf(account.id)).filter((record) => record.revokedAt === null);
    if (active.length >= MAX_KEYS_PER_ACCOUNT) {
      return dashboard(reply, account, { error: `An account holds at most ${MAX_KEYS_PER_ACCOUNT} active keys. Revoke one you no longer use first.` }, 409);
    }
    const label = cleanLabel(formFields(request.body).label);
    const created = await keys.create({ plan: account.plan, label, accountId: account.id });
    request.log.info({ account: account.id, key: created.record.id }, 'key made in the dashboard');
    return dashboard(reply, account, { newKey: { key: created.key, label } }, 201);
  });

  pages.post<{ Params: { id: string } }>('/dashboard/keys/:id/revoke', protect, async (request, reply) => {
    const account = await signedIn(request);
    if (account === null) return reply.redirect('/login', 303);
    const owned = (await accounts.keysOf(account.id)).find((record) => record.id === request.params.id);
    if (owned === undefined) return dashboard(reply, account, { error: 'No key of this account has that id.' }, 404);
    await keys.revoke(owned.id);
    request.log.info({ account: account.id, key: owned.id }, 'key revoked in the dashboard');
    request.session.set('flash', `Key ${owned.label ? `“${owned.label}” ` : ''}(${owned.id}) is revoked: requests with it are refused from now on.`);
    return reply.redirect('/dashboard', 303);
  });

  pages.get('/account/delete', async (request, reply) => {
    const account = await signedIn(request);
    if (account === null) return reply.redirect('/login', 303);
    return sendPage(reply, 200, deleteAccountPage(base(reply, account), { account }));
  });

  pages.post('/account/delete', protect, async (request, reply) => {
    const account = await signedIn(request);
    if (account === null) return reply.redirect('/login', 303);
    const body = formFields(request.body);
    const confirmed = account.hasPassword
      ? await verifyPassword(body.password, (await accounts.passwordHash(account.id)) ?? '')
      : emailOrNull(body.email) === account.email;
    if (!confirmed) {
      return sendPage(reply, 403, deleteAccountPage(base(reply, account), { account, error: account.hasPassword ? 'That is not the password of this account.' : 'That is not the address of this account.' }));
    }
    await accounts.delete(account.id);
    request.log.info({ account: account.id }, 'account deleted by its holder');
    request.session.delete();
    return sendPage(reply, 200, messagePage({ csrf: '', signedIn: null }, { title: 'Account deleted', text: 'The account and its keys are deleted.', next: { href: '/signup', label: 'Sign up again' } }));
  });

  if (social) {
    const known = (id: string) => social.providers().some((provider) => provider.id === id);
    const redirectUri = (id: string) => `${deps.publicUrl()}/login/${id}/callback`;

    pages.get<{ Params: { provider: string } }>('/login/:provider', async (request, reply) => {
      const { provider } = request.params;
      if (!known(provider)) return sendPage(reply, 404, messagePage(base(reply, null), { title: 'Unknown sign-in', kind: 'error', text: 'This server has no such sign-in provider.', next: { href: '/login', label: 'Back to log in' } }));
      const { url, pending } = await social.begin(provider, redirectUri(provider));
      request.session.set('oidc', { provider, pending });
      return reply.redirect(url, 303);
    });

    pages.get<{ Params: { provider: string } }>('/login/:provider/callback', async (request, reply) => {
      const { provider } = request.params;
      const started = request.session.get('oidc');
      request.session.set('oidc', undefined);
      const failed = (text: string) => sendPage(reply, 400, logInPage(base(reply, null), { providers: providers(), error: text }));
      if (!known(provider) || started === undefined || started.provider !== provider) return failed('That sign-in did not start here, or took too long. Try again.');
      let identity: OidcIdentity;
      try {
        identity = await social.finish(provider, new URL(request.url, deps.publicUrl()), started.pending);
      } catch (error) {
        request.log.warn({ err: error, provider }, 'social sign-in failed');
        return failed(error instanceof NetintelError ? `Sign-in did not complete: ${error.message}.` : 'Sign-in did not complete. Try again.');
      }
      // An account is linked by an address the provider has verified, and by nothing else.
      const email = linkableEmail(identity);
      if (email === null) return failed('That account has no verified e-mail address, so it cannot be linked to one here. Verify the address with the provider, or sign up with your e-mail address.');
      let account = await accounts.byEmail(email);
      if (account === null) {
        try {
          account = await accounts.create({ email, passwordHash: null, plan: plans.newAccounts });
        } catch (error) {
          // Made by a request at the same moment: use it.
          account = await accounts.byEmail(email);
          if (account === null) throw error;
        }
      }
      if (account.disabledAt !== null) return sendPage(reply, 403, logInPage(base(reply, null), { providers: providers(), error: 'This account has been disabled by the operator of this server.' }));
      if (account.emailVerifiedAt === null) {
        // An unverified account with this address was made by someone who never proved it theirs: its password
        // and sessions are dropped, so that whoever chose them cannot use the account the owner now takes over.
        await accounts.setPasswordHash(account.id, null);
        await accounts.endSessions(account.id);
        account = await accounts.markVerified(account.id);
      }
      await signIn(request, account);
      return reply.redirect('/dashboard', 303);
    });
  }
}

function sendPage(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(body);
}

/** The fields of a form as strings: absent, repeated or odd values read as empty. */
function formFields(body: unknown): { email: string; password: string; token: string; label: string } {
  const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const text = (name: string) => (typeof fields[name] === 'string' ? (fields[name] as string) : '');
  return { email: text('email'), password: text('password'), token: text('token'), label: text('label') };
}

function linkToken(text: string): string | null {
  return LINK_TOKEN_PATTERN.test(text) ? text : null;
}

/** The normalised address, or null for text that is not one (the forms say so next to the field). */
function emailOrNull(text: string): string | null {
  try {
    const email = normaliseEmail(text);
    // Forms take what a person types: one @, a dot in the domain, nothing a mail header would choke on.
    return /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+\.[^\s@<>()[\]\\,;:"]+$/.test(email) ? email : null;
  } catch {
    return null;
  }
}

/** A key's label: trimmed, control characters dropped, at most LABEL_MAX characters; null when empty. */
function cleanLabel(text: string): string | null {
  const cleaned = [...text.replace(/\p{Cc}/gu, '').trim()].slice(0, LABEL_MAX).join('');
  return cleaned === '' ? null : cleaned;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
