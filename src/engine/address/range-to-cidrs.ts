import { NetintelError } from '../../errors.js';
import { v4ToText } from './ip-address.js';
import { ipv6ToText, parseIpv4Fast, parseIpv6Into } from './ip-text.js';
import { bigIntToIpv6, IPV6_BYTES, ipv6ToBigInt } from './ipv6-integer.js';

/**
 * Splitting an inclusive address range into CIDR blocks (RFC 4632 for IPv4,
 * RFC 4291 section 2.3 for IPv6).
 *
 * The ASN data holds ranges, not prefixes, and some of them are not aligned
 * on a power of two (`2.0.0.5 - 2.0.1.10`). The minimal split is the greedy
 * one: from the start, take the largest block that is aligned on the current
 * address and does not pass the end. The block of that split holding a given
 * address is the "route" reported for it.
 */

/** An address as text (dotted quad or IPv6) or as 4 or 16 network-order bytes. */
export type RangeAddress = string | Uint8Array;

const V4_SPACE = 0x1_0000_0000;

/**
 * The minimal list of CIDR blocks, in address order, that exactly covers the
 * inclusive range `start..end`, e.g. `['2.0.0.5/32', '2.0.0.6/31', ...]`.
 * Throws `invalid_input` when an address is invalid, the families differ or
 * `start` is after `end`.
 */
export function rangeToCidrs(start: RangeAddress, end: RangeAddress): string[] {
  const range = decodeRange(start, end);
  if (range.version === 4) return rangeToCidrsV4(range.start, range.end);
  const out: string[] = [];
  forEachBlockV6(range.start, range.end, (block, prefixLength) => {
    out.push(`${v6Text(block)}/${prefixLength}`);
    return false;
  });
  return out;
}

/**
 * The block of `rangeToCidrs(start, end)` that holds `address`, or null when
 * the address is outside the range (or of the other family). Throws
 * `invalid_input` as `rangeToCidrs` does.
 */
export function cidrContaining(start: RangeAddress, end: RangeAddress, address: RangeAddress): string | null {
  const range = decodeRange(start, end);
  const target = decodeAddress(address);
  if (range.version === 4) return target.version === 4 ? cidrContainingV4(range.start, range.end, target.value) : null;
  if (target.version !== 6) return null;
  const value = target.value;
  if (value < range.start || value > range.end) return null;
  let found: string | null = null;
  forEachBlockV6(range.start, range.end, (block, prefixLength, size) => {
    if (value >= block + size) return false;
    found = `${v6Text(block)}/${prefixLength}`;
    return true;
  });
  return found;
}

/**
 * `rangeToCidrs` for IPv4 given as unsigned 32-bit integers (the bulk path:
 * no text parsing). Throws `invalid_input` on out-of-range values or
 * `start > end`.
 */
export function rangeToCidrsV4(start: number, end: number): string[] {
  checkV4Range(start, end);
  const out: string[] = [];
  for (let cursor = start; cursor <= end; ) {
    const hostBits = hostBitsV4(cursor, end);
    out.push(`${v4ToText(cursor)}/${32 - hostBits}`);
    cursor += 2 ** hostBits;
  }
  return out;
}

/**
 * `cidrContaining` for IPv4 given as unsigned 32-bit integers; null when the
 * address is outside `start..end`. Walks at most 62 blocks, without
 * allocating them.
 */
export function cidrContainingV4(start: number, end: number, address: number): string | null {
  checkV4Range(start, end);
  if (!(address >= start && address <= end)) return null;
  for (let cursor = start; ; ) {
    const hostBits = hostBitsV4(cursor, end);
    const next = cursor + 2 ** hostBits;
    if (address < next) return `${v4ToText(cursor)}/${32 - hostBits}`;
    cursor = next;
  }
}

/**
 * The block of `cidrContainingV4` as one number, its first address x 64 +
 * its prefix length (a cache key, read back by `v4BlockText`), without
 * building its text; -1 when the address is outside `start..end`.
 */
export function cidrBlockKeyV4(start: number, end: number, address: number): number {
  checkV4Range(start, end);
  if (!(address >= start && address <= end)) return -1;
  for (let cursor = start; ; ) {
    const hostBits = hostBitsV4(cursor, end);
    const next = cursor + 2 ** hostBits;
    if (address < next) return cursor * 64 + (32 - hostBits);
    cursor = next;
  }
}

/** The CIDR text of a `cidrBlockKeyV4` key. */
export function v4BlockText(key: number): string {
  return `${v4ToText(Math.floor(key / 64))}/${key % 64}`;
}

/** Host bits of the largest block aligned on `start` that ends at or before `end`. */
function hostBitsV4(start: number, end: number): number {
  const span = end - start + 1;
  const spanBits = span >= V4_SPACE ? 32 : 31 - Math.clz32(span);
  // `start & -start` isolates the lowest set bit; ToInt32 keeps it for values above 2^31.
  const alignBits = start === 0 ? 32 : 31 - Math.clz32(start & -start);
  return Math.min(spanBits, alignBits);
}

/** Calls `visit` for each block of the greedy split until it returns true. */
function forEachBlockV6(start: bigint, end: bigint, visit: (block: bigint, prefixLength: number, size: bigint) => boolean): void {
  for (let cursor = start; cursor <= end; ) {
    const spanBits = bitLength(end - cursor + 1n) - 1;
    // `cursor & -cursor` isolates the lowest set bit, as for IPv4.
    const alignBits = cursor === 0n ? 128 : bitLength(cursor & -cursor) - 1;
    const hostBits = Math.min(spanBits, alignBits);
    const size = 1n << BigInt(hostBits);
    if (visit(cursor, 128 - hostBits, size)) return;
    cursor += size;
  }
}

const TWO_32 = 0x1_0000_0000n;

/** The number of bits of a positive bigint (at most 4 steps for 128-bit values). */
function bitLength(value: bigint): number {
  let bits = 0;
  while (value >= TWO_32) {
    value >>= 32n;
    bits += 32;
  }
  return bits + 32 - Math.clz32(Number(value));
}

function v6Text(value: bigint): string {
  const bytes = new Uint8Array(IPV6_BYTES);
  bigIntToIpv6(value, bytes);
  return ipv6ToText(bytes);
}

function checkV4Range(start: number, end: number): void {
  if (!isV4(start) || !isV4(end)) {
    throw new NetintelError('invalid_input', `not an IPv4 address value: ${isV4(start) ? end : start}`);
  }
  if (start > end) {
    throw new NetintelError('invalid_input', `range start ${v4ToText(start)} is after its end ${v4ToText(end)}`);
  }
}

function isV4(value: number): boolean {
  return Number.isInteger(value) && value >= 0 && value < V4_SPACE;
}

type Decoded = { version: 4; value: number } | { version: 6; value: bigint };

type DecodedRange = { version: 4; start: number; end: number } | { version: 6; start: bigint; end: bigint };

function decodeRange(start: RangeAddress, end: RangeAddress): DecodedRange {
  const a = decodeAddress(start);
  const b = decodeAddress(end);
  if (a.version === 4 && b.version === 4) return { version: 4, start: a.value, end: b.value };
  if (a.version === 6 && b.version === 6) {
    if (a.value > b.value) {
      throw new NetintelError('invalid_input', `range start ${describe(start)} is after its end ${describe(end)}`);
    }
    return { version: 6, start: a.value, end: b.value };
  }
  throw new NetintelError('invalid_input', `range ${describe(start)} - ${describe(end)} mixes IPv4 and IPv6`);
}

function decodeAddress(address: RangeAddress): Decoded {
  if (typeof address === 'string') {
    if (address.includes(':')) {
      const bytes = new Uint8Array(IPV6_BYTES);
      if (parseIpv6Into(address, bytes)) return { version: 6, value: ipv6ToBigInt(bytes) };
    } else {
      const value = parseIpv4Fast(address);
      if (value >= 0) return { version: 4, value };
    }
  } else if (address.length === 4) {
    return { version: 4, value: ((address[0]! << 24) | (address[1]! << 16) | (address[2]! << 8) | address[3]!) >>> 0 };
  } else if (address.length === IPV6_BYTES) {
    return { version: 6, value: ipv6ToBigInt(address) };
  }
  throw new NetintelError('invalid_input', `${describe(address)} is not an IPv4 or IPv6 address`);
}

function describe(address: RangeAddress): string {
  return typeof address === 'string' ? JSON.stringify(address) : `a ${address.length}-byte address`;
}
