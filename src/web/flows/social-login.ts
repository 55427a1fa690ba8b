import { NetintelError } from '../../errors.js';
import type { OidcIdentity, OidcLogin } from '../oidc.js';
import { linkableEmail } from '../oidc.js';
import { logInPage, messagePage } from '../pages.js';
import { sendPage, type PagesContext } from '../pages-context.js';

/**
 * Logging in with an OpenID Connect provider (oidc.ts): the redirect to the
 * provider, and its callback, which signs in the account of the address the
 * provider verified (made when there is none).
 */
export function socialLoginFlow(context: PagesContext, social: OidcLogin): void {
  const { pages, deps, base, providers, signIn } = context;
  const { accounts, plans } = deps;
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
      if (found === null || found.disabled_at !== null || found.email_verified_at !== null) return found;
      // An unverified account with this address was made by someone who never proved it theirs: its password
      // and sessions are dropped, so that whoever chose them cannot use the account the owner now takes over.
      await tx.setPasswordHash(found.id, null);
      await tx.endSessions(found.id);
      return tx.markVerified(found.id);
    });
    if (account === null) return failed('Sign-in did not complete. Try again.');
    if (account.disabled_at !== null) return sendPage(reply, 403, logInPage(base(reply, null), { providers: providers(), error: 'This account has been disabled by the operator of this server.' }));
    await signIn(request, reply, account);
    return reply.redirect('/dashboard', 303);
  });
}
