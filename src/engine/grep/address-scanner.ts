import { parseIpv4Fast, parseIpv6Text } from '../address/ip-text.js';

/** One address (or CIDR) found in a line of text. */
export interface AddressMatch {
  /** The text as it appears in the line: an address, with its zone index and `/length` when present. */
  text: string;
  /** Where the text starts in the line (UTF-16 index). */
  start: number;
  version: 4 | 6;
  /** The prefix length of a CIDR (only with `cidr`), else null. */
  prefix_length: number | null;
}

export interface ScanOptions {
  /** Report `address/length` as one match; otherwise the address of a CIDR alone. */
  cidr: boolean;
  /**
   * The versions the caller keeps (both when left out): a run that can hold
   * only addresses of the other one is not validated. Matches of either
   * version may still come from a run that can hold both (`::ffff:1.2.3.4`).
   */
  versions?: ReadonlySet<4 | 6>;
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
 * What every run that can hold an address has (see runEndingAt): three
 * dots, a `::`, or seven colons, with only hex digits, dots and colons
 * between; then the rest of the run. Most text holds few such runs, so the
 * regular expression engine finds them and the code below reads only
 * those.
 */
const ADDRESS_LIKE_RUN = /(?:\.[0-9A-Fa-f:]*\.[0-9A-Fa-f:]*\.|::|:(?:[0-9A-Fa-f.]*:){6})[0-9A-Fa-f.:]*/g;

/**
 * Every IPv4 and IPv6 address in a text, in order: a line, or whole lines
 * (a line end separates tokens as any other character does, so no match
 * spans one). Match positions are indices into the text. A candidate is a
 * maximal run of hex digits, dots and colons that neither starts nor ends
 * inside a word (`v1.2.3.4`, `1.2.3.4.in-addr.arpa` are not addresses); a
 * run that is longer than an address (`1.2.3.4.5`) or not one
 * (`256.1.1.1`, `01.2.3.4`, which resolvers read as octal) is dropped
 * whole rather than cut down to an address it only contains. Every
 * candidate is validated by the address parser the lookups use. Dots and a
 * single colon at either end are punctuation (`1.2.3.4.` ending a sentence,
 * `addr:1.2.3.4`, `1.2.3.4: refused`); `::` at either end is not. A run
 * that is not one address is read as addresses joined by colons, each
 * maybe followed by a port (`1.2.3.4:8080`, `::ffff:1.2.3.4:80`), or not
 * at all (see joinedAddresses).
 *
 * Code units past ASCII separate tokens, so a Latin-1 reading of UTF-8
 * bytes (one code unit per byte) gives the same addresses as the decoded
 * text, at byte offsets.
 */
export function scanLine(line: string, options: ScanOptions, found: AddressMatch[] = []): AddressMatch[] {
  const runs = ADDRESS_LIKE_RUN;
  runs.lastIndex = 0;
  while (runs.test(line)) {
    const end = runs.lastIndex;
    // A run that runs into a word is part of it (`1.2.3.4.example`, `1.2.3.4x`).
    if (end < line.length && classOf(line.charCodeAt(end)) === WORD) continue;
    runEndingAt(line, end, options, found);
  }
  return found;
}

/**
 * Reads back from `end`, the end of a run of hex digits, dots and colons,
 * to where the run starts: the start of its token, or, when a word comes
 * before it, the first dot or colon after the word's letters and digits
 * (`addr:1.2.3.4` is the word `addr` and the run `:1.2.3.4`; `v1.2.3.4`
 * is the word `v1` and the run `.2.3.4`).
 */
function runEndingAt(line: string, end: number, options: ScanOptions, found: AddressMatch[]): void {
  let dots = 0;
  let colons = 0;
  let elided = false;
  let firstSeparator = end;
  let i = end;
  for (; i > 0; i--) {
    const kind = classOf(line.charCodeAt(i - 1));
    if (kind === HEX) continue;
    if (kind === DOT) dots++;
    else if (kind === COLON) {
      colons++;
      if (firstSeparator === i) elided ||= line.charCodeAt(i) === 58;
    } else break;
    firstSeparator = i - 1;
  }
  const afterWord = i > 0 && classOf(line.charCodeAt(i - 1)) === WORD;
  const start = afterWord ? firstSeparator : i;
  // Every dot and colon read is in the run (from its first separator on). An IPv4 address, and the
  // dotted quad that ends some IPv6 text, has three dots; IPv6 text without one has eight groups or a `::`
  // (RFC 4291 §2.2). Runs with none of these hold no address: version numbers, times of day (`06:00:00`).
  if (dots < 3 && colons < 7 && !elided) return;
  // Without a dot a run can hold IPv6 text alone; without a colon, an IPv4 address alone.
  const { versions } = options;
  if (versions !== undefined && ((dots === 0 && !versions.has(6)) || (colons === 0 && !versions.has(4)))) return;
  // `host.1.2.3.4` is a name and `x::1` a scoped identifier (`std::vector`): a dot or `::` glued to a
  // word continues it. `addr:1.2.3.4` and `IPv6:2001:db8::1` (one colon) are labelled addresses.
  const c = line.charCodeAt(start);
  const gluedToWord = c === 46 || (c === 58 && line.charCodeAt(start + 1) === 58);
  if (gluedToWord && afterWord) return;
  candidate(line, start, end, colons > 0, options, found);
}

function candidate(line: string, runStart: number, runEnd: number, hasColon: boolean, options: ScanOptions, found: AddressMatch[]): void {
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
  let lastColon = -1;
  let lastDot = -1;
  // Most runs (IPv4 addresses, version numbers) hold no colon: nothing to locate.
  if (hasColon) {
    for (let i = start; i < end; i++) {
      const c = line.charCodeAt(i);
      if (c === 58) lastColon = i;
      else if (c === 46) lastDot = i;
    }
  }
  if (lastColon === -1) {
    if (parseIpv4Fast(line, start, end) >= 0) push(line, line.slice(start, end), start, end, end === runEnd, 4, options, found);
    return;
  }
  // RFC 4291 §2.2: a dotted quad is the last part of IPv6 text, so a run with a dot before a colon is not one address.
  if (lastDot === -1 || lastDot > lastColon) {
    const text = line.slice(start, end);
    if (hasHexDigit(text) && parseIpv6Text(text) !== null) {
      // A zone index (RFC 6874 §2 `%25` in URLs aside) follows the address directly.
      const zoneEnd = end === runEnd ? zoneEndAt(line, end) : end;
      const full = zoneEnd > end && parseIpv6Text(line.slice(start, zoneEnd)) !== null ? zoneEnd : end;
      push(line, line.slice(start, full), start, full, full === runEnd || full > end, 6, options, found);
      return;
    }
    // Without a dotted quad nothing ends an address inside the run (`2001:db8::1::`, `10:30:00`).
    if (lastDot === -1) return;
  }
  joinedAddresses(line, start, end, runEnd, options, found);
}

/**
 * Reads text[start, end), a run that is not one address, as addresses
 * joined by colons, each maybe followed by `:port` (`1.2.3.4:8080`,
 * `::ffff:1.2.3.4:80`, `192.0.2.1:5060:198.51.100.7:5060`). A dotted quad
 * ends an address, IPv6 included, so each address runs from where the last
 * one (or its port) ended to the end of the next dotted quad, or to the end
 * of the run; at each step an address is preferred to a port. Every part
 * of the run must read so, or the run gives nothing: `::ffff:1.2.3.4` is
 * never cut down to `1.2.3.4`, nor `abc:1.2.3.4` or `1.2.3.4::` to
 * `1.2.3.4`.
 */
function joinedAddresses(line: string, start: number, end: number, runEnd: number, options: ScanOptions, found: AddressMatch[]): void {
  const mark = found.length;
  let from = start;
  let afterAddress = false;
  for (;;) {
    const dot = indexIn(line, 46, from, end);
    const colon = dot === -1 ? -1 : indexIn(line, 58, dot, end);
    const to = colon === -1 ? end : colon;
    // The whole run is known not to be an address.
    const version = from === start && to === end ? 0 : addressVersion(line, from, to);
    if (version !== 0) {
      push(line, line.slice(from, to), from, to, to === runEnd, version, options, found);
      if (to === end) return;
      from = to + 1;
      afterAddress = true;
      continue;
    }
    const portEnd = afterAddress ? portEndAt(line, from, end) : -1;
    if (portEnd === -1) {
      found.length = mark;
      return;
    }
    if (portEnd === end) return;
    from = portEnd + 1;
    afterAddress = false;
  }
}

/** 4 or 6 when text[from, to) is an address (never `::` alone), else 0. */
function addressVersion(line: string, from: number, to: number): 0 | 4 | 6 {
  if (to - from < 2) return 0;
  if (indexIn(line, 58, from, to) === -1) return parseIpv4Fast(line, from, to) >= 0 ? 4 : 0;
  const text = line.slice(from, to);
  return hasHexDigit(text) && parseIpv6Text(text) !== null ? 6 : 0;
}

/** The index of the code unit `code` in line[from, to), or -1: indexOf would search on past `to`. */
function indexIn(line: string, code: number, from: number, to: number): number {
  for (let i = from; i < to; i++) if (line.charCodeAt(i) === code) return i;
  return -1;
}

/** Where a port number (0 to 65535, one to five digits) that starts at `at` ends, before a colon or `end`; -1 when there is none. */
function portEndAt(line: string, at: number, end: number): number {
  let i = at;
  let value = 0;
  while (i < end && i - at < 6) {
    const c = line.charCodeAt(i);
    if (c < 48 || c > 57) break;
    value = value * 10 + (c - 48);
    i++;
  }
  if (i === at || i - at > 5 || value > 65535) return -1;
  return i === end || line.charCodeAt(i) === 58 ? i : -1;
}

function push(line: string, text: string, start: number, end: number, atRunEnd: boolean, version: 4 | 6, options: ScanOptions, found: AddressMatch[]): void {
  if (options.cidr && atRunEnd) {
    const prefix = prefixAt(line, end, version === 4 ? 32 : 128);
    if (prefix !== null) {
      found.push({ text: line.slice(start, prefix.end), start, version, prefix_length: prefix.length });
      return;
    }
  }
  found.push({ text, start, version, prefix_length: null });
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
