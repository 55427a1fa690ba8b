/**
 * Whether text is an IP address, by the same rules as node:net's isIPv4,
 * isIPv6 and isIP (Node's lib/internal/net.js): netintel's one way of
 * telling an address from a name, so that no command loads node:net for it,
 * which brings the whole stream and socket machinery with it, nor compiles
 * Node's long IPv6 expression (5 to 6 ms at its first call). A test checks
 * these against node:net on a corpus.
 */

const COLON = 58;
const DOT = 46;

/** Like net.isIPv4: four decimal parts, no leading zeros. */
export function isIPv4Text(text: string): boolean {
  return parseIpv4Fast(text) >= 0;
}

/**
 * The IPv4 address in text[from, to) as an unsigned 32-bit integer, or -1
 * when it is not one by isIPv4Text's rules.
 */
export function parseIpv4Fast(text: string, from = 0, to = text.length): number {
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (digits > 0 && octet === 0) return -1; // leading zero
      octet = octet * 10 + (c - 48);
      if (octet > 255 || ++digits > 3) return -1;
    } else if (c === DOT) {
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

/**
 * Like net.isIPv6: the RFC 4291 §2.2 text forms (eight groups of one to four
 * hex digits; one `::` standing for at least one zero group; a dotted quad
 * as the last two groups), then optionally a zone index (`%eth0`).
 */
export function isIPv6Text(text: string): boolean {
  return parseIpv6Text(text) !== null;
}

/**
 * The 16 bytes (network order) of the IPv6 address in text, by isIPv6Text's
 * rules, or null. A zone index is checked and left out of the bytes.
 */
export function parseIpv6Text(text: string): Uint8Array | null {
  let end = text.length;
  const zone = text.indexOf('%');
  if (zone !== -1) {
    if (zone === end - 1) return null;
    for (let i = zone + 1; i < end; i++) if (!isZoneCode(text.charCodeAt(i))) return null;
    end = zone;
  }
  const bytes = new Uint8Array(16);
  return readIpv6(text, end, bytes, 0) ? bytes : null;
}

/**
 * Reads IPv6 text without a zone index (any RFC 4291 §2.2 form) into 16
 * network-order bytes at `offset` of `out`. False, `out` then unspecified,
 * when the text is not one.
 */
export function parseIpv6Into(text: string, out: Uint8Array, offset = 0): boolean {
  return readIpv6(text, text.length, out, offset);
}

/** The longest IPv6 text without a zone: six groups of four digits and a dotted quad (RFC 4291 §2.2). */
const MAX_IPV6_TEXT = 45;

function readIpv6(text: string, end: number, out: Uint8Array, offset: number): boolean {
  // Longer text is no address, and reading it would hold a group for every colon of it (a log line of
  // `1:1:1:...` hundreds of megabytes long).
  if (end > MAX_IPV6_TEXT) return false;
  const head: number[] = [];
  const tail: number[] = [];
  const gap = text.indexOf('::');
  if (gap === -1 || gap >= end) {
    if (!readGroups(text, 0, end, true, head) || head.length !== 8) return false;
  } else if (!readGroups(text, 0, gap, false, head) || !readGroups(text, gap + 2, end, true, tail) || head.length + tail.length > 7) {
    return false;
  }
  out.fill(0, offset, offset + 16);
  const put = (group: number, at: number) => {
    out[offset + 2 * at] = group >>> 8;
    out[offset + 2 * at + 1] = group & 255;
  };
  head.forEach((group, i) => put(group, i));
  tail.forEach((group, i) => put(group, 8 - tail.length + i));
  return true;
}

/**
 * RFC 5952 text of the 16 network-order bytes at `offset`: lower-case hex, no
 * leading zeros, the first longest run of two or more zero groups written as
 * `::` (§4.2), and no dotted quad (the deprecated IPv4-compatible `::1.2.3.4`
 * reads back as ::102:304).
 */
export function ipv6ToText(bytes: Uint8Array, offset = 0): string {
  const words: number[] = [];
  for (let i = 0; i < 8; i++) words.push((bytes[offset + 2 * i]! << 8) | bytes[offset + 2 * i + 1]!);
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (from: number, to: number): string => words.slice(from, to).map((w) => w.toString(16)).join(':');
  if (bestStart === -1) return hex(0, 8);
  return `${hex(0, bestStart)}::${hex(bestStart + bestLength, 8)}`;
}

/**
 * Appends the 16-bit groups of text[from, to) to `groups`: colon-separated
 * hex groups, a dotted quad (allowed last only, where `dottedTail`) giving
 * two. True for an empty range; false when malformed (an empty group, a
 * fifth hex digit, any other character).
 */
function readGroups(text: string, from: number, to: number, dottedTail: boolean, groups: number[]): boolean {
  if (from === to) return true;
  let at = from;
  for (;;) {
    let end = at;
    let value = 0;
    for (let c = text.charCodeAt(end); end < to && isHexCode(c); c = text.charCodeAt(++end)) value = value * 16 + hexValue(c);
    if (end < to && text.charCodeAt(end) === DOT) {
      const v4 = dottedTail ? parseIpv4Fast(text, at, to) : -1;
      if (v4 < 0) return false;
      groups.push(v4 >>> 16, v4 & 0xffff);
      return true;
    }
    if (end === at || end - at > 4) return false;
    groups.push(value);
    if (end === to) return true;
    if (text.charCodeAt(end) !== COLON || end + 1 === to) return false;
    at = end + 1;
  }
}

function hexValue(c: number): number {
  return c <= 57 ? c - 48 : (c | 32) - 87;
}

function isHexCode(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

/** Node's zone characters: letters, digits, '-', '.', ':'. */
function isZoneCode(c: number): boolean {
  return (c >= 48 && c <= 58) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45 || c === DOT;
}

/** Like net.isIP: 4, 6, or 0 when text is neither. */
export function ipVersionOf(text: string): 0 | 4 | 6 {
  if (isIPv4Text(text)) return 4;
  if (isIPv6Text(text)) return 6;
  return 0;
}
