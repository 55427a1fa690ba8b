import { bigIntToIpv6, ipv6ToBigInt } from './ipv6-integer.js';
import { v4ToText } from './ip-address.js';
import { ipv6ToText, parseIpv4Fast, parseIpv6Into } from './ip-text.js';

/** An inclusive IPv4 range, addresses as unsigned 32-bit integers. */
export interface V4Range {
  version: 4;
  start: number;
  end: number;
}

/** An inclusive IPv6 range, addresses as unsigned 128-bit integers. */
export interface V6Range {
  version: 6;
  start: bigint;
  end: bigint;
}

export type AddressRange = V4Range | V6Range;

const V6_MAX = (1n << 128n) - 1n;
/** ::ffff:0:0/96, where IPv4-mapped addresses live (RFC 4291 section 2.5.5.2). */
const V4_MAPPED_BASE = 0xffff_0000_0000n;
const scratch = new Uint8Array(16);

/**
 * Parses one address, CIDR (`a.b.c.d/n`, `x::/n`) or inclusive range
 * (`a-b`) as feeds write them. Host bits set under a prefix are cleared
 * (`10.1.2.3/8` is 10.0.0.0/8), as routers and the lists' own tools read
 * them. IPv4-mapped IPv6 is unwrapped to IPv4, as lookups unwrap it.
 * Returns null for anything else.
 */
export function parseAddressRange(text: string): AddressRange | null {
  const dash = text.indexOf('-');
  if (dash > 0) {
    const first = parseAddressRange(text.slice(0, dash).trim());
    const last = parseAddressRange(text.slice(dash + 1).trim());
    if (first === null || last === null || first.version !== last.version) return null;
    if (first.version === 4) {
      const end = (last as V4Range).end;
      return first.start <= end ? { version: 4, start: first.start, end } : null;
    }
    const end = (last as V6Range).end;
    return first.start <= end ? { version: 6, start: first.start, end } : null;
  }
  const slash = text.indexOf('/');
  const address = slash === -1 ? text : text.slice(0, slash);
  let prefix = -1;
  if (slash !== -1) {
    const digits = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(digits)) return null;
    prefix = Number(digits);
  }
  const v4 = parseIpv4Fast(address);
  if (v4 >= 0) {
    if (prefix === -1) return { version: 4, start: v4, end: v4 };
    if (prefix > 32) return null;
    const size = 2 ** (32 - prefix);
    const start = v4 - (v4 % size);
    return { version: 4, start, end: start + size - 1 };
  }
  if (!address.includes(':') || !parseIpv6Into(address, scratch)) return null;
  const value = ipv6ToBigInt(scratch);
  if (prefix > 128) return null;
  const bits = prefix === -1 ? 128 : prefix;
  const hostMask = (1n << BigInt(128 - bits)) - 1n;
  const start = value & (V6_MAX ^ hostMask);
  const end = start | hostMask;
  if (bits >= 96 && start >> 32n === V4_MAPPED_BASE >> 32n) {
    return { version: 4, start: Number(start & 0xffff_ffffn), end: Number(end & 0xffff_ffffn) };
  }
  return { version: 6, start, end };
}

/** The prefix length when [start, end] is exactly one CIDR block, else -1. */
export function v4PrefixOf(start: number, end: number): number {
  const size = end - start + 1;
  const bits = Math.log2(size);
  if (size <= 0 || !Number.isInteger(bits) || start % size !== 0) return -1;
  return 32 - bits;
}

export function v6PrefixOf(start: bigint, end: bigint): number {
  const size = end - start + 1n;
  if (size <= 0n || (size & (size - 1n)) !== 0n) return -1;
  if (start % size !== 0n) return -1;
  return 128 - (size.toString(2).length - 1);
}

/** Text of a range as feeds write it: the address (a single one), the CIDR, or `first-last`. */
export function v4RangeText(start: number, end: number): string {
  if (start === end) return v4ToText(start);
  const prefix = v4PrefixOf(start, end);
  return prefix >= 0 ? `${v4ToText(start)}/${prefix}` : `${v4ToText(start)}-${v4ToText(end)}`;
}

export function v6Text(value: bigint): string {
  bigIntToIpv6(value, scratch);
  return ipv6ToText(scratch);
}

export function v6RangeText(start: bigint, end: bigint): string {
  if (start === end) return v6Text(start);
  const prefix = v6PrefixOf(start, end);
  return prefix >= 0 ? `${v6Text(start)}/${prefix}` : `${v6Text(start)}-${v6Text(end)}`;
}
