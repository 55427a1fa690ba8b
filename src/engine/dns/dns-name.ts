import { ipVersionOf } from '../address/ip-text.js';
import { domainToASCII, domainToUnicode } from 'node:url';
import ipaddr from 'ipaddr.js';
import { NetintelError } from '../../errors.js';

/** A domain name in the two forms netintel shows: what goes on the wire and what people read. */
export interface DomainName {
  /** Lower-case ASCII form (IDN labels in punycode), no trailing dot; `.` for the root. */
  ascii: string;
  /** The same name with punycode labels decoded to Unicode (equal to `ascii` for plain names). */
  unicode: string;
}

// RFC 1035 §2.3.4 limits: 63 octets per label, 255 octets on the wire, which
// is 253 characters in text form without the trailing dot.
const MAX_LABEL_OCTETS = 63;
const MAX_NAME_OCTETS = 253;

// UTS #46 treats the ideographic and full-width full stops as label separators.
const LABEL_SEPARATOR = /[.\u3002\uff0e\uff61]/;

// Control characters, any kind of space, and format characters (Cf: the
// zero-width space and joiners, soft hyphen, bidirectional controls, the
// byte order mark) never belong in a name and are the usual sign of a
// copy-paste accident or a spoof. UTS #46 maps several of them to nothing,
// so `ex\u200bample.com` would quietly become `example.com`.
const FORBIDDEN = /[\p{Cc}\p{Cf}\p{Z}]/u;

// RFC 3696 §2: a top-level domain is never all-numeric, so `1.2.3.4.5` or
// `1e3.0.0.1` is a mistyped address, not a name to send to DNS.
const NUMERIC_LABEL = /^[0-9]+$/;

// Letters, digits and hyphen (RFC 952/1123 host names) and underscore for
// attribute leaves such as _dmarc and _sip._tcp (RFC 8552). A lone "*"
// label names a wildcard owner (RFC 4592). Under in-addr.arpa "/" is allowed
// too, for classless delegations such as 0/26.2.0.192.in-addr.arpa
// (RFC 2317); elsewhere it is almost always a pasted URL path.
const ASCII_LABEL = /^[a-z0-9_-]+$/;
const REVERSE_V4_LABEL = /^[a-z0-9_/-]+$/;
const REVERSE_V4_SUFFIX = /(^|[.\u3002\uff0e\uff61])in-addr[.\u3002\uff0e\uff61]arpa[.\u3002\uff0e\uff61]?$/i;
const ASCII_IN_IDN_LABEL = /^[a-z0-9_-]$/i;
const ASCII_ONLY = /^[\x00-\x7f]*$/;

/**
 * Validates a domain name and gives its ASCII (punycode) and Unicode forms.
 * Accepts upper case, one trailing dot, internationalised names
 * (`bücher.example`, converted with WHATWG/UTS #46 rules via
 * `url.domainToASCII`) and underscore labels (`_dmarc.example.com`).
 * The root is accepted as `.`.
 *
 * @throws NetintelError `invalid_input` naming the input (control characters
 *   escaped) and the reason: empty name or label, a label over 63 octets, a
 *   name over 253 octets, spaces, control, format (`U+200B`) or other
 *   disallowed characters, an `xn--` label that is not valid Punycode, an
 *   all-numeric top-level label.
 */
export function normaliseDomain(input: string): DomainName {
  if (isPlainAsciiName(input)) return { ascii: input, unicode: input };
  if (typeof input !== 'string' || input.length === 0) {
    throw invalidName(String(input ?? ''), 'the name is empty');
  }
  const misplaced = misplacedForm(input);
  if (misplaced) throw invalidName(input, misplaced);
  const forbidden = FORBIDDEN.exec(input);
  if (forbidden) {
    throw invalidName(input, `it contains ${describeChar(forbidden[0])}`);
  }
  if (input === '.') return { ascii: '.', unicode: '.' };

  const labels = input.split(LABEL_SEPARATOR);
  if (labels.length > 1 && labels[labels.length - 1] === '') labels.pop();

  const labelPattern = REVERSE_V4_SUFFIX.test(input) ? REVERSE_V4_LABEL : ASCII_LABEL;
  const ascii: string[] = [];
  const unicode: string[] = [];
  for (const label of labels) {
    if (label === '') throw invalidName(input, 'it has an empty label');
    const converted = ASCII_ONLY.test(label)
      ? asciiLabel(input, label, labelPattern)
      : internationalLabel(input, label);
    if (converted.ascii.length > MAX_LABEL_OCTETS) {
      throw invalidName(
        input,
        `the label "${truncate(converted.ascii)}" is ${converted.ascii.length} octets long (at most ${MAX_LABEL_OCTETS})`,
      );
    }
    ascii.push(converted.ascii);
    unicode.push(converted.unicode);
  }

  if (NUMERIC_LABEL.test(ascii[ascii.length - 1]!)) {
    throw invalidName(input, 'the top-level label is all digits (RFC 3696 §2): neither an IP address nor a host name');
  }
  const name = ascii.join('.');
  if (name.length > MAX_NAME_OCTETS) {
    throw invalidName(input, `the name is ${name.length} octets long (at most ${MAX_NAME_OCTETS})`);
  }
  return { ascii: name, unicode: unicode.join('.') };
}

/** What a `dns` target resolves to: the name to query and how to show the input. */
export interface DnsTarget extends DomainName {
  /** The normalised input: the ASCII domain, or the IP address in canonical text. */
  target: string;
  /** True when the input was an IP address and the name is its reverse-mapping name. */
  reverse: boolean;
}

/**
 * Reads a `dns` target: an IP address means a reverse lookup of its
 * in-addr.arpa / ip6.arpa name, anything else must be a domain name
 * ({@link normaliseDomain}).
 *
 * @throws NetintelError `invalid_input` for a bad domain name.
 */
export function parseDnsTarget(input: string): DnsTarget {
  // Most bulk input is plain host names; one that has a letter or `-`/`_`
  // cannot be an IP address (IPv6 needs a colon).
  if (isPlainAsciiName(input) && !DIGITS_AND_DOTS.test(input)) return { target: input, ascii: input, unicode: input, reverse: false };
  if (ipVersionOf(input) !== 0 && ipaddr.isValid(input)) {
    const name = reverseName(input);
    return { target: canonicalIp(input), ascii: name, unicode: name, reverse: true };
  }
  const name = normaliseDomain(input);
  return { target: name.ascii, ...name, reverse: false };
}

const DIGITS_AND_DOTS = /^[0-9.]*$/;

/**
 * True when `name` is already in the form normaliseDomain gives, with the
 * same Unicode form: lower-case ASCII letters, digits, `-` and `_`, labels
 * of 1 to 63 octets without an `xn--` prefix, at most 253 octets, no
 * trailing dot, a top-level label that is not all digits. normaliseDomain
 * returns such a name unchanged in both forms
 * (checked without its regular expressions, which bulk runs would pay per
 * name).
 */
export function isPlainAsciiName(name: string): boolean {
  if (typeof name !== 'string') return false;
  const length = name.length;
  if (length === 0 || length > MAX_NAME_OCTETS) return false;
  let labelStart = 0;
  let digitsOnly = true;
  for (let i = 0; i <= length; i++) {
    const code = i === length ? 0x2e : name.charCodeAt(i);
    if (code === 0x2e) {
      const labelLength = i - labelStart;
      if (labelLength === 0 || labelLength > MAX_LABEL_OCTETS) return false;
      // xn--: an A-label, whose Unicode form differs.
      if (labelLength >= 4 && name.charCodeAt(labelStart + 2) === 0x2d && name.startsWith('xn--', labelStart)) return false;
      labelStart = i + 1;
      if (i < length) digitsOnly = true;
    } else if (code >= 0x30 && code <= 0x39) {
      // A digit keeps digitsOnly as it is.
    } else if ((code >= 0x61 && code <= 0x7a) || code === 0x2d || code === 0x5f) {
      digitsOnly = false;
    } else {
      return false;
    }
  }
  // An all-numeric top-level label is refused by normaliseDomain (RFC 3696 §2).
  return !digitsOnly;
}

/**
 * The reverse-mapping name of an IP address, the owner of its PTR records:
 * `192.0.2.1` gives `1.2.0.192.in-addr.arpa` (RFC 1035 §3.5), an IPv6
 * address its 32 nibbles under `ip6.arpa` (RFC 3596 §2.5). A zone index
 * (`fe80::1%eth0`) is ignored.
 *
 * @throws NetintelError `invalid_input` when `ip` is not an IPv4 or IPv6 address.
 */
export function reverseName(ip: string): string {
  if (ipVersionOf(ip) === 0 || !ipaddr.isValid(ip)) {
    throw new NetintelError('invalid_input', `not an IP address: ${quoteForMessage(ip)}`, {
      details: { input: ip },
    });
  }
  const bytes = parseIp(ip).toByteArray();
  if (bytes.length === 4) return `${bytes.reverse().join('.')}.in-addr.arpa`;
  const nibbles: string[] = [];
  for (const byte of bytes) nibbles.push((byte >> 4).toString(16), (byte & 0x0f).toString(16));
  return `${nibbles.reverse().join('.')}.ip6.arpa`;
}

/**
 * The canonical text of an IP address: dotted quad, or RFC 5952 form for
 * IPv6 (lower case, longest zero run compressed).
 *
 * @throws NetintelError `invalid_input` when `ip` is not an IP address.
 */
export function canonicalIp(ip: string): string {
  if (ipVersionOf(ip) === 0 || !ipaddr.isValid(ip)) {
    throw new NetintelError('invalid_input', `not an IP address: ${quoteForMessage(ip)}`, {
      details: { input: ip },
    });
  }
  const parsed = parseIp(ip);
  return parsed.kind() === 'ipv6' ? (parsed as ipaddr.IPv6).toRFC5952String() : parsed.toString();
}

/**
 * ipaddr.parse, except that the deprecated IPv4-compatible `::1.2.3.4`
 * (RFC 4291 §2.5.5.1) stays ::102:304 as the kernel reads it: ipaddr.js
 * reads it as the IPv4-mapped ::ffff:1.2.3.4, another address (a probe
 * would connect somewhere else than the address checked).
 */
function parseIp(ip: string): ipaddr.IPv4 | ipaddr.IPv6 {
  return ipaddr.parse(ip.replace(/^::(?=\d+\.\d+\.\d+\.\d+(%.*)?$)/, '0::'));
}

function asciiLabel(input: string, label: string, pattern: RegExp): DomainName {
  const lower = label.toLowerCase();
  if (lower !== '*' && !pattern.test(lower)) {
    const bad = [...lower].find((char) => !pattern.test(char)) ?? '*';
    throw invalidName(input, `it contains ${describeChar(bad)}`);
  }
  if (lower.startsWith('xn--')) {
    // An A-label must decode, and encode back to itself (RFC 5891 §5.4):
    // `xn--` alone does not decode, `xn--zz-` decodes to plain `zz`, whose
    // A-label is `zz`. Such a label names nothing a person could have meant.
    // A U-label holds at least one non-ASCII character (RFC 5890 §2.3.2.1). Node 20's domainToUnicode gives ''
    // for bad Punycode, Node 24's gives the label back unchanged: both are refused, so the verdict is the same.
    const decoded = domainToUnicode(lower);
    if (decoded === '' || decoded.includes('.') || !/[^\x00-\x7f]/.test(decoded) || domainToASCII(decoded) !== lower) {
      throw invalidName(input, `the label "${truncate(lower)}" is not a valid IDNA A-label (bad Punycode)`);
    }
    return { ascii: lower, unicode: decoded };
  }
  return { ascii: lower, unicode: lower };
}

function internationalLabel(input: string, label: string): DomainName {
  for (const char of label) {
    // Checked before conversion: the WHATWG host parser would read "/", "?",
    // "#" or "@" as the end of a host and silently drop the rest.
    if (ASCII_ONLY.test(char)) {
      if (!ASCII_IN_IDN_LABEL.test(char)) throw invalidName(input, `it contains ${describeChar(char)}`);
    } else if (domainToASCII(`a${char}a`) === 'aa') {
      // UTS #46 maps it to nothing (variation selectors, the combining
      // grapheme joiner, Mongolian free variation selectors): the name asked
      // would not be the name shown.
      throw invalidName(input, `it contains an invisible character (${codePoint(char)}) that IDNA removes`);
    }
  }
  const ascii = domainToASCII(label);
  if (ascii === '' || ascii.includes('.')) {
    throw invalidName(input, `the label ${quoteForMessage(label)} is not a valid internationalised label (UTS #46)`);
  }
  if (!ASCII_LABEL.test(ascii)) {
    // UTS #46 without the STD3 rules maps compatibility characters to ASCII
    // that no host name may hold: superscript plus to "+", U+203C to "!!".
    throw invalidName(input, `the label ${quoteForMessage(label)} maps to ${quoteForMessage(ascii)} under IDNA (UTS #46), which is not allowed in a DNS name`);
  }
  const unicode = domainToUnicode(ascii);
  return { ascii, unicode: unicode === '' ? label : unicode };
}

function invalidName(input: string, reason: string): NetintelError {
  return new NetintelError('invalid_input', `invalid domain name ${quoteForMessage(input)}: ${reason}`, {
    details: { input },
  });
}

/**
 * The two things most often given where a domain is asked, an e-mail address
 * and a URL, named with the domain to give instead.
 */
function misplacedForm(input: string): string | undefined {
  const domain = /^[^@\s/]+@([^@\s/]+)$/.exec(input)?.[1];
  if (domain !== undefined) return `it is an e-mail address: give its domain, ${quoteForMessage(domain)}`;
  if (/^[a-z][a-z\d+.-]*:\/\//i.test(input) && URL.canParse(input)) {
    const host = new URL(input).hostname;
    if (host !== '') return `it is a URL: give its host name, ${quoteForMessage(host)}`;
  }
  return undefined;
}

function codePoint(char: string): string {
  return `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

function describeChar(char: string): string {
  const hex = codePoint(char);
  if (char === ' ') return 'a space';
  if (/\p{Z}/u.test(char)) return `a space character (${hex})`;
  if (/\p{Cc}/u.test(char)) return `a control character (${hex})`;
  if (/\p{Cf}/u.test(char)) return `an invisible format character (${hex})`;
  return `the character "${char}" (${hex}), which is not allowed in a DNS name`;
}

function truncate(text: string, max = 80): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max).join('')}…`;
}

/**
 * Quotes untrusted text for an error message: JSON escaping, plus `\uXXXX`
 * for C1 controls, invisible format characters and bidirectional overrides
 * that would otherwise reach a terminal raw. Long input is shortened.
 */
function quoteForMessage(text: string): string {
  return JSON.stringify(truncate(text)).replace(
    /[\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g,
    (char) => `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`,
  );
}
