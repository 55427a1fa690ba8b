import { LINK_TOKEN_PATTERN } from '../../accounts/link-tokens.js';
import { linkNotValidPage } from '../pages.js';
import { formFields, sendPage, type PagesContext } from '../pages-context.js';
import { isThrottled } from '../throttles.js';
import { linkPage } from './link-page.js';

/** Verifying the address: the mailed link's page, its confirmation, and a new link for a signed-in account not verified yet. */
export function verifyFlow(context: PagesContext): void {
  const { pages, deps, throttles, protect, base, signedIn, throttledPage, mailChecks } = context;
  const { accounts } = deps;

  linkPage(context, 'verify', 'verify-email');

  pages.post('/verify', protect, async (request, reply) => {
    const token = formFields(request.body).token;
    const current = await signedIn(request);
    // The link is spent and the address verified together: a crash between the two would spend the link for nothing.
    const id = !LINK_TOKEN_PATTERN.test(token)
      ? null
      : await accounts.atomically(async (tx) => {
          const holder = await tx.consumeLink(token, 'verify-email');
          if (holder !== null) await tx.markVerified(holder);
          return holder;
        });
    if (id === null) return sendPage(reply, 400, linkNotValidPage(base(reply, current), 'verify'));
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
    if (account.email_verified_at === null) {
      const reservation = await throttles.reserve(mailChecks(request, account.email, account));
      if (isThrottled(reservation)) return throttledPage(reply, reservation, account);
      await accounts.queueMail('verify-email', account.id, account.email);
      deps.mail.wake();
      request.session.set('flash', `We sent a new link to ${account.email}. Only the newest link works.`);
    }
    return reply.redirect('/dashboard', 303);
  });
}
