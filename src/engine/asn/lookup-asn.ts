import type { EngineContext } from '../context.js';
import { NetintelError } from '../../errors.js';
import { MAX_ASN, type AsnIndex } from './asn-index.js';
import { ipDatabasesFor, type AccessMode } from '../ip/ip-databases.js';
import { isIpAddress, parseIpAddress, quoteInput } from '../address/ip-address.js';
import { specialPurposeOf } from '../address/special-ranges.js';
import { cidrContaining, rangeToCidrs } from '../address/range-to-cidrs.js';
import { routeValidity, type RpkiValidity } from '../rpki/route-validity.js';

/**
 * What netintel knows of an autonomous system, asked by number (prefixes
 * filled) or by IP address (ip and route filled).
 */
export interface AsnResult {
  kind: 'asn';
  /** The input as given. */
  query: string;
  asn: number;
  organization: string | null;
  /** The address asked for (IP queries), else null. */
  ip: string | null;
  /** The announced block holding `ip`, as a CIDR (IP queries), else null. */
  route: string | null;
  /** The RPKI validity of `route` with this AS as its origin (IP queries), else null (docs/commands/asn.md, RPKI). */
  rpki: RpkiValidity | null;
  /** Every routed prefix of the AS (number queries), else null. */
  prefixes: { ipv4: string[]; ipv6: string[] } | null;
  /** Prefix and address counts (number queries), else null; IPv6 addresses as a decimal string (over 2^53). */
  counts: { ipv4_prefixes: number; ipv6_prefixes: number; ipv4_addresses: number; ipv6_addresses: string } | null;
}

const ASN_PATTERN = /^(?:AS)?(\d+)$/i;

/** True when the text names an AS number (`AS15169`, `as15169` or `15169`). */
export function isAsnText(text: string): boolean {
  // Most texts a bulk run asks about are addresses: answered without the expression.
  if (text.length > 12 || text.includes('.') || text.includes(':')) return false;
  const match = ASN_PATTERN.exec(text);
  return match !== null && Number(match[1]) <= MAX_ASN;
}

/**
 * Looks up an AS by number (`AS15169`, `15169`) or the AS announcing an IP.
 *
 * @throws NetintelError `invalid_input` for text that is neither;
 *   `not_found` when no AS holds the address or the AS announces nothing;
 *   `data_unavailable` when the ASN index is missing or corrupt.
 */
export function lookupAsn(ctx: EngineContext, query: string, mode: AccessMode = 'pread'): AsnResult {
  const databases = ipDatabasesFor(ctx, mode);
  const index = databases.asn;
  if (isIpAddress(query)) {
    const address = parseIpAddress(query);
    const reserved = specialPurposeOf(address);
    if (reserved !== null) {
      throw new NetintelError('not_found', `${address.text} is ${reserved}: no autonomous system announces it`, {
        details: { input: query, reserved },
      });
    }
    const match = index.find(address.bytes);
    if (!match) throw new NetintelError('not_found', `no autonomous system announces ${address.text}`, { details: { input: query } });
    const route = cidrContaining(match.rangeStart, match.rangeEnd, address.bytes);
    return {
      kind: 'asn',
      query,
      asn: match.asn,
      organization: match.organization,
      ip: address.text,
      route,
      rpki: route === null ? null : routeValidity(databases.rpki, route, match.asn),
      prefixes: null,
      counts: null,
    };
  }
  const number = ASN_PATTERN.exec(query);
  if (!number) {
    throw new NetintelError('invalid_input', `${quoteInput(query)} is neither an AS number (AS15169, 15169) nor an IP address`, {
      details: { input: query },
    });
  }
  const asn = Number(number[1]);
  if (asn > MAX_ASN) {
    throw new NetintelError('invalid_input', `${quoteInput(query)} is out of range: AS numbers run from 0 to ${MAX_ASN}`, {
      details: { input: query },
    });
  }
  const record = asRecord(index, asn);
  if (!record) throw new NetintelError('not_found', `AS${asn} announces no prefix in the ASN data`, { details: { input: query, asn } });
  return {
    kind: 'asn',
    query,
    asn,
    organization: record.organization,
    ip: null,
    route: null,
    rpki: null,
    // Copies of the cached lists (a copy shares the strings: microseconds),
    // so that a caller changing its record cannot change the next one.
    prefixes: { ipv4: record.ipv4.slice(), ipv6: record.ipv6.slice() },
    counts: { ...record.counts },
  };
}

/** What a number query computes from the index, cached per AS. */
interface AsRecord {
  organization: string | null;
  ipv4: readonly string[];
  ipv6: readonly string[];
  counts: NonNullable<AsnResult['counts']>;
}

/**
 * Records kept per AS. A large AS (AS16509 has thousands of ranges and
 * prefixes) is slow to build and large to keep, and bulk lists and
 * API callers ask the same few large ASes again and again. Bounded, least
 * recently used first out; one cache per open index (a WeakMap), so that
 * new data files never answer from the old ones.
 */
export const AS_RECORD_CACHE_SIZE = 64;
const asRecordCaches = new WeakMap<AsnIndex, Map<number, AsRecord | null>>();

function asRecord(index: AsnIndex, asn: number): AsRecord | null {
  let cache = asRecordCaches.get(index);
  if (!cache) {
    cache = new Map();
    asRecordCaches.set(index, cache);
  }
  if (cache.has(asn)) {
    const hit = cache.get(asn)!;
    // Map keeps insertion order: re-inserting marks the entry most recent.
    cache.delete(asn);
    cache.set(asn, hit);
    return hit;
  }
  const record = buildAsRecord(index, asn);
  cache.set(asn, record);
  if (cache.size > AS_RECORD_CACHE_SIZE) cache.delete(cache.keys().next().value!);
  return record;
}

function buildAsRecord(index: AsnIndex, asn: number): AsRecord | null {
  const held = index.prefixesOf(asn);
  if (!held) return null;
  const ipv4 = held.v4.flatMap((range) => rangeToCidrs(range.start, range.end));
  const ipv6 = held.v6.flatMap((range) => rangeToCidrs(range.start, range.end));
  return {
    organization: held.organization,
    ipv4,
    ipv6,
    counts: {
      ipv4_prefixes: ipv4.length,
      ipv6_prefixes: ipv6.length,
      ipv4_addresses: ipv4.reduce((sum, cidr) => sum + 2 ** (32 - prefixLength(cidr)), 0),
      ipv6_addresses: ipv6.reduce((sum, cidr) => sum + (1n << BigInt(128 - prefixLength(cidr))), 0n).toString(),
    },
  };
}

function prefixLength(cidr: string): number {
  return Number(cidr.slice(cidr.lastIndexOf('/') + 1));
}
