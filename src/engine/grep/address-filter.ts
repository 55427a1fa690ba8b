import { parseIpAddress } from '../ip/ip-address.js';
import { specialPurposeOf } from '../ip/special-ranges.js';
import type { AddressMatch } from './address-scanner.js';

export interface FilterOptions {
  /** Keep only these versions (by the text's form: `::ffff:1.2.3.4` is IPv6 text). */
  versions: ReadonlySet<4 | 6>;
  /** Drop addresses in the special-purpose blocks the lookups answer locally (special-ranges.ts). */
  excludeReserved: boolean;
  /** Keep the first occurrence of each address (compared in canonical form) only. */
  unique: boolean;
  /** Name the special-purpose block of every address kept (data formats). */
  classify: boolean;
}

/** A found address, canonical and classified. */
export interface FilteredMatch extends AddressMatch {
  /** RFC 5952 / dotted-quad form of the address (an IPv4-mapped address as IPv4), zone and length kept. */
  canonical: string;
  /** The special-purpose block the address is in (its RFC), or null. */
  reserved: string | null;
}

/**
 * The filter of a run: version, reserved ranges, first occurrences. Memory
 * for `unique` grows with the number of distinct addresses, not lines.
 */
export function createAddressFilter(options: FilterOptions): (match: AddressMatch) => FilteredMatch | null {
  const seen = options.unique ? new Set<string>() : null;
  return (match) => {
    if (!options.versions.has(match.version)) return null;
    const { address, suffix } = splitSuffix(match.text);
    const parsed = parseIpAddress(address);
    const reserved = options.excludeReserved || options.classify ? specialPurposeOf(parsed) : null;
    if (options.excludeReserved && reserved !== null) return null;
    const canonical = parsed.text + suffix;
    if (seen !== null) {
      if (seen.has(canonical)) return null;
      seen.add(canonical);
    }
    return { ...match, canonical, reserved };
  };
}

/** The address and what follows it (`%zone`, `/length`). */
function splitSuffix(text: string): { address: string; suffix: string } {
  let cut = text.length;
  const zone = text.indexOf('%');
  const slash = text.indexOf('/');
  if (zone !== -1) cut = zone;
  else if (slash !== -1) cut = slash;
  return { address: text.slice(0, cut), suffix: text.slice(cut) };
}
