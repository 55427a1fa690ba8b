import { isIPv4Text, isIPv6Text } from '../address/ip-text.js';
import { describeChar, parseDomainSpec, parseMacroString, type MacroToken } from './spf-macro.js';

/**
 * The SPF record grammar of RFC 7208 §4.5, §4.6.1, §5, §6 and §12: the
 * version, terms separated by spaces, mechanisms with their arguments and
 * CIDR lengths, modifiers. The whole record is checked before anything is
 * evaluated (RFC 7208 §4.6: a syntax error anywhere gives permerror).
 */

export type SpfQualifier = '+' | '-' | '~' | '?';

export const SPF_MECHANISMS = ['all', 'include', 'a', 'mx', 'ptr', 'ip4', 'ip6', 'exists'] as const;
export type SpfMechanismName = (typeof SPF_MECHANISMS)[number];

/** One term of a record, as shown in results. */
export interface SpfTerm {
  /** 1-based position of the term's first character in the record. */
  position: number;
  /** The term as written. */
  text: string;
  kind: 'mechanism' | 'modifier';
  /** Mechanisms: the qualifier, `+` when none is written. Modifiers: null. */
  qualifier: SpfQualifier | null;
  /** The mechanism or modifier name in lower case. */
  name: string;
  /** The domain-spec, network or modifier value as written; null when the term has none. */
  value: string | null;
  /** The IPv4 CIDR length written (`a/24`, `ip4:192.0.2.0/24`), null when absent. */
  cidr4: number | null;
  /** The IPv6 CIDR length written (`a//64`, `ip6:2001:db8::/32`), null when absent. */
  cidr6: number | null;
  /** True for the terms that count toward the 10-lookup limit: include, a, mx, ptr, exists, redirect (RFC 7208 §4.6.4). */
  counts_lookup: boolean;
  /** Modifiers: true for redirect and exp, false for modifiers RFC 7208 does not define (ignored, §6). */
  known: boolean;
}

/** A problem that makes the record a permerror (RFC 7208 §4.6, §5, §6). */
export interface SpfProblem {
  code: 'syntax' | 'unknown_mechanism' | 'duplicate_modifier';
  /** 1-based position in the record of the offending character or term. */
  position: number;
  /** The term it is in, null when it concerns the record as a whole. */
  term: string | null;
  message: string;
}

/** A parsed term with what evaluation needs. */
export interface ParsedSpfTerm extends SpfTerm {
  /** The parsed domain-spec (or modifier value), null when the term has none. */
  tokens: MacroToken[] | null;
  /** ip4/ip6: the network's bytes (4 or 16). */
  network: Uint8Array | null;
}

export interface ParsedSpfRecord {
  text: string;
  /** Every term that parsed, in record order (a term with a problem is left out). */
  terms: ParsedSpfTerm[];
  /** Every problem, in record order; empty for a valid record. */
  problems: SpfProblem[];
  redirect: ParsedSpfTerm | null;
  exp: ParsedSpfTerm | null;
}

/** True when a TXT string is an SPF version 1 record: `v=spf1` alone or followed by a space (RFC 7208 §4.5, case-insensitive). */
export function isSpfRecordText(text: string): boolean {
  return /^v=spf1(?: |$)/i.test(text);
}

/** The public form of a term (no parser internals). */
export function publicTerm(term: ParsedSpfTerm): SpfTerm {
  const { tokens: _tokens, network: _network, ...rest } = term;
  return rest;
}

/**
 * Parses a record that {@link isSpfRecordText} accepts. Never throws: every
 * problem is listed with its position.
 */
export function parseSpfRecord(text: string): ParsedSpfRecord {
  const terms: ParsedSpfTerm[] = [];
  const problems: SpfProblem[] = [];
  let redirect: ParsedSpfTerm | null = null;
  let exp: ParsedSpfTerm | null = null;
  if (!isSpfRecordText(text)) {
    problems.push({ code: 'syntax', position: 1, term: null, message: 'the record does not start with "v=spf1" followed by a space (RFC 7208 §4.5)' });
    return { text, terms, problems, redirect, exp };
  }
  let i = 6;
  while (i < text.length) {
    if (text[i] === ' ') {
      i += 1;
      continue;
    }
    let end = text.indexOf(' ', i);
    if (end === -1) end = text.length;
    const token = text.slice(i, end);
    const parsed = parseTerm(token, i + 1);
    if ('problem' in parsed) {
      problems.push(parsed.problem);
    } else {
      const term = parsed.term;
      if (term.kind === 'modifier' && (term.name === 'redirect' || term.name === 'exp')) {
        const seen = term.name === 'redirect' ? redirect : exp;
        if (seen) {
          problems.push({
            code: 'duplicate_modifier',
            position: term.position,
            term: term.text,
            message: `"${term.name}" appears more than once (at positions ${seen.position} and ${term.position}); each may appear at most once (RFC 7208 §6)`,
          });
        } else if (term.name === 'redirect') {
          redirect = term;
        } else {
          exp = term;
        }
      }
      terms.push(term);
    }
    i = end;
  }
  return { text, terms, problems, redirect, exp };
}

type TermParse = { term: ParsedSpfTerm } | { problem: SpfProblem };

const MODIFIER = /^([A-Za-z][A-Za-z0-9_.-]*)=(.*)$/s;
const DUAL_CIDR = /^(?:\/(0|[1-9][0-9]*))?(?:\/\/(0|[1-9][0-9]*))?$/;
const SPEC_AND_CIDR = /^(.*?)((?:\/(?:0|[1-9][0-9]*))?(?:\/\/(?:0|[1-9][0-9]*))?)$/s;
const IP4_NETWORK = /^((?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])(?:\.(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])){3})(?:\/(0|[1-9][0-9]*))?$/;

/** A syntax problem `offset` characters into what is being read. */
type SyntaxAt = (offset: number, message: string) => TermParse;

function parseTerm(token: string, position: number): TermParse {
  const syntax: SyntaxAt = (offset, message) => ({
    problem: { code: 'syntax', position: position + offset, term: token, message },
  });
  for (let k = 0; k < token.length; k++) {
    const code = token.charCodeAt(k);
    if (code < 0x21 || code > 0x7e) {
      return syntax(
        k,
        `${describeChar(token[k]!)} is not allowed: terms hold printable ASCII and are separated by spaces only (RFC 7208 §3, §4.6.1)`,
      );
    }
  }
  const modifier = MODIFIER.exec(token);
  return modifier ? parseModifier(token, position, modifier, syntax) : parseMechanism(token, position, syntax);
}

function parseModifier(token: string, position: number, modifier: RegExpExecArray, syntax: SyntaxAt): TermParse {
  const name = modifier[1]!.toLowerCase();
  const value = modifier[2]!;
  const valueOffset = modifier[1]!.length + 1;
  const known = name === 'redirect' || name === 'exp';
  const parsed = known ? parseDomainSpec(value) : parseMacroString(value, 'domain');
  if (!parsed.ok) {
    const what = known ? `the ${name} target` : `the value of the modifier "${name}"`;
    return syntax(valueOffset + parsed.error.offset, `${what}: ${parsed.error.message}`);
  }
  return {
    term: {
      position,
      text: token,
      kind: 'modifier',
      qualifier: null,
      name,
      value,
      cidr4: null,
      cidr6: null,
      counts_lookup: name === 'redirect',
      known,
      tokens: parsed.tokens,
      network: null,
    },
  };
}

function parseMechanism(token: string, position: number, syntax: SyntaxAt): TermParse {
  const qualifier = /^[+\-~?]/.test(token) ? (token[0] as SpfQualifier) : null;
  const rest = qualifier ? token.slice(1) : token;
  const qOffset = qualifier ? 1 : 0;
  const nameMatch = /^[^:/]*/.exec(rest)![0];
  const name = nameMatch.toLowerCase();
  if (nameMatch.includes('=')) {
    if (qualifier && MODIFIER.test(rest)) return syntax(0, 'a modifier takes no qualifier (RFC 7208 §4.6.1)');
    return syntax(qOffset, `"${rest}" is not a valid modifier: a modifier name starts with a letter and holds letters, digits, "-", "_" and "." (RFC 7208 §6, §12)`);
  }
  if (name.length === 0) return syntax(qOffset, 'a mechanism name is missing');
  if (!(SPF_MECHANISMS as readonly string[]).includes(name)) {
    return {
      problem: {
        code: 'unknown_mechanism',
        position: position + qOffset,
        term: token,
        message: `"${nameMatch}" is not a mechanism (all, include, a, mx, ptr, ip4, ip6, exists; RFC 7208 §5)`,
      },
    };
  }
  const args = rest.slice(nameMatch.length);
  const argsOffset = qOffset + nameMatch.length;
  const base: ParsedSpfTerm = {
    position,
    text: token,
    kind: 'mechanism',
    qualifier: qualifier ?? '+',
    name,
    value: null,
    cidr4: null,
    cidr6: null,
    counts_lookup: name === 'include' || name === 'a' || name === 'mx' || name === 'ptr' || name === 'exists',
    known: true,
    tokens: null,
    network: null,
  };
  return parseArguments(name as SpfMechanismName, args, base, (offset, message) => syntax(argsOffset + offset, message));
}

/** What follows a mechanism's name (`args`, from its ":" or "/"), as RFC 7208 §5 has each take it. */
function parseArguments(name: SpfMechanismName, args: string, base: ParsedSpfTerm, syntax: SyntaxAt): TermParse {
  switch (name) {
    case 'all':
      return args.length === 0 ? { term: base } : syntax(0, '"all" takes no argument nor CIDR length (RFC 7208 §5.1)');
    case 'include':
    case 'exists': {
      if (!args.startsWith(':')) return syntax(0, `"${name}" needs ":" and a domain (RFC 7208 §5.2, §5.7)`);
      return domainArgument(args, base, syntax);
    }
    case 'ptr': {
      if (args.length === 0) return { term: base };
      if (!args.startsWith(':')) return syntax(0, '"ptr" takes ":" and a domain, no CIDR length (RFC 7208 §5.5)');
      return domainArgument(args, base, syntax);
    }
    case 'a':
    case 'mx':
      return hostArguments(name, args, base, syntax);
    case 'ip4':
      return ip4Argument(args, base, syntax);
    case 'ip6':
      return ip6Argument(args, base, syntax);
  }
}

/** `:domain-spec` of include, exists and ptr. */
function domainArgument(args: string, base: ParsedSpfTerm, syntax: SyntaxAt): TermParse {
  const spec = parseDomainSpec(args.slice(1));
  if (!spec.ok) return syntax(1 + spec.error.offset, spec.error.message);
  return { term: { ...base, value: args.slice(1), tokens: spec.tokens } };
}

/** `[:domain-spec][dual-cidr-length]` of a and mx. */
function hostArguments(name: 'a' | 'mx', args: string, base: ParsedSpfTerm, syntax: SyntaxAt): TermParse {
  if (args.length === 0) return { term: base };
  if (args.startsWith('/')) {
    const cidr = dualCidr(args);
    if (typeof cidr === 'string') return syntax(0, cidr);
    return { term: { ...base, ...cidr } };
  }
  if (!args.startsWith(':')) return syntax(0, `"${name}" is followed by ":" and a domain or by a CIDR length (RFC 7208 §5.3, §5.4)`);
  const split = SPEC_AND_CIDR.exec(args.slice(1))!;
  const specText = split[1]!;
  const cidr = dualCidr(split[2]!);
  if (typeof cidr === 'string') return syntax(1 + specText.length, cidr);
  const spec = parseDomainSpec(specText);
  if (!spec.ok) return syntax(1 + spec.error.offset, spec.error.message);
  return { term: { ...base, value: specText, tokens: spec.tokens, ...cidr } };
}

function ip4Argument(args: string, base: ParsedSpfTerm, syntax: SyntaxAt): TermParse {
  if (!args.startsWith(':')) return syntax(0, '"ip4" needs ":" and an IPv4 network (RFC 7208 §5.6)');
  const match = IP4_NETWORK.exec(args.slice(1));
  if (!match) {
    return syntax(
      1,
      `"${args.slice(1)}" is not an IPv4 network: four decimal octets without leading zeros, optionally "/" and a prefix length 0-32 (RFC 7208 §5.6)`,
    );
  }
  const cidr4 = match[2] === undefined ? null : Number(match[2]);
  if (cidr4 !== null && cidr4 > 32) return syntax(1 + match[1]!.length, `the IPv4 prefix length ${cidr4} is over 32 (RFC 7208 §5.6)`);
  return { term: { ...base, value: args.slice(1), cidr4, network: ipv4Bytes(match[1]!) } };
}

function ip6Argument(args: string, base: ParsedSpfTerm, syntax: SyntaxAt): TermParse {
  if (!args.startsWith(':')) return syntax(0, '"ip6" needs ":" and an IPv6 network (RFC 7208 §5.6)');
  const text = args.slice(1);
  const slash = text.indexOf('/');
  const network = slash === -1 ? text : text.slice(0, slash);
  const length = slash === -1 ? null : text.slice(slash + 1);
  if (!isIPv6Text(network) || network.includes('%')) {
    return syntax(1, `"${network}" is not an IPv6 address (RFC 7208 §5.6)`);
  }
  if (length !== null && (!/^(0|[1-9][0-9]{0,2})$/.test(length) || Number(length) > 128)) {
    return syntax(2 + network.length, `"/${length}" is not an IPv6 prefix length 0-128 (RFC 7208 §5.6)`);
  }
  return { term: { ...base, value: text, cidr6: length === null ? null : Number(length), network: ipv6Bytes(network) } };
}

/** Parses `[/n][//m]`; a message string when it is not valid. */
function dualCidr(text: string): { cidr4: number | null; cidr6: number | null } | string {
  const match = DUAL_CIDR.exec(text);
  if (!match) return `"${text}" is not a CIDR length ("/n" for IPv4 and/or "//m" for IPv6; RFC 7208 §5.3)`;
  const cidr4 = match[1] === undefined ? null : Number(match[1]);
  const cidr6 = match[2] === undefined ? null : Number(match[2]);
  if (cidr4 !== null && cidr4 > 32) return `the IPv4 prefix length ${cidr4} is over 32 (RFC 7208 §5.6)`;
  if (cidr6 !== null && cidr6 > 128) return `the IPv6 prefix length ${cidr6} is over 128 (RFC 7208 §5.6)`;
  return { cidr4, cidr6 };
}

function ipv4Bytes(text: string): Uint8Array {
  return Uint8Array.from(text.split('.').map(Number));
}

/** The 16 bytes of an IPv6 address in any RFC 4291 text form (a dotted-quad tail included). */
export function ipv6Bytes(text: string): Uint8Array {
  let input = text;
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(input);
  if (tail && isIPv4Text(tail[1]!)) {
    const [a, b, c, d] = tail[1]!.split('.').map(Number) as [number, number, number, number];
    input = `${input.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = input.includes('::') ? (input.split('::') as [string, string]) : [input, null];
  const headGroups = head.length > 0 ? head.split(':') : [];
  const tailGroups = rest !== null && rest.length > 0 ? rest.split(':') : [];
  const zeros = 8 - headGroups.length - tailGroups.length;
  const groups = rest === null ? headGroups : [...headGroups, ...Array<string>(zeros).fill('0'), ...tailGroups];
  const bytes = new Uint8Array(16);
  groups.forEach((group, index) => {
    const value = parseInt(group, 16);
    bytes[index * 2] = value >> 8;
    bytes[index * 2 + 1] = value & 0xff;
  });
  return bytes;
}

/** True when the first `prefix` bits of `address` and `network` agree (same length arrays). */
export function inNetwork(address: Uint8Array, network: Uint8Array, prefix: number): boolean {
  if (address.length !== network.length) return false;
  let bits = prefix;
  for (let i = 0; bits > 0 && i < address.length; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((address[i]! & mask) !== (network[i]! & mask)) return false;
  }
  return true;
}
