import { canonicalEmailOrNull } from '../../accounts/email-address.js';
import { hashPassword, passwordProblem } from '../../accounts/passwords.js';
import { checkMailPage, signUpPage } from '../pages.js';
import { capitalise, formFields, sendPage, type PagesContext } from '../pages-context.js';
import { isThrottled } from '../throttles.js';

/** Sign-up by e-mail: the form, then an account and a verification message, or a message to the holder of an address already registered. */
export function signUpFlow(context: PagesContext): void {
  const { pages, deps, throttles, protect, base, providers, signedIn, throttledPage, hashing, mailChecks, client } = context;
  const { accounts, plans } = deps;

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
}
