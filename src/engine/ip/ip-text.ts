/**
 * Whether text is an IP address, by the same rules as node:net's isIPv4,
 * isIPv6 and isIP (the same expressions as Node's lib/internal/net.js), so
 * that modules on the one-off lookup path need not load node:net: that
 * module brings the whole stream and socket machinery with it, about 3 ms
 * of a run that should cost little more than Node's own start. A test
 * checks these against node:net on a corpus.
 */

const V4_SEGMENT = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])';
const V4_TEXT = `(?:${V4_SEGMENT}\\.){3}${V4_SEGMENT}`;

const V6_SEGMENT = '(?:[0-9a-fA-F]{1,4})';
const V6_PATTERN = new RegExp(
  '^(?:' +
    `(?:${V6_SEGMENT}:){7}(?:${V6_SEGMENT}|:)|` +
    `(?:${V6_SEGMENT}:){6}(?:${V4_TEXT}|:${V6_SEGMENT}|:)|` +
    `(?:${V6_SEGMENT}:){5}(?::${V4_TEXT}|(?::${V6_SEGMENT}){1,2}|:)|` +
    `(?:${V6_SEGMENT}:){4}(?:(?::${V6_SEGMENT}){0,1}:${V4_TEXT}|(?::${V6_SEGMENT}){1,3}|:)|` +
    `(?:${V6_SEGMENT}:){3}(?:(?::${V6_SEGMENT}){0,2}:${V4_TEXT}|(?::${V6_SEGMENT}){1,4}|:)|` +
    `(?:${V6_SEGMENT}:){2}(?:(?::${V6_SEGMENT}){0,3}:${V4_TEXT}|(?::${V6_SEGMENT}){1,5}|:)|` +
    `(?:${V6_SEGMENT}:){1}(?:(?::${V6_SEGMENT}){0,4}:${V4_TEXT}|(?::${V6_SEGMENT}){1,6}|:)|` +
    `(?::(?:(?::${V6_SEGMENT}){0,5}:${V4_TEXT}|(?::${V6_SEGMENT}){1,7}|:))` +
    ')(?:%[0-9a-zA-Z-.:]{1,})?$',
);

/**
 * Like net.isIPv4: four decimal parts, no leading zeros. Read by hand rather
 * than with the expression: compiling a regular expression on its first use
 * is a measurable part of a one-off lookup, and bulk input is mostly IPv4.
 */
export function isIPv4Text(text: string): boolean {
  return parseIpv4Fast(text) >= 0;
}

/** The IPv4 address as an unsigned 32-bit integer, or -1 when the text is not one by isIPv4Text's rules. */
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

/** Like net.isIPv6: any RFC 4291 text form, a zone index (`%eth0`) allowed. */
export function isIPv6Text(text: string): boolean {
  return V6_PATTERN.test(text);
}

/** Like net.isIP: 4, 6, or 0 when text is neither. */
export function ipVersionOf(text: string): 0 | 4 | 6 {
  if (isIPv4Text(text)) return 4;
  if (isIPv6Text(text)) return 6;
  return 0;
}
