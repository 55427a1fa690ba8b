import { canonicalEmailOrNull } from '../../accounts/email-address.js';
import { dummyVerify, verifyPassword } from '../../accounts/passwords.js';
import { logInPage } from '../pages.js';
import { formFields, sendPage, type PagesContext } from '../pages-context.js';
import { isThrottled } from '../throttles.js';

/** Logging in with a password (a session and a device cookie), and logging out here or everywhere. */
export function logInFlow(context: PagesContext): void {
  const { pages, deps, throttles, protect, base, providers, signedIn, signIn, passwordChecks, throttledPage, hashing } = context;
  const { accounts } = deps;

  pages.get('/', async (request, reply) => reply.redirect((await signedIn(request)) ? '/dashboard' : '/login', 303));

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
    // Taken before the password is checked: of any burst, only as many passwords are checked as the throttles allow.
    const reservation = await throttles.reserve(passwordChecks(request, email, account));
    if (isThrottled(reservation)) return throttledPage(reply, reservation, null);
    const stored = account === null ? null : await accounts.passwordHash(account.id);
    // An address without an account (or without a password) costs what a wrong password does.
    const matches = await hashing(request, reservation, () => (stored === null ? dummyVerify(body.password) : verifyPassword(body.password, stored)));
    if (matches === null) return throttledPage(reply, null, null);
    const wrong = () => sendPage(reply, 401, logInPage(base(reply, null), { providers: providers(), email: body.email.trim(), error: 'Wrong e-mail address or password.' }));
    if (!matches || account === null || stored === null) return wrong();
    if (account.disabled_at !== null) {
      await reservation.refund();
      return sendPage(reply, 403, logInPage(base(reply, null), { providers: providers(), error: 'This account has been disabled by the operator of this server.' }));
    }
    // Changed or reset while it was being checked, the password checked is no longer the account's: a wrong one.
    if (!(await signIn(request, reply, account, stored))) return wrong();
    // The right password: the attempt is given back, so the owner's own sign-ins never use up a throttle.
    await reservation.refund();
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
}
