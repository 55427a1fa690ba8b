/**
 * Identifier alignment by the public suffix list: the Organizational Domain
 * of RFC 7489 §3.2, the registrable domain under the list's ICANN and
 * private sections (tldts's copy of the list), as mailauth aligns. It
 * serves what is decided without asking DNS: dmarc-report's per-result
 * alignment and the hop into the receiving organisation in `headers`.
 * DMARC checks that do ask DNS walk the tree of RFC 9989 instead
 * (dmarc-discovery.ts).
 */
import { getDomain } from 'tldts';
import { normaliseDomain } from '../dns/dns-name.js';

/** A domain as alignment compares it: A-labels in lower case, no trailing dot. A name that is not a valid domain is compared as written, in lower case. */
function comparable(domain: string): string {
  const written = domain.trim().toLowerCase().replace(/\.+$/, '');
  if (written === '') return '';
  try {
    return normaliseDomain(written).ascii.toLowerCase();
  } catch {
    return written;
  }
}

/** The registrable domain of a comparable name on the list, or the name itself. */
function listedDomain(name: string): string {
  return getDomain(name, { allowPrivateDomains: true }) ?? name;
}

/** The Organizational Domain of `domain` (RFC 7489 §3.2), or the domain itself when the list gives none (a public suffix, a single label, an invalid name). */
export function organisationalDomain(domain: string): string {
  return listedDomain(comparable(domain));
}

/**
 * Identifier alignment (RFC 7489 §3.1.1, §3.1.2): in strict mode the two
 * domains must be the same, in relaxed mode of the same Organizational
 * Domain. An empty domain aligns with nothing.
 */
export function domainsAligned(fromDomain: string, domain: string, strict: boolean): boolean {
  const from = comparable(fromDomain);
  const other = comparable(domain);
  if (from === '' || other === '') return false;
  if (from === other) return true;
  return !strict && listedDomain(from) === listedDomain(other);
}
