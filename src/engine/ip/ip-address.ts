import { isIPv4Text, isIPv6Text } from './ip-text.js';
import ipaddr from 'ipaddr.js';
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
  if (isIPv4Text(input)) {
    const bytes = Uint8Array.from(ipaddr.IPv4.parse(input).toByteArray());
    return fromV4Bytes(bytes);
  }
  if (isIPv6Text(input) && !input.includes('%')) {
    const parsed = ipaddr.IPv6.parse(withHexTail(input));
    if (parsed.isIPv4MappedAddress()) return fromV4Bytes(Uint8Array.from(parsed.toIPv4Address().toByteArray()));
    return { text: parsed.toRFC5952String(), version: 6, bytes: Uint8Array.from(parsed.toByteArray()), v4: 0 };
  }
  throw new NetintelError('invalid_input', `${quoteInput(input)} is not a valid IPv4 or IPv6 address`, {
    details: { input },
  });
}

/**
 * Rewrites a trailing dotted quad as two hex groups (`::1.2.3.4` -> `::102:304`).
 * ipaddr.js reads the deprecated IPv4-compatible form `::1.2.3.4`
 * (RFC 4291 §2.5.5.1, the address ::102:304) as IPv4-mapped `::ffff:1.2.3.4`,
 * which would give one address two answers.
 */
function withHexTail(input: string): string {
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(input);
  if (!tail) return input;
  const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
  return `${input.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/** True when the text is an IP address `parseIpAddress` accepts. */
export function isIpAddress(input: string): boolean {
  return isIPv4Text(input) || (isIPv6Text(input) && !input.includes('%'));
}

/** Fast IPv4 parse for bulk input: returns the uint32, or -1 when the text is not a dotted quad. */
export function parseIpv4Fast(text: string): number {
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (digits > 0 && octet === 0) return -1; // leading zero
      octet = octet * 10 + (c - 48);
      if (octet > 255 || ++digits > 3) return -1;
    } else if (c === 46) {
      if (digits === 0 || ++dots > 3) return -1;
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
    } else {
      return -1;
    }
  }
  if (dots !== 3 || digits === 0) return -1;
  return value * 256 + octet;
}

export function v4ToText(value: number): string {
  return `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
}

function fromV4Bytes(bytes: Uint8Array): IpAddress {
  const v4 = ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
  return { text: v4ToText(v4), version: 4, bytes, v4 };
}
