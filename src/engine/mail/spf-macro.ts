/**
 * SPF macros (RFC 7208 §7): parsing a macro-string, checking a
 * domain-spec, expanding with the values of one check_host() call.
 */

/** One piece of a macro-string. */
export type MacroToken =
  | {
      kind: 'literal';
      text: string;
      /** True for `%%`, `%_` and `%-`, which the grammar counts as macro-expands (RFC 7208 §7.1). */
      escape: boolean;
    }
  | {
      kind: 'macro';
      /** The macro letter in lower case. */
      letter: MacroLetter;
      /** Written in upper case: the expansion is URL-escaped (RFC 7208 §7.3). */
      upper: boolean;
      /** How many right-hand parts to keep, null for all. */
      digits: number | null;
      reverse: boolean;
      /** Delimiters to split on; `.` when none are given. */
      delimiters: string;
    };

export type MacroLetter = 's' | 'l' | 'o' | 'd' | 'i' | 'p' | 'h' | 'c' | 'r' | 't' | 'v';

/** A syntax problem in a macro-string, `offset` counting from 0 within the string. */
export interface MacroSyntaxError {
  offset: number;
  message: string;
}

export type MacroParse = { ok: true; tokens: MacroToken[] } | { ok: false; error: MacroSyntaxError };

const DOMAIN_LETTERS = 'slodiphv';
// c, r and t are allowed only in explanation text (RFC 7208 §7.1).
const EXPLAIN_LETTERS = 'slodiphvcrt';
const TOPLABEL = /^(?:[a-z0-9]*[a-z][a-z0-9]*|[a-z0-9]+-[a-z0-9-]*[a-z0-9])$/i;

/**
 * Parses a macro-string. `domain` mode is the grammar of domain-spec and
 * modifier values (visible ASCII but `%`, letters s l o d i p h v);
 * `explain` mode is explain-string (spaces too, and c r t).
 */
export function parseMacroString(text: string, mode: 'domain' | 'explain'): MacroParse {
  const letters = mode === 'domain' ? DOMAIN_LETTERS : EXPLAIN_LETTERS;
  const tokens: MacroToken[] = [];
  let literal = '';
  const flush = () => {
    if (literal.length > 0) tokens.push({ kind: 'literal', text: literal, escape: false });
    literal = '';
  };
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    const code = char.charCodeAt(0);
    if (char !== '%') {
      const allowed = (code >= 0x21 && code <= 0x7e) || (mode === 'explain' && code === 0x20);
      if (!allowed) return failure(i, `${describeChar(char)} is not allowed here`);
      literal += char;
      continue;
    }
    const next = text[i + 1];
    if (next === '%' || next === '_' || next === '-') {
      flush();
      tokens.push({ kind: 'literal', text: next === '%' ? '%' : next === '_' ? ' ' : '%20', escape: true });
      i += 1;
      continue;
    }
    if (next !== '{') {
      return failure(i, `"%" must be followed by "{", "%", "_" or "-" (RFC 7208 §7.1)${next === undefined ? ', not end the string' : ''}`);
    }
    const close = text.indexOf('}', i + 2);
    if (close === -1) return failure(i, 'a macro "%{" is not closed with "}"');
    const body = text.slice(i + 2, close);
    const parsed = /^([a-zA-Z])([0-9]*)([rR]?)([.\-+,/_=]*)$/.exec(body);
    if (!parsed) return failure(i, `"%{${body}}" is not a valid macro (letter, digits, "r", delimiters)`);
    const [, letterText, digitText, reverseText, delimiters] = parsed as unknown as [string, string, string, string, string];
    const letter = letterText.toLowerCase();
    if (!letters.includes(letter)) {
      const where = 'crt'.includes(letter) ? ' (c, r and t are allowed only in explanation text)' : '';
      return failure(i + 2, `"${letterText}" is not a macro letter here${where}`);
    }
    let digits: number | null = null;
    if (digitText.length > 0) {
      digits = Number(digitText);
      if (digits === 0) return failure(i + 3, 'the number of parts to keep must not be zero (RFC 7208 §7.3)');
    }
    flush();
    tokens.push({
      kind: 'macro',
      letter: letter as MacroLetter,
      upper: letterText !== letter,
      digits,
      reverse: reverseText.length > 0,
      delimiters: delimiters.length > 0 ? delimiters : '.',
    });
    i = close;
  }
  flush();
  return { ok: true, tokens };
}

/**
 * Checks a domain-spec (RFC 7208 §7.1): a macro-string that ends with a
 * macro-expand or with `.` and a top label (not all-numeric, no leading or
 * trailing hyphen), optionally followed by a dot.
 */
export function parseDomainSpec(text: string): MacroParse {
  if (text.length === 0) return failure(0, 'the domain-spec is empty');
  const parsed = parseMacroString(text, 'domain');
  if (!parsed.ok) return parsed;
  const last = parsed.tokens[parsed.tokens.length - 1]!;
  if (last.kind === 'macro' || last.escape) return parsed;
  const tail = /\.([^.]+)\.?$/.exec(last.text);
  if (!tail) {
    return failure(text.length - 1, `"${text}" does not end with "." and a top-level label, nor with a macro (RFC 7208 §7.1)`);
  }
  if (!TOPLABEL.test(tail[1]!)) {
    return failure(
      text.length - last.text.length + tail.index + 1,
      `"${tail[1]}" is not a valid top-level label (letters, digits and inner hyphens, not all digits; RFC 7208 §7.1)`,
    );
  }
  return parsed;
}

/** True when the tokens hold a macro (not only literals and escapes). */
export function hasMacro(tokens: readonly MacroToken[]): boolean {
  return tokens.some((token) => token.kind === 'macro');
}

/** The values macros expand to within one check_host() call (RFC 7208 §7.2). */
export interface MacroValues {
  /** `<sender>`: local-part@domain. */
  s: string;
  l: string;
  o: string;
  /** `<domain>` of the current check_host() call. */
  d: string;
  /** The client IP: dotted quad, or 32 dot-separated nibbles for IPv6. */
  i: string;
  /** The validated domain name of the client IP, looked up only when used. */
  p: () => Promise<string>;
  /** `in-addr` for IPv4, `ip6` for IPv6. */
  v: string;
  h: string;
  /** The client IP in its usual text form (explanations only). */
  c: string;
  /** The receiving host (explanations only). */
  r: string;
  /** The current time in seconds since the epoch (explanations only). */
  t: string;
}

/** Expands parsed tokens (RFC 7208 §7.3: split, reverse, keep right-hand parts, URL-escape upper-case letters). */
export async function expandMacroTokens(tokens: readonly MacroToken[], values: MacroValues): Promise<string> {
  let out = '';
  for (const token of tokens) {
    if (token.kind === 'literal') {
      out += token.text;
      continue;
    }
    const value = token.letter === 'p' ? await values.p() : values[token.letter];
    let parts = splitOn(value, token.delimiters);
    if (token.reverse) parts = parts.reverse();
    if (token.digits !== null && token.digits < parts.length) parts = parts.slice(parts.length - token.digits);
    const expanded = parts.join('.');
    out += token.upper ? urlEscape(expanded) : expanded;
  }
  return out;
}

/**
 * A domain name from an expanded domain-spec, with the RFC 7208 §7.3 rule
 * for long names: over 253 characters, labels are removed from the left
 * until it fits. A trailing dot is dropped.
 */
export function truncateDomain(name: string): string {
  let current = name.endsWith('.') ? name.slice(0, -1) : name;
  while (current.length > 253) {
    const dot = current.indexOf('.');
    if (dot === -1) break;
    current = current.slice(dot + 1);
  }
  return current;
}

function splitOn(value: string, delimiters: string): string[] {
  if (delimiters === '.') return value.split('.');
  const parts: string[] = [];
  let current = '';
  for (const char of value) {
    if (delimiters.includes(char)) {
      parts.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  parts.push(current);
  return parts;
}

// RFC 3986 unreserved characters stay; everything else is percent-encoded (RFC 7208 §7.3).
function urlEscape(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function failure(offset: number, message: string): MacroParse {
  return { ok: false, error: { offset, message } };
}

/** Names a character for a message: printable ASCII as itself, the rest as U+XXXX. */
export function describeChar(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  if (code >= 0x21 && code <= 0x7e) return `"${char}"`;
  if (code === 0x20) return 'a space';
  return `the character U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}
