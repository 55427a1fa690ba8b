import type { FastifyReply, FastifyRequest } from 'fastify';
import { canonicalEmailOrNull } from '../../accounts/email-address.js';
import { hashPassword, passwordProblem, verifyPassword } from '../../accounts/passwords.js';
import { planOfKey } from '../../keys/plans.js';
import { NetintelError } from '../../errors.js';
import type { AccountRecord } from '../../store/account-store.js';
import { dashboardPage, deleteAccountPage, messagePage, type KeyRow } from '../pages.js';
import { capitalise, formFields, sendPage, type PagesContext } from '../pages-context.js';
import { isThrottled } from '../throttles.js';

/** Active keys an account may hold at once. */
const MAX_KEYS_PER_ACCOUNT = 20;
const LABEL_MAX = 64;

/** What the dashboard shows besides the account's keys: a key just made, a notice, an error of a form. */
interface DashboardExtra {
  newKey?: { key: string; label: string | null };
  notice?: string;
  error?: string;
  passwordError?: string;
}

type DrawDashboard = (request: FastifyRequest, reply: FastifyReply, account: AccountRecord, extra: DashboardExtra, status?: number) => Promise<FastifyReply>;

/** The signed-in account's own pages: the dashboard with its keys, a new password, and deleting the account. */
export function dashboardFlow(context: PagesContext): void {
  const { accounts, keys, plans } = context.deps;
  const now = context.deps.now ?? Date.now;
  const dashboard: DrawDashboard = async (_request, reply, account, extra, status = 200) => {
    const records = await accounts.keysOf(account.id);
    const usage = await keys.usage(records.map((record) => record.id), new Date(now()));
    const rows: KeyRow[] = records.map((record) => ({
      record,
      today: usage.get(record.id)?.today ?? 0,
      month: usage.get(record.id)?.month ?? 0,
    }));
    const plan = planOfKey(plans, account.plan, null);
    const sessions = await accounts.sessionCount(account.id);
    return sendPage(reply, status, dashboardPage(context.base(reply, account), { account, plan, keys: rows, sessions, publicUrl: context.deps.publicUrl(), ...extra }));
  };
  keyRoutes(context, dashboard);
  passwordRoute(context, dashboard);
  deleteRoutes(context);
}

/** The dashboard, and making and revoking keys on it. */
function keyRoutes(context: PagesContext, dashboard: DrawDashboard): void {
  const { pages, protect, signedIn } = context;
  const { accounts, keys } = context.deps;

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
    if (account.email_verified_at === null) return dashboard(request, reply, account, { error: 'Verify your e-mail address first: keys are made only for verified addresses.' }, 403);
    const label = cleanLabel(formFields(request.body).label);
    let created;
    try {
      created = await keys.create({ plan: account.plan, label, accountId: account.id, maxActiveOfAccount: MAX_KEYS_PER_ACCOUNT });
    } catch (error) {
      // Counted in the transaction that adds the key, so requests at once on several servers make no more.
      if (error instanceof NetintelError && error.code === 'forbidden') {
        return dashboard(request, reply, account, { error: `An account holds at most ${MAX_KEYS_PER_ACCOUNT} active keys. Revoke one you no longer use first.` }, 409);
      }
      throw error;
    }
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
}

/** A new password from the dashboard: the current one is checked as a sign-in is, and every other session ends. */
function passwordRoute(context: PagesContext, dashboard: DrawDashboard): void {
  const { pages, throttles, protect, signedIn, throttledPage, hashing, passwordChecks } = context;
  const { accounts } = context.deps;

  pages.post('/account/password', protect, async (request, reply) => {
    const account = await signedIn(request);
    if (account === null) return reply.redirect('/login', 303);
    const body = formFields(request.body);
    const stored = await accounts.passwordHash(account.id);
    const problem = passwordProblem(body.password);
    if (stored === null) return dashboard(request, reply, account, { passwordError: 'This account has no password: set one with a link from the forgotten-password page.' }, 400);
    if (problem !== null) return dashboard(request, reply, account, { passwordError: `${capitalise(problem)}.` }, 400);
    // The current password is a sign-in attempt: a stolen session cannot guess it faster than the log-in form allows.
    const reservation = await throttles.reserve(passwordChecks(request, account.email, account));
    if (isThrottled(reservation)) return throttledPage(reply, reservation, account);
    const outcome = await hashing(request, reservation, async () => ((await verifyPassword(body.current, stored)) ? { hashed: await hashPassword(body.password) } : 'wrong'));
    if (outcome === null) return throttledPage(reply, null, account);
    if (outcome === 'wrong') return dashboard(request, reply, account, { passwordError: 'That is not the current password of this account.' }, 403);
    const { hashed } = outcome;
    await reservation.refund();
    // A change ends every unused link, the owner's reset links too: changes are counted so that a stolen session cannot keep doing it.
    const change = await throttles.reserve([['passwordChangesByAccount', account.id]]);
    if (isThrottled(change)) {
      reply.header('retry-after', change.retryAfterSeconds);
      const minutes = Math.ceil(change.retryAfterSeconds / 60);
      return dashboard(request, reply, account, { passwordError: `The password of this account was changed several times lately. Wait ${minutes === 1 ? 'a minute' : `${minutes} minutes`} and try again.` }, 429);
    }
    const sid = request.session.get('sid')!;
    const ended = await accounts.changePassword(account.id, { keep: sid, whilePasswordIs: stored, hash: hashed });
    if (ended === null) {
      await change.refund();
      request.log.info({ account: account.id }, 'password change refused: the password or the session changed meanwhile');
      const still = await signedIn(request);
      if (still === null) return reply.redirect('/login', 303);
      return dashboard(request, reply, still, { passwordError: 'The password was changed meanwhile (by another request, or with a reset link), so this change was not made. Enter the password as it is now to change it.' }, 409);
    }
    request.log.info({ account: account.id, sessions: ended }, 'password changed by its holder');
    request.session.set('flash', `Your password is changed. ${ended === 0 ? 'No other session was open.' : `${ended} other ${ended === 1 ? 'session is' : 'sessions are'} logged out.`}`);
    return reply.redirect('/dashboard', 303);
  });
}

/** Deleting the account, confirmed by its password (or its address, for an account without one). */
function deleteRoutes(context: PagesContext): void {
  const { pages, throttles, protect, base, signedIn, throttledPage, hashing, passwordChecks, deviceCookie } = context;
  const { accounts } = context.deps;

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
    if (account.has_password) {
      const reservation = await throttles.reserve(passwordChecks(request, account.email, account));
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
      return sendPage(reply, 403, deleteAccountPage(base(reply, account), { account, error: account.has_password ? 'That is not the password of this account.' : 'That is not the address of this account.' }));
    }
    try {
      await accounts.delete(account.id);
      request.log.info({ account: account.id }, 'account deleted by its holder');
    } catch (error) {
      // The form sent twice at once: the other request deleted it, which is what this one asked for.
      if (!(error instanceof NetintelError && error.code === 'not_found')) throw error;
    }
    request.session.delete();
    reply.clearCookie(deviceCookie, { path: '/' });
    return sendPage(reply, 200, messagePage({ csrf: '', signedIn: null }, { title: 'Account deleted', text: 'The account and its keys are deleted.', next: { href: '/signup', label: 'Sign up again' } }));
  });
}

/** A key's label: trimmed, control characters dropped, at most LABEL_MAX characters; null when empty. */
function cleanLabel(text: string): string | null {
  const cleaned = [...text.replace(/[\p{Cc}\p{Cf}]/gu, '').trim()].slice(0, LABEL_MAX).join('');
  return cleaned === '' ? null : cleaned;
}
