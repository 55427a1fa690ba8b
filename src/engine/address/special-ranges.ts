import { v4Bytes, type IpAddress } from './ip-address.js';
import { parseIpv4Fast, parseIpv6Text } from './ip-text.js';

/**
 * Special-purpose address blocks (IANA IPv4/IPv6 Special-Purpose Address
 * Registries, RFC 6890 and the RFCs each entry cites). An address in one of
 * them is answered locally with what it is: it has no location or owner on
 * the public Internet, and "not found" would be the wrong answer.
 *
 * Globally routed special blocks (6to4, Teredo, AS112, anycast relays that
 * are live) are deliberately absent: they have real owners.
 */
const SPECIAL_RANGES: ReadonlyArray<readonly [cidr: string, label: string]> = [
  ['0.0.0.0/8', '"this network" (RFC 791)'],
  ['10.0.0.0/8', 'private (RFC 1918)'],
  ['100.64.0.0/10', 'shared address space, carrier-grade NAT (RFC 6598)'],
  ['127.0.0.0/8', 'loopback (RFC 1122)'],
  ['169.254.0.0/16', 'link-local (RFC 3927)'],
  ['172.16.0.0/12', 'private (RFC 1918)'],
  ['192.0.0.0/24', 'IETF protocol assignments (RFC 6890)'],
  ['192.0.2.0/24', 'documentation, TEST-NET-1 (RFC 5737)'],
  ['192.88.99.0/24', 'deprecated 6to4 relay anycast (RFC 7526)'],
  ['192.168.0.0/16', 'private (RFC 1918)'],
  ['198.18.0.0/15', 'benchmarking (RFC 2544)'],
  ['198.51.100.0/24', 'documentation, TEST-NET-2 (RFC 5737)'],
  ['203.0.113.0/24', 'documentation, TEST-NET-3 (RFC 5737)'],
  ['224.0.0.0/4', 'multicast (RFC 5771)'],
  ['255.255.255.255/32', 'limited broadcast (RFC 919)'],
  ['240.0.0.0/4', 'reserved for future use (RFC 1112)'],
  ['::/128', 'unspecified (RFC 4291)'],
  ['::1/128', 'loopback (RFC 4291)'],
  ['64:ff9b::/96', 'NAT64 well-known prefix (RFC 6052)'],
  ['64:ff9b:1::/48', 'NAT64 local-use prefix (RFC 8215)'],
  ['100::/64', 'discard-only (RFC 6666)'],
  ['2001:2::/48', 'benchmarking (RFC 5180)'],
  ['2001:10::/28', 'deprecated ORCHID (RFC 4843)'],
  ['2001:20::/28', 'ORCHIDv2 (RFC 7343)'],
  ['2001:db8::/32', 'documentation (RFC 3849)'],
  ['3fff::/20', 'documentation (RFC 9637)'],
  ['5f00::/16', 'SRv6 SIDs (RFC 9602)'],
  ['fc00::/7', 'unique local (RFC 4193)'],
  ['fe80::/10', 'link-local (RFC 4291)'],
  ['fec0::/10', 'deprecated site-local (RFC 3879)'],
  ['ff00::/8', 'multicast (RFC 4291)'],
];

interface CompiledRange {
  prefix: Uint8Array;
  length: number;
  label: string;
}

// Compiled per version on first use: an IPv4 lookup never parses the IPv6 blocks.
const compiled: { 4?: CompiledRange[]; 6?: CompiledRange[] } = {};

function compile(version: 4 | 6): CompiledRange[] {
  return SPECIAL_RANGES.flatMap(([cidr, label]) => {
    const [address, length] = cidr.split('/') as [string, string];
    if ((address.includes(':') ? 6 : 4) !== version) return [];
    return [{ prefix: addressBytes(address), length: Number(length), label }];
  });
}

/** The special-purpose block an address is in, as a label citing its RFC, or null for a public address. */
export function specialPurposeOf(address: IpAddress): string | null {
  const ranges = (compiled[address.version] ??= compile(address.version));
  for (const range of ranges) {
    if (prefixMatches(address.bytes, range.prefix, range.length)) return range.label;
  }
  return null;
}

/** Fast path for bulk IPv4: the label for an unsigned 32-bit address, or null. */
export function specialPurposeOfV4(v4: number): string | null {
  const first = v4 >>> 24;
  // Only these first octets hold IPv4 special blocks; skip the scan for the rest.
  if (first !== 0 && first !== 10 && first !== 100 && first !== 127 && first !== 169 && first !== 172 &&
      first !== 192 && first !== 198 && first !== 203 && first < 224) return null;
  const bytes = new Uint8Array([first, (v4 >>> 16) & 255, (v4 >>> 8) & 255, v4 & 255]);
  return specialPurposeOf({ text: '', version: 4, bytes, v4 });
}

function prefixMatches(bytes: Uint8Array, prefix: Uint8Array, length: number): boolean {
  let bits = length;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((bytes[i]! & mask) !== (prefix[i]! & mask)) return false;
  }
  return true;
}

function addressBytes(text: string): Uint8Array {
  const v4 = parseIpv4Fast(text);
  if (v4 >= 0) return v4Bytes(v4);
  const v6 = parseIpv6Text(text);
  if (v6 === null) throw new Error(`special range ${text} is not an address`);
  return v6;
}
