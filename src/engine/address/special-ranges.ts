import { v4Bytes, type IpAddress } from './ip-address.js';
import { parseIpv4Fast, parseIpv6Text } from './ip-text.js';

/**
 * Special-purpose address blocks (IANA IPv4/IPv6 Special-Purpose Address
 * Registries, RFC 6890 and the RFCs each entry cites; for IPv6, also the
 * space the IANA IPv6 Address Space registry keeps "Reserved by IETF",
 * outside global unicast 2000::/3). An address in a block that is not
 * globally reachable is answered locally with what it is: it has no
 * location or owner on the public Internet, and "not found" would be the
 * wrong answer.
 *
 * `reach` follows the registries' "Globally Reachable" column:
 * - `none`: not globally reachable (a special-purpose address);
 * - `service`: globally reachable, but an anycast service of whichever
 *   operator is nearest (PCP, TURN, the 6to4 relays), or identifiers
 *   nothing routes (ORCHIDv2, drone remote IDs): public for a lookup, yet
 *   no host a server probes for others (connect-guard.ts) nor a mail host;
 * - `global`: a block inside one that is not globally reachable, routed on
 *   the public Internet (AMT, AS112-v6; Teredo, which IANA marks N/A, read
 *   as public as 6to4 is): public for both.
 * The first block that holds an address decides, so a block inside
 * another comes before it. Globally routed special blocks outside such a
 * block (6to4 2002::/16, AS112 IPv4) are absent: they have real owners.
 */
type Reach = 'none' | 'service' | 'global';

const SPECIAL_RANGES: ReadonlyArray<readonly [cidr: string, label: string, reach: Reach]> = [
  ['0.0.0.0/8', '"this network" (RFC 791)', 'none'],
  ['10.0.0.0/8', 'private (RFC 1918)', 'none'],
  ['100.64.0.0/10', 'shared address space, carrier-grade NAT (RFC 6598)', 'none'],
  ['127.0.0.0/8', 'loopback (RFC 1122)', 'none'],
  ['169.254.0.0/16', 'link-local (RFC 3927)', 'none'],
  ['172.16.0.0/12', 'private (RFC 1918)', 'none'],
  ['192.0.0.9/32', 'Port Control Protocol anycast (RFC 7723)', 'service'],
  ['192.0.0.10/32', 'TURN anycast (RFC 8155)', 'service'],
  ['192.0.0.0/24', 'IETF protocol assignments (RFC 6890)', 'none'],
  ['192.0.2.0/24', 'documentation, TEST-NET-1 (RFC 5737)', 'none'],
  ['192.88.99.0/24', 'deprecated 6to4 relay anycast (RFC 7526)', 'service'],
  ['192.168.0.0/16', 'private (RFC 1918)', 'none'],
  ['198.18.0.0/15', 'benchmarking (RFC 2544)', 'none'],
  ['198.51.100.0/24', 'documentation, TEST-NET-2 (RFC 5737)', 'none'],
  ['203.0.113.0/24', 'documentation, TEST-NET-3 (RFC 5737)', 'none'],
  ['224.0.0.0/4', 'multicast (RFC 5771)', 'none'],
  ['255.255.255.255/32', 'limited broadcast (RFC 919)', 'none'],
  ['240.0.0.0/4', 'reserved for future use (RFC 1112)', 'none'],
  ['::/128', 'unspecified (RFC 4291)', 'none'],
  ['::1/128', 'loopback (RFC 4291)', 'none'],
  ['64:ff9b::/96', 'NAT64 well-known prefix (RFC 6052)', 'none'],
  ['64:ff9b:1::/48', 'NAT64 local-use prefix (RFC 8215)', 'none'],
  ['100::/64', 'discard-only (RFC 6666)', 'none'],
  ['2001::/32', 'Teredo (RFC 4380)', 'global'],
  ['2001:1::1/128', 'Port Control Protocol anycast (RFC 7723)', 'service'],
  ['2001:1::2/128', 'TURN anycast (RFC 8155)', 'service'],
  ['2001:1::3/128', 'DNS-SD service registration anycast (RFC 9665)', 'service'],
  ['2001:2::/48', 'benchmarking (RFC 5180)', 'none'],
  ['2001:3::/32', 'AMT (RFC 7450)', 'global'],
  ['2001:4:112::/48', 'AS112-v6 (RFC 7535)', 'global'],
  ['2001:10::/28', 'deprecated ORCHID (RFC 4843)', 'none'],
  ['2001:20::/28', 'ORCHIDv2 (RFC 7343)', 'service'],
  ['2001:30::/28', 'drone remote ID (RFC 9374)', 'service'],
  ['2001::/23', 'IETF protocol assignments (RFC 2928)', 'none'],
  ['2001:db8::/32', 'documentation (RFC 3849)', 'none'],
  ['3fff::/20', 'documentation (RFC 9637)', 'none'],
  ['5f00::/16', 'SRv6 SIDs (RFC 9602)', 'none'],
  ['fc00::/7', 'unique local (RFC 4193)', 'none'],
  ['fe80::/10', 'link-local (RFC 4291)', 'none'],
  ['fec0::/10', 'deprecated site-local (RFC 3879)', 'none'],
  ['ff00::/8', 'multicast (RFC 4291)', 'none'],
  // An IPv4-mapped address stands for the IPv4 address inside it (RFC 4291 §2.5.5.2), which callers judge.
  ['::ffff:0:0/96', 'IPv4-mapped (RFC 4291)', 'global'],
  // Everything else outside 2000::/3 (IPv4-compatible ::a.b.c.d among it, deprecated by RFC 4291 §2.5.5.1).
  ['::/3', 'reserved by the IETF, outside global unicast 2000::/3 (RFC 4291 §2.4)', 'none'],
  ['4000::/2', 'reserved by the IETF, outside global unicast 2000::/3 (RFC 4291 §2.4)', 'none'],
  ['8000::/1', 'reserved by the IETF, outside global unicast 2000::/3 (RFC 4291 §2.4)', 'none'],
];

interface CompiledRange {
  prefix: Uint8Array;
  length: number;
  label: string;
  reach: Reach;
}

// Compiled per version on first use: an IPv4 lookup never parses the IPv6 blocks.
const compiled: { 4?: CompiledRange[]; 6?: CompiledRange[] } = {};

function compile(version: 4 | 6): CompiledRange[] {
  return SPECIAL_RANGES.flatMap(([cidr, label, reach]) => {
    const [address, length] = cidr.split('/') as [string, string];
    if ((address.includes(':') ? 6 : 4) !== version) return [];
    return [{ prefix: addressBytes(address), length: Number(length), label, reach }];
  });
}

/** The first block that holds an address, or undefined. */
function blockOf(address: IpAddress): CompiledRange | undefined {
  const ranges = (compiled[address.version] ??= compile(address.version));
  for (const range of ranges) {
    if (prefixMatches(address.bytes, range.prefix, range.length)) return range;
  }
  return undefined;
}

/** The special-purpose block an address is in, as a label citing its RFC, or null for a globally reachable (public) address. */
export function specialPurposeOf(address: IpAddress): string | null {
  const block = blockOf(address);
  return block !== undefined && block.reach === 'none' ? block.label : null;
}

/**
 * The special block of an address a server must not probe for others: one
 * that is not globally reachable, or an anycast service of the nearest
 * operator (see `reach`); null otherwise.
 */
export function unprobedBlockOf(address: IpAddress): string | null {
  const block = blockOf(address);
  return block !== undefined && block.reach !== 'global' ? block.label : null;
}

/** Fast path for bulk IPv4: {@link specialPurposeOf} of an unsigned 32-bit address. */
export function specialPurposeOfV4(v4: number): string | null {
  return mayBeSpecialV4(v4) ? specialPurposeOf(v4Address(v4)) : null;
}

/** {@link unprobedBlockOf} of an unsigned 32-bit IPv4 address. */
export function unprobedBlockOfV4(v4: number): string | null {
  return mayBeSpecialV4(v4) ? unprobedBlockOf(v4Address(v4)) : null;
}

/** Only these first octets hold IPv4 special blocks; the scan is skipped for the rest. */
function mayBeSpecialV4(v4: number): boolean {
  const first = v4 >>> 24;
  return first === 0 || first === 10 || first === 100 || first === 127 || first === 169 || first === 172 || first === 192 || first === 198 || first === 203 || first >= 224;
}

function v4Address(v4: number): IpAddress {
  return { text: '', version: 4, bytes: new Uint8Array([v4 >>> 24, (v4 >>> 16) & 255, (v4 >>> 8) & 255, v4 & 255]), v4 };
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
