import { parseIpv4Fast, parseIpv6Text } from '../ip/ip-text.js';

/** One address (or CIDR) found in a line of text. */
export interface AddressMatch {
  /** The text as it appears in the line: an address, with its zone index and `/length` when present. */
  text: string;
  /** Where the text starts in the line (UTF-16 index). */
  start: number;
  version: 4 | 6;
  /** The prefix length of a CIDR (only with `cidr`), else null. */
  prefixLength: number | null;
}

export interface ScanOptions {
  /** Report `address/length` as one match; otherwise the address of a CIDR alone. */
  cidr: boolean;
}

// Character classes, indexed by code unit (ASCII only; every other code unit separates tokens).
const OTHER = 0;
const HEX = 1;
const DOT = 2;
const COLON = 3;
/** Letters past f and the underscore: a token that runs into one is a word, not an address. */
const WORD = 4;

const CLASS = new Uint8Array(128);
for (let c = 48; c <= 57; c++) CLASS[c] = HEX;
for (let c = 65; c <= 90; c++) CLASS[c] = c <= 70 ? HEX : WORD;
for (let c = 97; c <= 122; c++) CLASS[c] = c <= 102 ? HEX : WORD;
CLASS[95] = WORD;
CLASS[46] = DOT;
CLASS[58] = COLON;

const PERCENT = 37;
const SLASH = 47;

function classOf(c: number): number {
  return c < 128 ? CLASS[c]! : OTHER;
}

/**
 * Every IPv4 and IPv6 address in a line of text, in order. A candidate is a
 * maximal run of hex digits, dots and colons that neither starts nor ends
 * inside a word (`v1.2.3.4`, `1.2.3.4.in-addr.arpa` are not addresses); a
 * run that is longer than an address (`1.2.3.4.5`) or not one
 * (`256.1.1.1`, `01.2.3.4`, which resolvers read as octal) is dropped
 * whole rather than cut down to an address it only contains. Every
 * candidate is validated by the address parser the lookups use. Dots and a
 * single colon at either end are punctuation (`1.2.3.4.` ending a sentence,
 * `addr:1.2.3.4`, `1.2.3.4: refused`); a colon inside a run that is not an
 * IPv6 address separates IPv4 addresses (`1.2.3.4:8080`).
 */
export function scanLine(line: string, options: ScanOptions, found: AddressMatch[] = []): AddressMatch[] {
  const length = line.length;
  let i = 0;
  while (i < length) {
    const c = line.charCodeAt(i);
    const kind = c < 128 ? CLASS[c]! : OTHER;
    if (kind === OTHER) {
      i++;
      continue;
    }
    if (kind === WORD) {
      // Skip the rest of the word, hex letters and digits included.
      i++;
      while (i < length) {
        const k = classOf(line.charCodeAt(i));
        if (k !== HEX && k !== WORD) break;
        i++;
      }
      continue;
    }
    const start = i;
    let dots = 0;
    let colons = 0;
    while (i < length) {
      const k = classOf(line.charCodeAt(i));
      if (k === HEX) {
        // nothing to count
      } else if (k === DOT) dots++;
      else if (k === COLON) colons++;
      else break;
      i++;
    }
    const end = i;
    // An address needs three dots or two colons; most runs (numbers, hex words) stop here.
    if (dots < 3 && colons < 2) continue;
    // `host.1.2.3.4` is a name and `x::1` a scoped identifier (`std::vector`): a dot or `::` glued to a
    // word continues it. `addr:1.2.3.4` and `IPv6:2001:db8::1` (one colon) are labelled addresses.
    const gluedToWord = c === 46 || (c === 58 && line.charCodeAt(start + 1) === 58);
    const before = start > 0 ? classOf(line.charCodeAt(start - 1)) : OTHER;
    if (gluedToWord && (before === WORD || before === HEX)) continue;
    if (i < length && classOf(line.charCodeAt(i)) === WORD) {
      while (i < length && (classOf(line.charCodeAt(i)) === WORD || classOf(line.charCodeAt(i)) === HEX)) i++;
      continue;
    }
    candidate(line, start, end, options, found);
  }
  return found;
}

function candidate(line: string, runStart: number, runEnd: number, options: ScanOptions, found: AddressMatch[]): void {
  let start = runStart;
  let end = runEnd;
  // Punctuation at the ends: dots, and a single colon (`::` belongs to IPv6).
  for (;;) {
    const c = line.charCodeAt(start);
    if (c === 46 || (c === 58 && line.charCodeAt(start + 1) !== 58)) start++;
    else break;
  }
  for (;;) {
    const c = line.charCodeAt(end - 1);
    if (end > start && (c === 46 || (c === 58 && line.charCodeAt(end - 2) !== 58))) end--;
    else break;
  }
  if (end - start < 2) return;
  const text = line.slice(start, end);
  if (!text.includes(':')) {
    if (parseIpv4Fast(text) >= 0) push(line, text, start, end, end === runEnd, 4, options, found);
    return;
  }
  if (hasHexDigit(text) && parseIpv6Text(text) !== null) {
    // A zone index (RFC 6874 §2 `%25` in URLs aside) follows the address directly.
    const zoneEnd = end === runEnd ? zoneEndAt(line, end) : end;
    const full = zoneEnd > end && parseIpv6Text(line.slice(start, zoneEnd)) !== null ? zoneEnd : end;
    push(line, line.slice(start, full), start, full, full === runEnd || full > end, 6, options, found);
    return;
  }
  // Not IPv6: colons separate what may be IPv4 addresses and ports.
  let from = start;
  while (from < end) {
    let to = line.indexOf(':', from);
    if (to === -1 || to > end) to = end;
    if (to - from >= 7 && parseIpv4Fast(line, from, to) >= 0) {
      push(line, line.slice(from, to), from, to, to === runEnd, 4, options, found);
    }
    from = to + 1;
  }
}

function push(line: string, text: string, start: number, end: number, atRunEnd: boolean, version: 4 | 6, options: ScanOptions, found: AddressMatch[]): void {
  if (options.cidr && atRunEnd) {
    const prefix = prefixAt(line, end, version === 4 ? 32 : 128);
    if (prefix !== null) {
      found.push({ text: line.slice(start, prefix.end), start, version, prefixLength: prefix.length });
      return;
    }
  }
  found.push({ text, start, version, prefixLength: null });
}

/** `/length` right after an address (at `at`), ending at a token boundary, with a length the version allows. */
function prefixAt(line: string, at: number, max: number): { length: number; end: number } | null {
  if (line.charCodeAt(at) !== SLASH) return null;
  let i = at + 1;
  let value = 0;
  while (i < line.length && i - at <= 3) {
    const c = line.charCodeAt(i);
    if (c < 48 || c > 57) break;
    value = value * 10 + (c - 48);
    i++;
  }
  const digits = i - at - 1;
  if (digits === 0 || (digits > 1 && line.charCodeAt(at + 1) === 48) || value > max) return null;
  if (i < line.length) {
    const k = classOf(line.charCodeAt(i));
    // `/24.` ends a sentence; `/245` or `/24x` is not a prefix length.
    if (k === HEX || k === WORD || (k === DOT && classOf(line.charCodeAt(i + 1)) === HEX)) return null;
  }
  return { length: value, end: i };
}

/** Where a zone index (`%eth0`) that starts at `at` ends, or `at` when there is none. */
function zoneEndAt(line: string, at: number): number {
  if (line.charCodeAt(at) !== PERCENT) return at;
  let i = at + 1;
  while (i < line.length && isZoneCode(line.charCodeAt(i))) i++;
  // A zone's own trailing dots are sentence punctuation.
  while (i > at + 1 && line.charCodeAt(i - 1) === 46) i--;
  return i > at + 1 ? i : at;
}

function isZoneCode(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45 || c === 46 || c === 95;
}

function hasHexDigit(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (classOf(text.charCodeAt(i)) === HEX) return true;
  return false;
}
