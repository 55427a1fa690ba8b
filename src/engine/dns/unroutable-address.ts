import { parseIpv4Fast, parseIpv6Text } from '../address/ip-text.js';

/**
 * Why no datagram or connection to `host` (an IP address in text) can ever
 * be answered, or null when it may be. A resolver such as `1::8.8.8.8` on a
 * host with an IPv6 default route is sent to and silently dropped, so the
 * query would wait for its whole timeout (times the retries) before saying
 * what a glance at the address says at once.
 *
 * Refused: IPv4 multicast (224.0.0.0/4, RFC 5771), the reserved 240.0.0.0/4
 * and limited broadcast (RFC 1112 §4, RFC 919); IPv6 multicast (ff00::/8),
 * and IPv6 space the IANA registry keeps "Reserved by IETF" (RFC 4291
 * §2.4): outside 2000::/3, fc00::/7 and fe80::/10, except ::, ::1,
 * IPv4-mapped ::ffff:0:0/96, the NAT64 prefixes 64:ff9b::/96 (RFC 6052) and
 * 64:ff9b:1::/48 (RFC 8215), and the discard prefix 100::/64 (RFC 6666).
 * IPv4-compatible addresses (`::192.0.2.1`) are refused: RFC 4291
 * §2.5.5.1 deprecates them and no stack routes them.
 * Documentation and private ranges are not refused: they are routable in
 * test networks.
 */
export function unroutableReason(host: string): string | null {
  const v4 = parseIpv4Fast(host);
  if (v4 >= 0) {
    const first = Math.floor(v4 / 0x1000000);
    if (first >= 224 && first <= 239) return 'a multicast address';
    if (v4 === 0xffffffff) return 'the broadcast address';
    if (first >= 240) return 'a reserved address (240.0.0.0/4)';
    return null;
  }
  const bytes = parseIpv6Text(host);
  if (bytes === null) return null;
  const b0 = bytes[0]!;
  if (b0 === 0xff) return 'a multicast address';
  if ((b0 & 0xe0) === 0x20 || (b0 & 0xfe) === 0xfc || (b0 === 0xfe && (bytes[1]! & 0xc0) === 0x80)) return null;
  if (b0 === 0x01) {
    // 100::/64, the discard prefix: routable, and dropped by design.
    return bytes.subarray(1, 8).every((byte) => byte === 0) ? null : 'in reserved IPv6 space';
  }
  if (b0 !== 0x00) return 'in reserved IPv6 space';
  const zeroUpTo = (end: number): boolean => bytes.subarray(0, end).every((byte) => byte === 0);
  if (zeroUpTo(15) && bytes[15]! <= 1) return null; // :: and ::1
  if (zeroUpTo(10) && bytes[10] === 0xff && bytes[11] === 0xff) return null; // ::ffff:0:0/96
  const nat64 = bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b;
  if (nat64 && (bytes.subarray(4, 12).every((byte) => byte === 0) || (bytes[4] === 0 && bytes[5] === 1))) return null;
  if (zeroUpTo(12)) return 'an IPv4-compatible IPv6 address (deprecated, RFC 4291 §2.5.5.1)';
  return 'in reserved IPv6 space';
}
