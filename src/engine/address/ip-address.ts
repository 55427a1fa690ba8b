import { ipv6ToText, isIPv4Text, isIPv6Text, parseIpv4Fast, parseIpv6Text } from './ip-text.js';
import { NetintelError } from '../../errors.js';

/** A parsed, normalised IP address. IPv4-mapped IPv6 is unwrapped to IPv4. */
export interface IpAddress {
  /** Canonical text: dotted quad, or RFC 5952 compressed lower-case IPv6. */
  text: string;
  version: 4 | 6;
  /** 4 or 16 bytes, network order. */
  bytes: Uint8Array;
  /** The IPv4 address as an unsigned 32-bit integer (0 for IPv6). */
  v4: number;
}

const MAX_INPUT_SHOWN = 80;

/** Shows an input inside an error message: control characters escaped, long inputs cut. */
export function quoteInput(input: string): string {
  const escaped = JSON.stringify(input.length > MAX_INPUT_SHOWN ? `${input.slice(0, MAX_INPUT_SHOWN)}…` : input);
  return input.length > MAX_INPUT_SHOWN ? `${escaped} (${input.length} characters)` : escaped;
}

/**
 * Parses an IP address strictly: four-part decimal IPv4 (no octal or hex
 * shorthands, which resolvers read differently), any valid RFC 4291 text
 * form of IPv6 without a zone index (a zone is meaningful only on the host
 * that wrote it). Throws `invalid_input` naming the input.
 */
export function parseIpAddress(input: string): IpAddress {
  const v4 = parseIpv4Fast(input);
  if (v4 >= 0) return { text: v4ToText(v4), version: 4, bytes: v4Bytes(v4), v4 };
  const bytes = input.includes('%') ? null : parseIpv6Text(input);
  if (bytes !== null) {
    if (isIpv4Mapped(bytes)) return fromV4Bytes(bytes.slice(12));
    return { text: ipv6ToText(bytes), version: 6, bytes, v4: 0 };
  }
  throw new NetintelError('invalid_input', `${quoteInput(input)} is not a valid IPv4 or IPv6 address`, {
    details: { input },
  });
}

/** ::ffff:0:0/96 (RFC 4291 §2.5.5.2): an IPv4 address in IPv6 clothing, looked up as the IPv4 address. */
function isIpv4Mapped(bytes: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (bytes[i] !== 0) return false;
  return bytes[10] === 0xff && bytes[11] === 0xff;
}

/** True when the text is an IP address `parseIpAddress` accepts. */
export function isIpAddress(input: string): boolean {
  return isIPv4Text(input) || (isIPv6Text(input) && !input.includes('%'));
}

export function v4ToText(value: number): string {
  return `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
}

/** The 4 network-order bytes of an IPv4 address given as an unsigned 32-bit integer. */
export function v4Bytes(v4: number): Uint8Array {
  return Uint8Array.of(v4 >>> 24, (v4 >>> 16) & 255, (v4 >>> 8) & 255, v4 & 255);
}

function fromV4Bytes(bytes: Uint8Array): IpAddress {
  const v4 = ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
  return { text: v4ToText(v4), version: 4, bytes, v4 };
}
