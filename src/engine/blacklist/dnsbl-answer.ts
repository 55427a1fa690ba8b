import type { IpAddress } from '../address/ip-address.js';
import { ipv4Number, parseIpv4Cidr, type DnsblZone } from './dnsbl-registry.js';

/** One A record a list answered, with what the registry says it means (null: not recorded). */
export interface DnsblReturnCode {
  address: string;
  meaning: string | null;
}

/**
 * What one A answer of a list means:
 * - `listed`: every address is in 127.0.0.0/8 and none is a refusal code;
 * - `clean`: NXDOMAIN, or the name exists without A records;
 * - `refused`: a refusal or query-error code of the zone (never a listing);
 * - `error`: an answer outside 127.0.0.0/8 (a resolver rewriting NXDOMAIN,
 *   or a broken zone), or an NXDOMAIN that holds A records, which is
 *   neither a listing nor a clean answer.
 */
export type DnsblReading =
  | { status: 'listed'; codes: DnsblReturnCode[]; detail: null }
  | { status: 'clean'; codes: DnsblReturnCode[]; detail: null }
  | { status: 'refused' | 'error'; codes: DnsblReturnCode[]; detail: string };

/**
 * The name to ask for `subject` in `zone`: an IPv4 address as its octets
 * reversed (`192.0.2.1` in `bl.example` -> `1.2.0.192.bl.example`,
 * RFC 5782 §2.1), an IPv6 address as its 32 nibbles reversed (RFC 5782
 * §2.4), a domain name as itself (RFC 5782 §3).
 */
export function dnsblQueryName(subject: IpAddress | string, zone: string): string {
  if (typeof subject === 'string') return `${subject}.${zone}`;
  return `${reversedAddress(subject)}.${zone}`;
}

/** The reversed form of an address as DNS lists (and in-addr.arpa / ip6.arpa) use it. */
export function reversedAddress(address: IpAddress): string {
  const bytes = [...address.bytes];
  if (address.version === 4) return bytes.reverse().join('.');
  const nibbles: string[] = [];
  for (const byte of bytes) nibbles.push((byte >> 4).toString(16), (byte & 0x0f).toString(16));
  return nibbles.reverse().join('.');
}

/**
 * Reads the A answer of a list for one query.
 *
 * `status` is the DNS outcome (`nxdomain`, `nodata`, `answer`) and
 * `addresses` the A records. Refusal codes win over everything else: an
 * answer holding one is `refused`, never `listed` (Spamhaus 127.255.255.0/24,
 * URIBL/SURBL 127.0.0.1).
 */
export function readDnsblAnswer(zone: DnsblZone, status: 'answer' | 'nodata' | 'nxdomain', addresses: readonly string[]): DnsblReading {
  if (status === 'nxdomain' && addresses.length > 0) {
    // NXDOMAIN says the name that owns these records does not exist (RFC 1035 §4.1.1, RFC 6604 §2): neither a listing nor a clean answer.
    return {
      status: 'error',
      codes: [...new Set(addresses)].map((address) => ({ address, meaning: null })),
      detail: `the answer is NXDOMAIN and yet holds A records (${[...new Set(addresses)].join(', ')}), which contradict each other: the resolver or the zone is broken`,
    };
  }
  if (status !== 'answer' || addresses.length === 0) return { status: 'clean', codes: [], detail: null };
  const unique = [...new Set(addresses)];
  const refusals: DnsblReturnCode[] = [];
  const codes: DnsblReturnCode[] = [];
  const outside: string[] = [];
  for (const address of unique) {
    const refusal = refusalMeaning(zone, address);
    if (refusal !== null) {
      refusals.push({ address, meaning: refusal });
      codes.push({ address, meaning: refusal });
      continue;
    }
    if (!address.startsWith('127.')) {
      outside.push(address);
      codes.push({ address, meaning: null });
      continue;
    }
    codes.push({ address, meaning: listingMeaning(zone, address) });
  }
  if (refusals.length > 0) {
    return {
      status: 'refused',
      codes,
      detail: refusals.map((code) => `${code.address}: ${code.meaning}`).join('; '),
    };
  }
  if (outside.length > 0) {
    return {
      status: 'error',
      codes,
      detail:
        `the answer ${outside.join(', ')} is outside 127.0.0.0/8, which no list uses (RFC 5782 §2.1): ` +
        'the resolver may rewrite NXDOMAIN answers, or the zone is broken',
    };
  }
  return { status: 'listed', codes, detail: null };
}

/** The refusal meaning of a return address in this zone, or null when it is not a refusal code. */
export function refusalMeaning(zone: DnsblZone, address: string): string | null {
  const exact = zone.refusalCodes[address];
  if (exact !== undefined) return exact;
  let value: number | null = null;
  for (const [code, meaning] of Object.entries(zone.refusalCodes)) {
    const block = parseIpv4Cidr(code);
    if (!block) continue;
    value ??= /^\d+\.\d+\.\d+\.\d+$/.test(address) ? ipv4Number(address) : -1;
    if (value < 0) return null;
    const size = 2 ** (32 - block.length);
    if (value >= block.network && value < block.network + size) return meaning;
  }
  return null;
}

/** What a listing code means: the exact code, else the bits of a bitmasked list, else null. */
export function listingMeaning(zone: DnsblZone, address: string): string | null {
  const exact = zone.codes[address];
  if (exact !== undefined) return exact;
  if (zone.bitmask !== null) {
    const last = Number(address.slice(address.lastIndexOf('.') + 1));
    const meanings = Object.entries(zone.bitmask)
      .filter(([bit]) => (last & Number(bit)) !== 0)
      .sort((a, b) => Number(a[0]) - Number(b[0]))
      .map(([, meaning]) => meaning);
    if (meanings.length > 0) return meanings.join('; ');
  }
  return null;
}
