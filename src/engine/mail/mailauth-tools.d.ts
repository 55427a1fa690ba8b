/**
 * The one function netintel takes from mailauth's tools (mailauth 4 ships
 * no types for it): DMARC's relaxed alignment of two domains, which needs
 * the public suffix list (mailauth reads it with tldts).
 */
declare module 'mailauth/lib/tools.js' {
  /** The first of `domains` aligned with `fromDomain` (same organisational domain, or the same domain when `strict`), or false. */
  export function getAlignment(fromDomain: string, domains: string[], strict?: boolean): { domain: string } | false;
}
