import { parseIpAddress } from '../address/ip-address.js';
import { specialPurposeOf } from '../address/special-ranges.js';
import type { AddressMatch } from './address-scanner.js';

export interface FilterOptions {
  /** Keep only these versions (by the text's form: `::ffff:1.2.3.4` is IPv6 text). */
  versions: ReadonlySet<4 | 6>;
  /** Drop addresses in the special-purpose blocks the lookups answer locally (special-ranges.ts). */
  excludeReserved: boolean;
  /** Keep the first occurrence of each address (compared in canonical form) only. */
  unique: boolean;
}

/** What a found address is, for the data formats. */
export interface AddressFacts {
  /** RFC 5952 / dotted-quad form of the address (an IPv4-mapped address as IPv4), zone and length kept. */
  canonical: string;
  /** The special-purpose block the address is in (its RFC), or null. */
  reserved: string | null;
}

/**
 * The filter of a run: version, reserved ranges, first occurrences. A run
 * that filters by version alone parses nothing more (the scanner has
 * validated every match). Memory for `unique` grows with the number of
 * distinct addresses, not with the input.
 */
export function createAddressFilter(options: FilterOptions): (match: AddressMatch) => boolean {
  const { versions, excludeReserved } = options;
  const seen = options.unique ? new Set<string>() : null;
  if (!excludeReserved && seen === null) return (match) => versions.has(match.version);
  return (match) => {
    if (!versions.has(match.version)) return false;
    const { address, suffix } = splitSuffix(match.text);
    const parsed = parseIpAddress(address);
    if (excludeReserved && specialPurposeOf(parsed) !== null) return false;
    if (seen === null) return true;
    const canonical = parsed.text + suffix;
    if (seen.has(canonical)) return false;
    seen.add(canonical);
    return true;
  };
}

/** The canonical form and special-purpose block of a found address. */
export function addressFacts(match: AddressMatch): AddressFacts {
  const { address, suffix } = splitSuffix(match.text);
  const parsed = parseIpAddress(address);
  return { canonical: parsed.text + suffix, reserved: specialPurposeOf(parsed) };
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
