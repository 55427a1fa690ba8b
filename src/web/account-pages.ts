import csrfProtection from '@fastify/csrf-protection';
import formBody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import secureSession from '@fastify/secure-session';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { canonicalEmailOrNull } from '../accounts/email-address.js';
import { LINK_TOKEN_PATTERN, type LinkPurpose } from '../accounts/link-tokens.js';
import { dummyVerify, hashPassword, passwordProblem, verifyPassword } from '../accounts/passwords.js';
import { NetintelError } from '../errors.js';
import { effectivePlan, type PlanTable } from '../keys/plans.js';
import type { LimitStore } from '../server/limits/limit-store.js';
import type { AccountRecord, AccountStore } from '../store/account-store.js';
import type { KeyStore } from '../store/key-store.js';
import { DASHBOARD_SCRIPT, STYLESHEET } from './assets.js';
import { DEVICE_COOKIE_SECONDS, DeviceCookies, type Device } from './device-cookie.js';
import { GATE_FULL, HashGate } from './hash-gate.js';
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
import { FormThrottles, isThrottled, type Reservation, type ThrottleCheck, type Throttled } from './throttles.js';

declare module '@fastify/secure-session' {
  interface SessionData {
    /** The signed-in session's id: the database holds its hash (AccountStore.startSession). */
    sid: string;
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

/** How long a sign-in lasts. */
const SESSION_SECONDS = 7 * 24 * 3600;
/** Active keys an account may hold at once. */
const MAX_KEYS_PER_ACCOUNT = 20;
const FORM_BODY_LIMIT = 16 * 1024;
const LABEL_MAX = 64;

/**
 * The self-service pages of SPEC.md, Authentication 4: sign up (by e-mail
 * or a social login), verify the address, sign in and out, a forgotten or
 * changed password, and the dashboard where an account makes and revokes
 * its keys. Server-rendered HTML, no script needed (one adds copy buttons).
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
export function registerAccountPages(app: FastifyInstance, deps: AccountPagesDeps): void {
  // Registered in a context of their own: the form parser, session, CSRF and headers apply to these pages only.
  void app.register(async (pages) => accountPages(pages, deps));
}

async function accountPages(pages: FastifyInstance, deps: AccountPagesDeps): Promise<void> {
  const { accounts, keys, plans, social, https } = deps;
  const now = deps.now ?? Date.now;
  const throttles = new FormThrottles(deps.limits, now);
  const gate = deps.hashGate ?? new HashGate();
  const devices = new DeviceCookies(deps.sessionKey);
  const deviceCookie = https ? '__Host-netintel-device' : 'netintel-device';

  // Forms are application/x-www-form-urlencoded, and nothing else: the API's JSON and text parsers do not apply here (415).
  pages.removeAllContentTypeParsers();
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
    // The account database or the throttles' store (Redis) did not answer in time: a moment later they may.
    if (error instanceof NetintelError && (error.code === 'data_unavailable' || error.code === 'unreachable' || error.code === 'timeout')) {
      request.log.error({ err: error }, 'account page failed: a store did not answer');
      reply.header('retry-after', 30);
      return sendPage(reply, 503, messagePage(base, { title: 'Try again shortly', kind: 'error', text: 'The account service cannot answer just now. Try again in a minute.' }));
    }
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return sendPage(reply, status, messagePage(base, { title: 'That did not work', kind: 'error', text: 'The request could not be read. Go back and send the form again.', next: { href: '/', label: 'Start again' } }));
    }
    request.log.error({ err: error, path: request.url.split('?')[0] }, 'account page failed');
    return sendPage(reply, 500, messagePage(base, { title: 'Something went wrong', kind: 'error', text: 'The page failed; the server logged why. Try again in a minute.' }));
  });

  const client = (request: FastifyRequest) => request.netintel.client;

  /** The signed-in account, or null; a session that no longer holds (ended, expired, account deleted or disabled) is cleared. */
  const signedIn = async (request: FastifyRequest): Promise<AccountRecord | null> => {
    const sid = request.session.get('sid');
    if (typeof sid !== 'string') return null;
    const account = await accounts.sessionAccount(sid);
    if (account === null) request.session.set('sid', undefined);
    return account;
  };

  const signIn = async (request: FastifyRequest, reply: FastifyReply, account: AccountRecord): Promise<void> => {
    // A new session at sign-in, so one planted before it (session fixation) holds nothing afterwards.
    request.session.regenerate();
    request.session.set('sid', await accounts.startSession(account.id, SESSION_SECONDS * 1000));
    // This browser is now one the account knows: failures elsewhere do not block it (throttles.ts).
    reply.setCookie(deviceCookie, devices.issue(account.id), { path: '/', httpOnly: true, sameSite: 'lax', secure: https, maxAge: DEVICE_COOKIE_SECONDS });
  };

  /** The device cookie of the browser, when it names `account`. */
  const knownDevice = (request: FastifyRequest, account: AccountRecord | null): Device | null => {
    const device = devices.read(request.cookies[deviceCookie]);
    return device !== null && account !== null && device.accountId === account.id ? device : null;
  };

  /** The throttles of a message to `email` caused by this request. */
  const mailChecks = (request: FastifyRequest, email: string, account: AccountRecord | null): ThrottleCheck[] => {
    const device = knownDevice(request, account);
    return [['mailByAddressAndClient', `${email} ${client(request)}`], device ? ['mailByDevice', device.id] : ['mailByAddress', email]];
  };

  /** Hashing in its turn (hash-gate.ts); null when too much is waiting, after giving back what the request reserved. */
  const hashing = async <T>(request: FastifyRequest, reservation: Reservation, work: () => Promise<T>): Promise<T | null> => {
    const result = await gate.run(client(request), work);
    if (result !== GATE_FULL) return result;
    await reservation.refund();
    return null;
  };

  const base = (reply: FastifyReply, account: AccountRecord | null) => ({ csrf: reply.generateCsrf(), signedIn: account?.email ?? null });
  const providers = (): Provider[] => social?.providers() ?? [];

  const throttledPage = (reply: FastifyReply, throttled: Throttled | null, account: AccountRecord | null) => {
    const seconds = throttled?.retryAfterSeconds ?? 1;
    const minutes = Math.ceil(seconds / 60);
    reply.header('retry-after', seconds);
    const mail = throttled !== null && throttled.by.startsWith('mail');
    return sendPage(reply, 429, messagePage(base(reply, account), {
      title: 'Too many attempts',
      kind: 'error',
      text:
        throttled === null
          ? 'Too many attempts at once. Wait a moment and try again.'
          : mail
            ? `We have sent several messages to this address lately. Use the newest one in your mailbox (only its link works), or wait ${minutes === 1 ? 'a minute' : `${minutes} minutes`} and try again.`
            : `Too many attempts for now. Wait ${minutes === 1 ? 'a minute' : `${minutes} minutes`} and try again.`,
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
    const email = canonicalEmailOrNull(typed);
    const problem = passwordProblem(body.password);
    if (email === null || problem !== null) {
      return sendPage(reply, 400, signUpPage(base(reply, null), {
        providers: providers(),
        email: typed,
        errors: {
          ...(email === null ? { email: 'Enter an e-mail address such as name@example.com, without spaces or invisible characters.' } : {}),
          ...(problem !== null ? { password: `${capitalise(problem)}.` } : {}),
        },
      }));
    }
    const existing = await accounts.byEmail(email);
    const reservation = await throttles.reserve([['signUpsByClient', client(request)], ...mailChecks(request, email, existing)]);
    if (isThrottled(reservation)) return throttledPage(reply, reservation, null);
    // Both paths hash the password and write one message to send, so the answer does not tell whether the address had an account.
    const passwordHash = await hashing(request, reservation, () => hashPassword(body.password));
    if (passwordHash === null) return throttledPage(reply, null, null);
    await accounts.atomically(async (tx) => {
      const account = await tx.createIfAbsent({ email, passwordHash, plan: plans.newAccounts });
      if (account !== null) await tx.queueMail('verify-email', account.id, account.email);
      else {
        const holder = await tx.byEmail(email);
        await tx.queueMail('already-registered', holder?.id ?? null, email);
      }
    });
    deps.mail.wake();
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
    const email = canonicalEmailOrNull(body.email);
    const account = email === null ? null : await accounts.byEmail(email);
    const device = knownDevice(request, account);
    // Taken before the password is checked: of any burst, only as many passwords are checked as the throttles allow.
    const checks: ThrottleCheck[] = device
      ? [['signInByDevice', device.id]]
      : [['signInByClient', client(request)], ...(email === null ? [] : ([['signInByAddressAndClient', `${email} ${client(request)}`], ['signInByAddress', email]] as const))];
    const reservation = await throttles.reserve(checks);
    if (isThrottled(reservation)) return throttledPage(reply, reservation, null);
    const stored = account === null ? null : await accounts.passwordHash(account.id);
    // An address without an account (or without a password) costs what a wrong password does.
    const matches = await hashing(request, reservation, () => (stored === null ? dummyVerify(body.password) : verifyPassword(body.password, stored)));
    if (matches === null) return throttledPage(reply, null, null);
    if (!matches || account === null) {
      return sendPage(reply, 401, logInPage(base(reply, null), { providers: providers(), email: body.email.trim(), error: 'Wrong e-mail address or password.' }));
    }
    // The right password: the attempt is given back, so the owner's own sign-ins never use up a throttle.
    await reservation.refund();
    if (account.disabledAt !== null) {
      return sendPage(reply, 403, logInPage(base(reply, null), { providers: providers(), error: 'This account has been disabled by the operator of this server.' }));
    }
    await signIn(request, reply, account);
    return reply.redirect('/dashboard', 303);
  });

  pages.post('/logout', protect, async (request, reply) => {
    const sid = request.session.get('sid');
    if (typeof sid === 'string') await accounts.endSession(sid);
    request.session.delete();
    return reply.redirect('/login', 303);
  });

  pages.post('/logout/everywhere', protect, async (request, reply) => {
    const account = await signedIn(request);
    if (account === null) return reply.redirect('/login', 303);
    const ended = await accounts.endSessions(account.id);
    request.log.info({ account: account.id, sessions: ended }, 'every session of the account ended by its holder');
    // A fresh session (the old one is ended with everything in it) carries the notice.
    request.session.regenerate();
    request.session.set('flash', `You are logged out everywhere (${ended} ${ended === 1 ? 'session' : 'sessions'}).`);
    return reply.redirect('/login', 303);
  });

  /** The page a mailed link opens: its form when the link still works, else why not (before anything is typed). */
  const linkPage = (what: 'verify' | 'reset', purpose: LinkPurpose) =>
    pages.get<{ Params: { token: string } }>(`/${what}/:token`, async (request, reply) => {
      const token = linkToken(request.params.token);
      const account = await signedIn(request);
      const holder = token === null ? null : await accounts.linkHolder(token, purpose);
      if (token === null || holder === null) return sendPage(reply, 400, linkNotValidPage(base(reply, account), what));
      return sendPage(reply, 200, confirmLinkPage(base(reply, account), { token, what, email: holder.email }));
    });

  linkPage('verify', 'verify-email');

  pages.post('/verify', protect, async (request, reply) => {
    const token = formFields(request.body).token;
    const current = await signedIn(request);
    const id = LINK_TOKEN_PATTERN.test(token) ? await accounts.consumeLink(token, 'verify-email') : null;
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
      const reservation = await throttles.reserve(mailChecks(request, account.email, account));
      if (isThrottled(reservation)) return throttledPage(reply, reservation, account);
      await accounts.queueMail('verify-email', account.id, account.email);
      deps.mail.wake();
      request.session.set('flash', `We sent a new link to ${account.email}. Only the newest link works.`);
    }
    return reply.redirect('/dashboard', 303);
  });

  pages.get('/forgot', async (request, reply) => sendPage(reply, 200, forgotPage(base(reply, await signedIn(request)))));

  pages.post('/forgot', protect, async (request, reply) => {
    const typed = formFields(request.body).email.trim();
    const email = canonicalEmailOrNull(typed);
    const current = await signedIn(request);
    if (email === null) return sendPage(reply, 400, forgotPage(base(reply, current), { email: typed, error: 'Enter the e-mail address of your account.' }));
    const reservation = await throttles.reserve([['resetsByClient', client(request)], ...mailChecks(request, email, await accounts.byEmail(email))]);
    if (isThrottled(reservation)) return throttledPage(reply, reservation, current);
    // Queued for any address alike (one write either way): whether it has an account is looked up when the message is made.
    await accounts.queueMail('reset-password', null, email);
    deps.mail.wake();
    return sendPage(reply, 200, checkMailPage(base(reply, current), { email, what: 'reset' }));
  });

  linkPage('reset', 'reset-password');

  pages.post('/reset', protect, async (request, reply) => {
    const body = formFields(request.body);
    const current = await signedIn(request);
    if (!LINK_TOKEN_PATTERN.test(body.token)) return sendPage(reply, 400, linkNotValidPage(base(reply, current), 'reset'));
    // The password is checked before the link is used, so a refused password does not spend it.
    const problem = passwordProblem(body.password);
    const holder = await accounts.linkHolder(body.token, 'reset-password');
    if (holder === null) return sendPage(reply, 400, linkNotValidPage(base(reply, current), 'reset'));
    if (problem !== null) {
      return sendPage(reply, 400, confirmLinkPage(base(reply, current), { token: body.token, what: 'reset', email: holder.email, error: `${capitalise(problem)}.` }));
    }
    const reservation = await throttles.reserve([['resetsByClient', client(request)]]);
    if (isThrottled(reservation)) return throttledPage(reply, reservation, current);
    const passwordHash = await hashing(request, reservation, () => hashPassword(body.password));
    if (passwordHash === null) return throttledPage(reply, null, current);
    const changed = await accounts.atomically(async (tx) => {
      const id = await tx.consumeLink(body.token, 'reset-password');
      if (id === null) return false;
      // Setting the password ends every other link; the link came by mail, so the address is the holder's.
      await tx.setPasswordHash(id, passwordHash);
      await tx.markVerified(id);
      await tx.endSessions(id);
      return true;
    });
    if (!changed) return sendPage(reply, 400, linkNotValidPage(base(reply, current), 'reset'));
    // A fresh session (not a deleted one, whose cookie is cleared with everything in it) carries the notice.
    request.session.regenerate();
    request.session.set('flash', 'Your password is changed, and every session is logged out. Log in with the new password.');
    return reply.redirect('/login', 303);
  });

  const dashboard = async (
    request: FastifyRequest,
    reply: FastifyReply,
    account: AccountRecord,
    extra: { newKey?: { key: string; label: string | null }; notice?: string; error?: string; passwordError?: string },
    status = 200,
  ) => {
    const records = await accounts.keysOf(account.id);
    const usage = await keys.usage(records.map((record) => record.id), new Date(now()));
    const rows: KeyRow[] = records.map((record) => ({
      record,
      today: usage.get(record.id)?.today ?? 0,
      month: usage.get(record.id)?.month ?? 0,
    }));
    const plan = effectivePlan(plans, account.plan, null);
    const sessions = await accounts.sessionCount(account.id);
    return sendPage(reply, status, dashboardPage(base(reply, account), { account, plan, keys: rows, sessions, publicUrl: deps.publicUrl(), ...extra }));
  };

  pages.get('/dashboard', async (request, reply) => {
    const account = await signedIn(request);
    if (account === null) return reply.redirect('/login', 303);
    const flash = request.session.get('flash');
    if (flash) request.session.set('flash', undefined);
    return dashboard(request, reply, account, flash ? { notice: flash } : {});
  });

  pages.post('/dashboard/keys', protect, async (request, reply) => {
    const account = await signedIn(request);
    if (account === null) return reply.redirect('/login', 303);
    if (account.emailVerifiedAt === null) return dashboard(request, reply, account, { error: 'Verify your e-mail address first: keys are made only for verified addresses.' }, 403);
    const active = (await accounts.keysOf(account.id)).filter((record) => record.revokedAt === null);
    if (active.length >= MAX_KEYS_PER_ACCOUNT) {
      return dashboard(request, reply, account, { error: `An account holds at most ${MAX_KEYS_PER_ACCOUNT} active keys. Revoke one you no longer use first.` }, 409);
    }
    const label = cleanLabel(formFields(request.body).label);
    const created = await keys.create({ plan: account.plan, label, accountId: account.id });
    request.log.info({ account: account.id, key: created.record.id }, 'key made in the dashboard');
    return dashboard(request, reply, account, { newKey: { key: created.key, label } }, 201);
  });

  pages.post<{ Params: { id: string } }>('/dashboard/keys/:id/revoke', protect, async (request, reply) => {
    const account = await signedIn(request);
    if (account === null) return reply.redirect('/login', 303);
    const owned = (await accounts.keysOf(account.id)).find((record) => record.id === request.params.id);
    if (owned === undefined) return dashboard(request, reply, account, { error: 'No key of this account has that id.' }, 404);
    await keys.revoke(owned.id);
    request.log.info({ account: account.id, key: owned.id }, 'key revoked in the dashboard');
    request.session.set('flash', `Key ${owned.label ? `“${owned.label}” ` : ''}(${owned.id}) is revoked: requests with it are refused from now on.`);
    return reply.redirect('/dashboard', 303);
  });

  pages.post('/account/password', protect, async (request, reply) => {
    const account = await signedIn(request);
    if (account === null) return reply.redirect('/login', 303);
    const body = formFields(request.body);
    const stored = await accounts.passwordHash(account.id);
    const problem = passwordProblem(body.password);
    if (stored === null) return dashboard(request, reply, account, { passwordError: 'This account has no password: set one with a link from the forgotten-password page.' }, 400);
    if (problem !== null) return dashboard(request, reply, account, { passwordError: `${capitalise(problem)}.` }, 400);
    // The current password is a sign-in attempt: a stolen session cannot guess it faster than the log-in form allows.
    const reservation = await throttles.reserve([['signInByClient', client(request)], ['signInByAddress', account.email]]);
    if (isThrottled(reservation)) return throttledPage(reply, reservation, account);
    const outcome = await hashing(request, reservation, async () => ((await verifyPassword(body.current, stored)) ? { hashed: await hashPassword(body.password) } : 'wrong'));
    if (outcome === null) return throttledPage(reply, null, account);
    if (outcome === 'wrong') return dashboard(request, reply, account, { passwordError: 'That is not the current password of this account.' }, 403);
    const { hashed } = outcome;
    await reservation.refund();
    const sid = request.session.get('sid')!;
    const ended = await accounts.atomically(async (tx) => {
      // Setting it ends every unused link; every other session ends too.
      await tx.setPasswordHash(account.id, hashed);
      return tx.endSessions(account.id, sid);
    });
    request.log.info({ account: account.id, sessions: ended }, 'password changed by its holder');
    request.session.set('flash', `Your password is changed. ${ended === 0 ? 'No other session was open.' : `${ended} other ${ended === 1 ? 'session is' : 'sessions are'} logged out.`}`);
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
    let confirmed: boolean;
    if (account.hasPassword) {
      const reservation = await throttles.reserve([['signInByClient', client(request)], ['signInByAddress', account.email]]);
      if (isThrottled(reservation)) return throttledPage(reply, reservation, account);
      const stored = (await accounts.passwordHash(account.id)) ?? '';
      const matches = await hashing(request, reservation, () => verifyPassword(body.password, stored));
      if (matches === null) return throttledPage(reply, null, account);
      if (matches) await reservation.refund();
      confirmed = matches;
    } else {
      confirmed = canonicalEmailOrNull(body.email) === account.email;
    }
    if (!confirmed) {
      return sendPage(reply, 403, deleteAccountPage(base(reply, account), { account, error: account.hasPassword ? 'That is not the password of this account.' : 'That is not the address of this account.' }));
    }
    await accounts.delete(account.id);
    request.log.info({ account: account.id }, 'account deleted by its holder');
    request.session.delete();
    reply.clearCookie(deviceCookie, { path: '/' });
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
      if (email === null) return failed('That account has no verified e-mail address that can be used here. Verify the address with the provider, or sign up with your e-mail address.');
      const account = await accounts.atomically(async (tx) => {
        const found = (await tx.byEmail(email)) ?? (await tx.createIfAbsent({ email, passwordHash: null, plan: plans.newAccounts })) ?? (await tx.byEmail(email));
        if (found === null || found.disabledAt !== null || found.emailVerifiedAt !== null) return found;
        // An unverified account with this address was made by someone who never proved it theirs: its password
        // and sessions are dropped, so that whoever chose them cannot use the account the owner now takes over.
        await tx.setPasswordHash(found.id, null);
        await tx.endSessions(found.id);
        return tx.markVerified(found.id);
      });
      if (account === null) return failed('Sign-in did not complete. Try again.');
      if (account.disabledAt !== null) return sendPage(reply, 403, logInPage(base(reply, null), { providers: providers(), error: 'This account has been disabled by the operator of this server.' }));
      await signIn(request, reply, account);
      return reply.redirect('/dashboard', 303);
    });
  }
}

function sendPage(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(body);
}

/** The fields of a form as strings: absent, repeated or odd values read as empty. */
function formFields(body: unknown): { email: string; password: string; current: string; token: string; label: string } {
  const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const text = (name: string) => (typeof fields[name] === 'string' ? (fields[name] as string) : '');
  return { email: text('email'), password: text('password'), current: text('current'), token: text('token'), label: text('label') };
}

function linkToken(text: string): string | null {
  return LINK_TOKEN_PATTERN.test(text) ? text : null;
}

/** A key's label: trimmed, control characters dropped, at most LABEL_MAX characters; null when empty. */
function cleanLabel(text: string): string | null {
  const cleaned = [...text.replace(/[\p{Cc}\p{Cf}]/gu, '').trim()].slice(0, LABEL_MAX).join('');
  return cleaned === '' ? null : cleaned;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
