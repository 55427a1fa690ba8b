import { canonicalEmailOrNull } from '../../accounts/email-address.js';
import { LINK_TOKEN_PATTERN } from '../../accounts/link-tokens.js';
import { hashPassword, passwordProblem } from '../../accounts/passwords.js';
import { checkMailPage, confirmLinkPage, forgotPage, linkNotValidPage } from '../pages.js';
import { capitalise, formFields, sendPage, type PagesContext } from '../pages-context.js';
import { isThrottled } from '../throttles.js';
import { linkPage } from './link-page.js';

/** A forgotten password: a reset link by mail, its page, and the new password, which ends every session. */
export function resetFlow(context: PagesContext): void {
  const { pages, deps, throttles, protect, base, signedIn, throttledPage, hashing, mailChecks, client } = context;
  const { accounts } = deps;

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

  linkPage(context, 'reset', 'reset-password');

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
}
