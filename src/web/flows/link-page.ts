import { LINK_TOKEN_PATTERN, type LinkPurpose } from '../../accounts/link-tokens.js';
import { confirmLinkPage, linkNotValidPage } from '../pages.js';
import { sendPage, type PagesContext } from '../pages-context.js';

/** The page a mailed link opens: its form when the link still works, else why not (before anything is typed). */
export function linkPage(context: PagesContext, what: 'verify' | 'reset', purpose: LinkPurpose): void {
  const { pages, deps, base, signedIn } = context;
  pages.get<{ Params: { token: string } }>(`/${what}/:token`, async (request, reply) => {
    const token = linkToken(request.params.token);
    const account = await signedIn(request);
    const holder = token === null ? null : await deps.accounts.linkHolder(token, purpose);
    if (token === null || holder === null) return sendPage(reply, 400, linkNotValidPage(base(reply, account), what));
    return sendPage(reply, 200, confirmLinkPage(base(reply, account), { token, what, email: holder.email }));
  });
}

function linkToken(text: string): string | null {
  return LINK_TOKEN_PATTERN.test(text) ? text : null;
}
