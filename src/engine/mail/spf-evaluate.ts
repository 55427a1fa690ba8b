import { NetintelError } from '../../errors.js';
import type { IpAddress } from '../address/ip-address.js';
import { dnsNameProblem, type MailDns } from './mail-dns.js';
import { expandMacroTokens, parseDomainSpec, parseMacroString, truncateDomain, type MacroToken, type MacroValues } from './spf-macro.js';
import { inNetwork, ipv6Bytes, isSpfRecordText, parseSpfRecord, type ParsedSpfRecord, type ParsedSpfTerm, type SpfQualifier } from './spf-record.js';

/** The results of check_host(), spelled as RFC 7208 §2.6 spells them. */
export type SpfResultCode = 'pass' | 'fail' | 'softfail' | 'neutral' | 'none' | 'temperror' | 'permerror';

/** Processing limits of RFC 7208 §4.6.4. */
export const SPF_LOOKUP_LIMIT = 10;
export const SPF_VOID_LOOKUP_LIMIT = 2;
/** At most this many MX names are looked up for one `mx` term, and PTR names checked for `ptr` / `%{p}`. */
const MX_PTR_NAME_LIMIT = 10;

/** One step on the way to the matched mechanism: a term of the record published at `domain`. */
export interface SpfPathStep {
  domain: string;
  term: string;
}

/** The mechanism that decided the result, and how evaluation got to it. */
export interface SpfMatch {
  /** The mechanism as written (`ip4:192.0.2.0/24`). */
  mechanism: string;
  qualifier: SpfQualifier;
  /** The domain whose record holds it. */
  domain: string;
  /** From the checked domain's record to the mechanism: each include or redirect taken, then the mechanism itself. */
  path: SpfPathStep[];
}

/** What check_host() is asked: the client IP and the identities of the SMTP session. */
export interface SpfEvaluationInput {
  /** The client IP (IPv4-mapped IPv6 counts as IPv4, RFC 7208 §5). */
  ip: IpAddress;
  /** MAIL FROM as given (`user@domain`, `@domain`), or null/empty for the null reverse-path (then `postmaster@<helo>`). */
  sender: string | null;
  /** HELO/EHLO name, null when unknown. */
  helo: string | null;
  /** The receiving host for the `%{r}` macro (default `unknown`). */
  receiver?: string;
  /**
   * The domain whose policy is checked (check_host()'s `<domain>`); default:
   * the sender's domain, or the HELO name for the null reverse-path.
   */
  domain?: string;
}

/** The outcome of check_host() for one client IP. */
export interface SpfEvaluation {
  /** The client IP, canonical text. */
  ip: string;
  /** The sender used (`postmaster@<helo>` for the null reverse-path), null when there is none. */
  sender: string | null;
  helo: string | null;
  /** The domain checked: the sender's domain, or the HELO name for the null reverse-path. */
  domain: string;
  result: SpfResultCode;
  /** The mechanism that matched, null when none did (default neutral, none, errors). */
  matched: SpfMatch | null;
  /** The explanation from `exp=` (RFC 7208 §6.2) for a fail, null when there is none. */
  explanation: string | null;
  /** Why the result is what it is, for people. */
  reason: string;
  /** DNS-querying terms evaluated (include, a, mx, ptr, exists, redirect). */
  lookups: number;
  /** Lookups that returned no records or NXDOMAIN. */
  void_lookups: number;
}

class SpfStop extends Error {
  constructor(
    readonly result: 'permerror' | 'temperror',
    readonly reason: string,
  ) {
    super(reason);
  }
}

interface HostOutcome {
  result: SpfResultCode;
  matched: SpfMatch | null;
  reason: string;
  /** The exp= of the record that decided the result, with the domain it is evaluated for. */
  exp: { term: ParsedSpfTerm; domain: string } | null;
}

interface State {
  dns: MailDns;
  ip: IpAddress;
  sender: string;
  local: string;
  senderDomain: string;
  helo: string;
  receiver: string;
  nowSeconds: number;
  lookups: number;
  voids: number;
  validatedNames: Map<string, Promise<string[]>>;
}

/**
 * RFC 7208 check_host(): evaluates the SPF policy of the sender's domain
 * (or the HELO name for the null reverse-path) for one client IP, with
 * every mechanism, macros, `redirect`, `exp` and the processing limits
 * (10 DNS-querying terms, 2 void lookups, 10 MX and PTR names).
 *
 * Never throws for DNS trouble: timeouts and server failures are
 * `temperror` results, as RFC 7208 §2.6.6 defines them.
 */
export async function evaluateSpf(dns: MailDns, input: SpfEvaluationInput, now: Date = new Date()): Promise<SpfEvaluation> {
  const helo = input.helo ?? '';
  const rawSender = input.sender ?? '';
  // RFC 7208 §2.4: the null reverse-path is checked as postmaster@<helo>.
  const fallback = helo.length > 0 ? helo : (input.domain ?? '');
  const sender = rawSender.length > 0 ? rawSender : fallback.length > 0 ? `postmaster@${fallback}` : '';
  const at = sender.lastIndexOf('@');
  const localPart = at > 0 ? sender.slice(0, at) : 'postmaster';
  const senderDomain = at >= 0 ? sender.slice(at + 1) : sender;
  const checked = input.domain ?? senderDomain;
  const domain = checked.endsWith('.') ? checked.slice(0, -1) : checked;
  const state: State = {
    dns,
    ip: input.ip,
    sender: at >= 0 ? `${localPart}@${senderDomain}` : sender,
    local: localPart,
    senderDomain,
    helo,
    receiver: input.receiver ?? 'unknown',
    nowSeconds: Math.floor(now.getTime() / 1000),
    lookups: 0,
    voids: 0,
    validatedNames: new Map(),
  };
  const base = {
    ip: input.ip.text,
    sender: sender.length > 0 ? state.sender : null,
    helo: input.helo,
    domain,
  };
  const done = (outcome: Omit<SpfEvaluation, keyof typeof base | 'lookups' | 'void_lookups'>): SpfEvaluation => ({
    ...base,
    ...outcome,
    lookups: state.lookups,
    void_lookups: state.voids,
  });

  // RFC 7208 §4.3: a malformed or single-label domain gives "none" at once.
  const problem = domainProblem(domain);
  if (problem !== null) {
    return done({ result: 'none', matched: null, explanation: null, reason: `"${domain}" is not a domain that can have SPF: ${problem} (RFC 7208 §4.3)` });
  }
  let outcome: HostOutcome;
  try {
    outcome = await checkHost(state, domain, []);
  } catch (error) {
    if (error instanceof SpfStop) return done({ result: error.result, matched: null, explanation: null, reason: error.reason });
    throw error;
  }
  const explanation = outcome.result === 'fail' && outcome.exp ? await explain(state, outcome.exp.term, outcome.exp.domain) : null;
  return done({ result: outcome.result, matched: outcome.matched, explanation, reason: outcome.reason });
}

/** Why a domain cannot be checked (not a multi-label DNS name), or null. */
function domainProblem(domain: string): string | null {
  if (domain.length === 0) return 'it is empty';
  if (domain.startsWith('[')) return 'it is an address literal';
  const problem = dnsNameProblem(domain);
  if (problem !== null) return problem;
  if (!domain.includes('.')) return 'it is a single label';
  return null;
}

async function checkHost(state: State, domain: string, path: SpfPathStep[]): Promise<HostOutcome> {
  const record = await fetchRecord(state, domain);
  if (record === null) return { result: 'none', matched: null, reason: `${domain} publishes no SPF record`, exp: null };
  if (record.problems.length > 0) {
    const first = record.problems[0]!;
    throw new SpfStop('permerror', `the SPF record of ${domain} is invalid at position ${first.position}: ${first.message}`);
  }
  for (const term of record.terms) {
    if (term.kind !== 'mechanism') continue;
    const matched = await matchMechanism(state, term, domain, path);
    if (matched === null) continue;
    const qualifier = term.qualifier ?? '+';
    return {
      result: QUALIFIER_RESULT[qualifier],
      matched: matched.match,
      reason: `${matched.match.path.map((step) => `${step.domain}: ${step.term}`).join(' > ')} matched`,
      exp: record.exp ? { term: record.exp, domain } : null,
    };
  }
  if (record.redirect) {
    countLookup(state, domain, record.redirect);
    const target = await expandTarget(state, record.redirect.tokens!, domain);
    if (target === null) throw new SpfStop('permerror', `the redirect target of ${domain} (${record.redirect.value}) is not a valid domain name (RFC 7208 §6.1)`);
    const step = { domain, term: record.redirect.text };
    const inner = await checkHost(state, target, [...path, step]);
    if (inner.result === 'none') {
      throw new SpfStop('permerror', `${domain} redirects to ${target}, which publishes no SPF record (RFC 7208 §6.1)`);
    }
    return inner;
  }
  return { result: 'neutral', matched: null, reason: `no mechanism of ${domain} matched and there is no redirect: the default is neutral (RFC 7208 §4.7)`, exp: null };
}

const QUALIFIER_RESULT: Record<SpfQualifier, SpfResultCode> = { '+': 'pass', '-': 'fail', '~': 'softfail', '?': 'neutral' };

/** The one SPF record of `domain`, null when it has none (RFC 7208 §4.4, §4.5). */
async function fetchRecord(state: State, domain: string): Promise<ParsedSpfRecord | null> {
  let lookup;
  try {
    lookup = await state.dns.lookup(domain, 'TXT');
  } catch (error) {
    if (error instanceof NetintelError && error.code === 'invalid_input') return null;
    throw new SpfStop('temperror', `the TXT lookup of ${domain} failed: ${describeError(error)}`);
  }
  const records = lookup.records.map((record) => record.text).filter(isSpfRecordText);
  if (records.length === 0) return null;
  if (records.length > 1) {
    throw new SpfStop('permerror', `${domain} publishes ${records.length} SPF records; there must be exactly one (RFC 7208 §4.5)`);
  }
  return parseSpfRecord(records[0]!);
}

interface MechanismMatch {
  match: SpfMatch;
}

async function matchMechanism(state: State, term: ParsedSpfTerm, domain: string, path: SpfPathStep[]): Promise<MechanismMatch | null> {
  const here = (): MechanismMatch => ({
    match: {
      mechanism: term.text,
      qualifier: term.qualifier ?? '+',
      domain,
      path: [...path, { domain, term: term.text }],
    },
  });
  const ip = state.ip;
  switch (term.name) {
    case 'all':
      return here();
    case 'ip4':
      return ip.version === 4 && inNetwork(ip.bytes, term.network!, term.cidr4 ?? 32) ? here() : null;
    case 'ip6':
      return ip.version === 6 && inNetwork(ip.bytes, term.network!, term.cidr6 ?? 128) ? here() : null;
    case 'include': {
      countLookup(state, domain, term);
      const target = await expandTarget(state, term.tokens!, domain);
      const step = { domain, term: term.text };
      if (target === null) throw new SpfStop('permerror', `the include target of ${domain} (${term.value}) is not a valid domain name`);
      const inner = await checkHost(state, target, [...path, step]);
      switch (inner.result) {
        case 'pass':
          // The include's own qualifier gives the result (RFC 7208 §5.2), so it is the one reported.
          return { match: { ...inner.matched!, qualifier: term.qualifier ?? '+' } };
        case 'none':
          throw new SpfStop('permerror', `${domain} includes ${target}, which publishes no SPF record (RFC 7208 §5.2)`);
        default:
          // fail, softfail and neutral make the include not match (RFC 7208 §5.2).
          return null;
      }
    }
    case 'a': {
      countLookup(state, domain, term);
      const target = term.tokens ? await expandTarget(state, term.tokens, domain) : domain;
      if (target === null) return null;
      const addresses = await addressesOf(state, target, ip.version, true);
      return addresses.some((address) => matchesAddress(ip, address, term)) ? here() : null;
    }
    case 'mx': {
      countLookup(state, domain, term);
      const target = term.tokens ? await expandTarget(state, term.tokens, domain) : domain;
      if (target === null) return null;
      const mx = await lookupOrStop(state, target, 'MX');
      if (mx.status !== 'answer') noteVoid(state, target, 'MX');
      if (mx.records.length > MX_PTR_NAME_LIMIT) {
        throw new SpfStop('permerror', `${target} has ${mx.records.length} MX records; an mx mechanism may look up at most ${MX_PTR_NAME_LIMIT} (RFC 7208 §4.6.4)`);
      }
      for (const record of mx.records) {
        const exchange = record.exchange;
        // A null MX (RFC 7505) names the root: there is no host to match.
        if (exchange === '' || exchange === '.') continue;
        const addresses = await addressesOf(state, exchange, ip.version, false);
        if (addresses.some((address) => matchesAddress(ip, address, term))) return here();
      }
      return null;
    }
    case 'ptr': {
      countLookup(state, domain, term);
      const target = term.tokens ? await expandTarget(state, term.tokens, domain) : domain;
      if (target === null) return null;
      const names = await validatedNames(state);
      const wanted = target.toLowerCase();
      return names.some((name) => name === wanted || name.endsWith(`.${wanted}`)) ? here() : null;
    }
    case 'exists': {
      countLookup(state, domain, term);
      const target = await expandTarget(state, term.tokens!, domain);
      if (target === null) return null;
      // RFC 7208 §5.7: always an A lookup, whatever the client's address family.
      const lookup = await lookupOrStop(state, target, 'A');
      if (lookup.records.length === 0) noteVoid(state, target, 'A');
      return lookup.records.length > 0 ? here() : null;
    }
    default:
      return null;
  }
}

function countLookup(state: State, domain: string, term: ParsedSpfTerm): void {
  state.lookups += 1;
  if (state.lookups > SPF_LOOKUP_LIMIT) {
    throw new SpfStop(
      'permerror',
      `more than ${SPF_LOOKUP_LIMIT} DNS-querying terms: "${term.text}" in the record of ${domain} is number ${state.lookups} (RFC 7208 §4.6.4)`,
    );
  }
}

function noteVoid(state: State, name: string, type: string): void {
  state.voids += 1;
  if (state.voids > SPF_VOID_LOOKUP_LIMIT) {
    throw new SpfStop(
      'permerror',
      `more than ${SPF_VOID_LOOKUP_LIMIT} lookups returned nothing (the ${type} lookup of ${name} is number ${state.voids}; RFC 7208 §4.6.4)`,
    );
  }
}

async function lookupOrStop<T extends 'A' | 'AAAA' | 'MX' | 'TXT'>(state: State, name: string, type: T) {
  try {
    return await state.dns.lookup(name, type);
  } catch (error) {
    throw new SpfStop('temperror', `the ${type} lookup of ${name} failed: ${describeError(error)}`);
  }
}

/** The A (IPv4 client) or AAAA (IPv6 client) addresses of a name; `countVoid` for the `a` mechanism's own lookup. */
async function addressesOf(state: State, name: string, version: 4 | 6, countVoid: boolean): Promise<Uint8Array[]> {
  const type = version === 4 ? 'A' : 'AAAA';
  const lookup = await lookupOrStop(state, name, type);
  if (countVoid && lookup.records.length === 0) noteVoid(state, name, type);
  return lookup.records.map((address) => addressBytes(address, version));
}

function matchesAddress(ip: IpAddress, address: Uint8Array, term: ParsedSpfTerm): boolean {
  return ip.version === 4 ? inNetwork(ip.bytes, address, term.cidr4 ?? 32) : inNetwork(ip.bytes, address, term.cidr6 ?? 128);
}

function addressBytes(text: string, version: 4 | 6): Uint8Array {
  return version === 4 ? Uint8Array.from(text.split('.').map(Number)) : ipv6Bytes(text);
}

/**
 * The client's validated domain names (RFC 7208 §5.5): PTR names (the first
 * ten) whose A/AAAA records include the client IP. A DNS error on the PTR
 * lookup gives no names; an error on one name's lookup skips that name.
 */
function validatedNames(state: State): Promise<string[]> {
  const key = state.ip.text;
  let pending = state.validatedNames.get(key);
  if (!pending) {
    pending = (async () => {
      let ptr;
      try {
        ptr = await state.dns.lookup(reverseOf(state.ip), 'PTR');
      } catch {
        return [];
      }
      const names: string[] = [];
      for (const name of ptr.records.slice(0, MX_PTR_NAME_LIMIT)) {
        const lower = (name.endsWith('.') ? name.slice(0, -1) : name).toLowerCase();
        try {
          const addresses = await addressesOf(state, lower, state.ip.version, false);
          if (addresses.some((address) => inNetwork(state.ip.bytes, address, state.ip.version === 4 ? 32 : 128))) names.push(lower);
        } catch (error) {
          if (!(error instanceof SpfStop)) throw error;
        }
      }
      return names;
    })();
    state.validatedNames.set(key, pending);
  }
  return pending;
}

/** `%{p}`: a validated name equal to or under the current domain, else any validated name, else `unknown` (RFC 7208 §7.3). */
async function pMacro(state: State, domain: string): Promise<string> {
  const names = await validatedNames(state);
  const wanted = domain.toLowerCase();
  return names.find((name) => name === wanted) ?? names.find((name) => name.endsWith(`.${wanted}`)) ?? names[0] ?? 'unknown';
}

function macroValues(state: State, domain: string): MacroValues {
  const ip = state.ip;
  return {
    s: state.sender,
    l: state.local,
    o: state.senderDomain,
    d: domain,
    i: ip.version === 4 ? ip.text : nibbles(ip.bytes).join('.'),
    p: () => pMacro(state, domain),
    v: ip.version === 4 ? 'in-addr' : 'ip6',
    h: state.helo,
    c: ip.text,
    r: state.receiver,
    t: String(state.nowSeconds),
  };
}

/** Expands a target domain-spec; null when the result is not a name DNS can be asked (treated as non-existent). */
async function expandTarget(state: State, tokens: readonly MacroToken[], domain: string): Promise<string | null> {
  const expanded = truncateDomain(await expandMacroTokens(tokens, macroValues(state, domain)));
  return dnsNameProblem(expanded.toLowerCase()) === null ? expanded : null;
}

/**
 * The explanation of a fail (RFC 7208 §6.2): the TXT record at the expanded
 * exp= target, itself macro-expanded. Any problem (DNS error, no record or
 * several, a syntax error, non-ASCII text) means no explanation.
 */
async function explain(state: State, term: ParsedSpfTerm, domain: string): Promise<string | null> {
  const spec = parseDomainSpec(term.value ?? '');
  if (!spec.ok) return null;
  const target = await expandTarget(state, spec.tokens, domain).catch(() => null);
  if (target === null) return null;
  let lookup;
  try {
    lookup = await state.dns.lookup(target, 'TXT');
  } catch {
    return null;
  }
  if (lookup.records.length !== 1) return null;
  const parsed = parseMacroString(lookup.records[0]!.text, 'explain');
  if (!parsed.ok) return null;
  return expandMacroTokens(parsed.tokens, macroValues(state, domain)).catch(() => null);
}

function reverseOf(ip: IpAddress): string {
  if (ip.version === 4) return `${[...ip.bytes].reverse().join('.')}.in-addr.arpa`;
  return `${nibbles(ip.bytes).reverse().join('.')}.ip6.arpa`;
}

function nibbles(bytes: Uint8Array): string[] {
  const out: string[] = [];
  for (const byte of bytes) out.push((byte >> 4).toString(16), (byte & 0x0f).toString(16));
  return out;
}

function describeError(error: unknown): string {
  if (error instanceof NetintelError) return `${error.code} (${error.message})`;
  return error instanceof Error ? error.message : String(error);
}
