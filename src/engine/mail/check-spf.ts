import type { EngineContext } from '../context.js';
import { normaliseMailDomain } from './mail-domain.js';
import { finding, type Finding, type Severity } from '../findings.js';
import { parseIpAddress } from '../address/ip-address.js';
import { createMailDns, dnsNameProblem, type MailDns } from './mail-dns.js';
import { failureJson, failureText, withContext } from './mail-errors.js';
import { evaluateSpf, SPF_LOOKUP_LIMIT, SPF_VOID_LOOKUP_LIMIT, type SpfEvaluation, type SpfResultCode } from './spf-evaluate.js';
import { hasMacro } from './spf-macro.js';
import { isSpfRecordText, parseSpfRecord, publicTerm, type ParsedSpfRecord, type ParsedSpfTerm, type SpfTerm } from './spf-record.js';

/** How one record of the include tree came out. */
export type SpfNodeStatus =
  /** A valid record, walked. */
  | 'ok'
  /** The name exists but publishes no SPF record. */
  | 'none'
  /** The name does not exist. */
  | 'nxdomain'
  /** More than one SPF record (permerror). */
  | 'multiple'
  /** A record with syntax errors (permerror); its valid terms are still walked. */
  | 'invalid'
  /** The name is already on the way from the root: an include or redirect loop. */
  | 'loop'
  /** The lookup failed (timeout, SERVFAIL...): temperror, not "no record". */
  | 'error'
  /** Not walked: the target depends on macros of the session, or the walk reached its size bound. */
  | 'not_followed';

/** One record of the include tree, with its own DNS lookups and those below it. */
export interface SpfNode {
  domain: string;
  /** The term of the parent that leads here (`include:_spf.example.com`, `redirect=...`), null for the domain checked. */
  via: string | null;
  status: SpfNodeStatus;
  /** The SPF record as published (character strings joined), null when there is none. */
  record: string | null;
  /** DNS-querying terms of this record: include, a, mx, ptr, exists, and an effective redirect (RFC 7208 §4.6.4). */
  lookups: number;
  /** `lookups` of this record plus those of every record below it. */
  total_lookups: number;
  /** Lookups of this record's a, mx and exists targets that returned no record or NXDOMAIN. */
  void_lookups: number;
  /** Why the node is `error` or `not_followed`, or what made it invalid. */
  error: { code: string; message: string } | null;
  children: SpfNode[];
}

/** The overall verdict on a domain's SPF setup, as receivers would read it. */
export type SpfStatus = 'valid' | 'none' | 'permerror' | 'temperror';

/** The SPF check of one domain (`netintel spf`, GET /api/email-tests?type=spf). */
export interface SpfResult {
  kind: 'spf';
  domain: string;
  domain_unicode: string;
  status: SpfStatus;
  /** The SPF record (character strings joined, RFC 7208 §3.3), null when there is none or several. */
  record: string | null;
  /** The record's character strings as published. */
  record_strings: string[];
  /** Every `v=spf1` TXT record found (more than one is a permerror). */
  records: string[];
  /** The record's length in octets. */
  record_octets: number | null;
  /** The record's terms in order, null when there is no single record. */
  terms: SpfTerm[] | null;
  /** DNS-querying terms across the whole tree (a lower bound when some targets depend on macros). */
  lookups: number;
  lookup_limit: number;
  void_lookups: number;
  void_lookup_limit: number;
  /** The include/redirect tree, each node with its lookups; null when there is no record. */
  tree: SpfNode | null;
  /** check_host() for `--ip`, null when no IP was given. */
  evaluation: SpfEvaluation | null;
  findings: Finding[];
  /** The resolver that answered the first question. */
  resolver: string;
}

export interface CheckSpfOptions {
  /** Evaluate check_host() for this client IP. */
  ip?: string;
  /** MAIL FROM for the evaluation (default `postmaster@<domain>`). */
  sender?: string;
  /** HELO/EHLO name for the evaluation (`%{h}`). */
  helo?: string;
  /** The receiving host for `%{r}` in explanations. */
  receiver?: string;
  /** Share the DNS answers of a larger check (the e-mail report). */
  dns?: MailDns;
}

/** Nodes walked at most: enough for any real record set, bounded for hostile ones. */
const MAX_NODES = 60;

/**
 * Checks the SPF record of `domain`: finds it (TXT, and the retired SPF RR
 * type), validates it term by term with positions, walks its includes and
 * redirect into a tree counting DNS lookups and void lookups against the
 * RFC 7208 §4.6.4 limits, detects loops, and reports every problem as a
 * finding. With `options.ip` it also runs check_host() for that address.
 *
 * @throws NetintelError `invalid_input` for a bad domain or IP; `timeout`,
 *   `upstream`, `unreachable` when the domain's own TXT lookup fails (a
 *   lookup failure deeper in the tree is a finding and `temperror`).
 */
export async function checkSpf(ctx: EngineContext, domain: string, options: CheckSpfOptions = {}): Promise<SpfResult> {
  const name = normaliseMailDomain(domain);
  const ip = options.ip === undefined ? null : parseIpAddress(options.ip);
  const dns = options.dns ?? createMailDns(ctx);
  const walk = new TreeWalk(dns);
  const [root, spfType] = await Promise.all([
    walk.rootRecord(name.ascii),
    dns.lookupSpfType(name.ascii).then(
      (lookup) => ({ ok: true as const, lookup }),
      (error: unknown) => ({ ok: false as const, error }),
    ),
  ]);

  const findings: Finding[] = [];
  const evaluation = ip
    ? await evaluateSpf(
        dns,
        { ip, sender: options.sender ?? null, helo: options.helo ?? null, domain: name.ascii, ...(options.receiver ? { receiver: options.receiver } : {}) },
        ctx.now(),
      )
    : null;

  if (spfType.ok && spfType.lookup.records.length > 0) {
    findings.push(
      finding(
        'spf_rr_type_deprecated',
        'warning',
        `${name.ascii} publishes a record of the retired SPF RR type (99); receivers read only TXT, so remove it and keep the TXT record`,
        'RFC 7208 §3.1, §14.1',
        { records: spfType.lookup.records.map((record) => record.text) },
      ),
    );
  } else if (!spfType.ok) {
    findings.push(
      finding('spf_rr_type_unchecked', 'info', `Could not check for the retired SPF RR type (99) at ${name.ascii}: ${failureText(spfType.error)}`, 'RFC 7208 §14.1', {
        error: failureJson(spfType.error),
      }),
    );
  }

  findings.push(...walk.findings);
  const tree = root.tree;
  const lookups = tree?.total_lookups ?? 0;
  const voidLookups = walk.voidNames.length;
  if (tree && root.parsed) {
    findings.push(...policyFindings(walk, tree));
    const partial = walk.macroTargets > 0 ? ' at least' : '';
    if (lookups > SPF_LOOKUP_LIMIT) {
      findings.push(
        finding(
          'spf_lookup_limit',
          'error',
          `Evaluating the SPF record needs${partial} ${lookups} DNS lookups; the limit is ${SPF_LOOKUP_LIMIT}, so receivers that get this far answer permerror`,
          'RFC 7208 §4.6.4',
          { lookups, limit: SPF_LOOKUP_LIMIT, per_record: flatten(tree).map((node) => ({ domain: node.domain, lookups: node.lookups })) },
        ),
      );
    } else {
      findings.push(
        finding('spf_lookup_count', 'pass', `The SPF record needs${partial} ${lookups} of at most ${SPF_LOOKUP_LIMIT} DNS lookups`, 'RFC 7208 §4.6.4', {
          lookups,
          limit: SPF_LOOKUP_LIMIT,
        }),
      );
    }
    if (voidLookups > SPF_VOID_LOOKUP_LIMIT) {
      findings.push(
        finding(
          'spf_void_lookup_limit',
          'error',
          `${voidLookups} lookups of the SPF record return nothing (NXDOMAIN or no records); more than ${SPF_VOID_LOOKUP_LIMIT} is a permerror`,
          'RFC 7208 §4.6.4',
          { void_lookups: voidLookups, limit: SPF_VOID_LOOKUP_LIMIT, names: walk.voidNames },
        ),
      );
    } else if (voidLookups > 0) {
      findings.push(
        finding(
          'spf_void_lookup',
          'warning',
          `${voidLookups} lookup${voidLookups > 1 ? 's' : ''} of the SPF record return${voidLookups > 1 ? '' : 's'} nothing: ${walk.voidNames.map((item) => `${item.term} in ${item.domain}`).join(', ')} (limit ${SPF_VOID_LOOKUP_LIMIT})`,
          'RFC 7208 §4.6.4',
          { void_lookups: voidLookups, limit: SPF_VOID_LOOKUP_LIMIT, names: walk.voidNames },
        ),
      );
    }
  }
  if (evaluation) findings.push(evaluationFinding(evaluation));

  const status: SpfStatus = root.none
    ? 'none'
    : findings.some((item) => PERMERROR_FINDINGS.has(item.id))
      ? 'permerror'
      : findings.some((item) => item.id === 'spf_lookup_failed')
        ? 'temperror'
        : 'valid';
  if (status === 'permerror' || status === 'temperror') {
    // Receivers would not get that far: what passes on its own is only informative here.
    for (const item of findings) if (item.severity === 'pass' && item.id !== 'spf_record_found' && item.id !== 'spf_check_host') item.severity = 'info';
  }
  return {
    kind: 'spf',
    domain: name.ascii,
    domain_unicode: name.unicode,
    status,
    record: root.parsed?.text ?? null,
    record_strings: root.strings,
    records: root.records,
    record_octets: root.parsed ? Buffer.byteLength(root.parsed.text) : null,
    terms: root.parsed ? root.parsed.terms.map(publicTerm) : null,
    lookups,
    lookup_limit: SPF_LOOKUP_LIMIT,
    void_lookups: voidLookups,
    void_lookup_limit: SPF_VOID_LOOKUP_LIMIT,
    tree,
    evaluation,
    findings,
    resolver: root.resolver,
  };
}

/** Findings whose presence means receivers would answer permerror. */
const PERMERROR_FINDINGS = new Set([
  'spf_multiple_records',
  'spf_syntax_error',
  'spf_unknown_mechanism',
  'spf_duplicate_modifier',
  'spf_lookup_limit',
  'spf_void_lookup_limit',
  'spf_include_loop',
  'spf_include_no_record',
  'spf_redirect_no_record',
  'spf_mx_too_many',
]);

interface RootRecord {
  tree: SpfNode | null;
  parsed: ParsedSpfRecord | null;
  strings: string[];
  records: string[];
  none: boolean;
  resolver: string;
}

interface VoidName {
  domain: string;
  term: string;
  name: string;
}

/** What one part of the walk found; parts run concurrently and are joined in record order. */
interface Collected {
  findings: Finding[];
  voids: VoidName[];
}

function collected(): Collected {
  return { findings: [], voids: [] };
}

/** Walks a record and everything it includes or redirects to, collecting findings in tree order. */
class TreeWalk {
  readonly findings: Finding[] = [];
  readonly voidNames: VoidName[] = [];
  macroTargets = 0;
  private nodes = 0;
  /** The records walked, for the policy checks. */
  readonly parsed = new Map<SpfNode, ParsedSpfRecord>();

  constructor(private readonly dns: MailDns) {}

  async rootRecord(domain: string): Promise<RootRecord> {
    let lookup;
    try {
      lookup = await this.dns.lookup(domain, 'TXT');
    } catch (error) {
      throw withContext(error, `the SPF (TXT) lookup of ${domain} failed`);
    }
    const spf = lookup.records.filter((record) => isSpfRecordText(record.text));
    const base = { resolver: lookup.resolver, records: spf.map((record) => record.text) };
    if (lookup.status === 'nxdomain') {
      this.findings.push(finding('spf_domain_not_found', 'error', `${domain} does not exist (NXDOMAIN), so it has no SPF record`, 'RFC 7208 §4.3', { domain }));
      return { ...base, tree: null, parsed: null, strings: [], none: true };
    }
    if (spf.length === 0) {
      const others = lookup.records.map((record) => record.text).filter((text) => /^\s*v\s*=\s*spf/i.test(text));
      this.findings.push(
        finding(
          'spf_no_record',
          'warning',
          `${domain} publishes no SPF record: receivers get "none" and cannot tell its mail from forgeries (a domain that sends no mail should publish "v=spf1 -all")`,
          'RFC 7208 §4.5',
          { domain, near_misses: others },
        ),
      );
      return { ...base, tree: null, parsed: null, strings: [], none: true };
    }
    if (spf.length > 1) {
      this.findings.push(
        finding('spf_multiple_records', 'error', `${domain} publishes ${spf.length} SPF records; there must be exactly one, so receivers answer permerror`, 'RFC 7208 §4.5', {
          domain,
          records: spf.map((record) => record.text),
        }),
      );
      const tree = this.node(domain, null, 'multiple', null, { code: 'permerror', message: `${spf.length} SPF records` });
      return { ...base, tree, parsed: null, strings: [], none: false };
    }
    const record = spf[0]!;
    this.findings.push(finding('spf_record_found', 'pass', `${domain} publishes one SPF record`, 'RFC 7208 §4.5', { record: record.text }));
    const parsed = parseSpfRecord(record.text);
    this.lengthFindings(domain, record.text, record.strings, null, this.findings);
    const out = collected();
    const tree = await this.walkRecord(domain, null, parsed, [domain], out);
    this.findings.push(...out.findings);
    this.voidNames.push(...out.voids);
    return { ...base, tree, parsed, strings: record.strings, none: false };
  }

  private node(domain: string, via: string | null, status: SpfNodeStatus, record: string | null, error: SpfNode['error'] = null): SpfNode {
    this.nodes += 1;
    return { domain, via, status, record, lookups: 0, total_lookups: 0, void_lookups: 0, error, children: [] };
  }

  /** Walks a parsed record; the findings of each term come in record order. */
  private async walkRecord(domain: string, via: string | null, parsed: ParsedSpfRecord, ancestors: string[], out: Collected): Promise<SpfNode> {
    const node = this.node(domain, via, parsed.problems.length > 0 ? 'invalid' : 'ok', parsed.text);
    this.parsed.set(node, parsed);
    const where = via === null ? `the SPF record of ${domain}` : `the SPF record of ${domain} (reached by ${via})`;
    for (const problem of parsed.problems) {
      const id = problem.code === 'syntax' ? 'spf_syntax_error' : problem.code === 'unknown_mechanism' ? 'spf_unknown_mechanism' : 'spf_duplicate_modifier';
      const rfc = problem.code === 'unknown_mechanism' ? 'RFC 7208 §5' : problem.code === 'duplicate_modifier' ? 'RFC 7208 §6' : 'RFC 7208 §4.6, §12';
      out.findings.push(
        finding(id, 'error', `In ${where}, at position ${problem.position}${problem.term ? ` ("${problem.term}")` : ''}: ${problem.message}`, rfc, {
          domain,
          position: problem.position,
          term: problem.term,
          record: parsed.text,
          pointer: `${' '.repeat(problem.position - 1)}^`,
        }),
      );
    }
    if (parsed.problems.length > 0) node.error = { code: 'permerror', message: parsed.problems[0]!.message };
    this.recordFindings(domain, where, parsed, out.findings);

    const allIndex = parsed.terms.findIndex((term) => term.kind === 'mechanism' && term.name === 'all');
    // RFC 7208 §5.1: mechanisms after "all" are never tested; §6.1: redirect is then ignored.
    const evaluated = parsed.terms.filter((term, index) => term.kind === 'mechanism' && (allIndex === -1 || index <= allIndex));
    const seenIncludes = new Map<string, ParsedSpfTerm>();
    const tasks: Array<{ out: Collected; done: Promise<SpfNode | null> }> = [];
    for (const term of evaluated) {
      if (!term.counts_lookup) continue;
      node.lookups += 1;
      if (term.name === 'ptr') continue;
      const termOut = collected();
      if (term.name === 'include') {
        const target = this.literalTarget(term, domain);
        if (target !== null) {
          const key = target.toLowerCase();
          const earlier = seenIncludes.get(key);
          if (earlier) {
            termOut.findings.push(
              finding('spf_duplicate_include', 'warning', `In ${where}, "${term.text}" repeats "${earlier.text}": the second costs a DNS lookup and can never match`, 'RFC 7208 §4.6.4', {
                domain,
                term: term.text,
                position: term.position,
              }),
            );
          }
          seenIncludes.set(key, term);
        }
        tasks.push({ out: termOut, done: this.follow(domain, term, target, ancestors, 'include', termOut) });
        continue;
      }
      tasks.push({ out: termOut, done: this.voidCheck(node, domain, where, term, termOut).then(() => null) });
    }
    if (parsed.redirect && allIndex === -1) {
      node.lookups += 1;
      const termOut = collected();
      tasks.push({ out: termOut, done: this.follow(domain, parsed.redirect, this.literalTarget(parsed.redirect, domain), ancestors, 'redirect', termOut) });
    }
    const children = await Promise.all(tasks.map((task) => task.done));
    for (const child of children) if (child) node.children.push(child);
    for (const task of tasks) {
      out.findings.push(...task.out.findings);
      out.voids.push(...task.out.voids);
    }
    node.total_lookups = node.lookups + node.children.reduce((sum, child) => sum + child.total_lookups, 0);
    return node;
  }

  /** The target of an include/redirect/a/mx/exists without macros (a domain-spec with macros gives null). */
  private literalTarget(term: ParsedSpfTerm, domain: string): string | null {
    if (!term.tokens) return domain;
    if (hasMacro(term.tokens)) return null;
    const text = term.tokens.map((token) => (token.kind === 'literal' ? token.text : '')).join('');
    return text.endsWith('.') ? text.slice(0, -1) : text;
  }

  private async follow(
    domain: string,
    term: ParsedSpfTerm,
    target: string | null,
    ancestors: string[],
    how: 'include' | 'redirect',
    out: Collected,
  ): Promise<SpfNode> {
    const where = `the SPF record of ${domain}`;
    if (target === null) {
      this.macroTargets += 1;
      out.findings.push(
        finding(
          'spf_macro_target',
          'info',
          `In ${where}, "${term.text}" depends on the sender (macros), so its record is not walked here; give --ip/--sender to evaluate it; its lookups are not in the count`,
          'RFC 7208 §7',
          { domain, term: term.text },
        ),
      );
      return this.node(term.value ?? '', term.text, 'not_followed', null, { code: 'macro', message: 'the target depends on macros of the session' });
    }
    if (dnsNameProblem(target.toLowerCase()) !== null) {
      const id = how === 'include' ? 'spf_include_no_record' : 'spf_redirect_no_record';
      out.findings.push(finding(id, 'error', `In ${where}, "${term.text}" names "${target}", which is not a valid domain name: permerror`, how === 'include' ? 'RFC 7208 §5.2' : 'RFC 7208 §6.1', { domain, term: term.text }));
      return this.node(target, term.text, 'none', null, { code: 'permerror', message: 'not a valid domain name' });
    }
    const key = target.toLowerCase();
    if (ancestors.includes(key)) {
      out.findings.push(
        finding(
          'spf_include_loop',
          'error',
          `${how === 'include' ? 'Include' : 'Redirect'} loop: ${[...ancestors, key].join(' -> ')}; evaluation runs into the lookup limit and gives permerror`,
          'RFC 7208 §4.6.4, §5.2',
          { chain: [...ancestors, key], term: term.text },
        ),
      );
      return this.node(target, term.text, 'loop', null, { code: 'loop', message: `${key} is already on the way from ${ancestors[0]}` });
    }
    if (this.nodes >= MAX_NODES) {
      return this.node(target, term.text, 'not_followed', null, { code: 'limit', message: `the walk stops after ${MAX_NODES} records` });
    }
    let lookup;
    try {
      lookup = await this.dns.lookup(target, 'TXT');
    } catch (error) {
      out.findings.push(
        finding(
          'spf_lookup_failed',
          'unknown',
          `Could not fetch the SPF record of ${target} (${term.text} in ${domain}): ${failureText(error)}; receivers get temperror, this is not "no record"`,
          'RFC 7208 §2.6.6, §5',
          { domain, term: term.text, target, error: failureJson(error) },
        ),
      );
      return this.node(target, term.text, 'error', null, failureJson(error));
    }
    const spf = lookup.records.filter((record) => isSpfRecordText(record.text));
    if (spf.length !== 1) {
      const multiple = spf.length > 1;
      const missing = lookup.status === 'nxdomain' ? 'does not exist' : 'publishes no SPF record';
      if (multiple) {
        out.findings.push(
          finding('spf_multiple_records', 'error', `${target} (${term.text} in ${domain}) publishes ${spf.length} SPF records: permerror`, 'RFC 7208 §4.5', {
            domain: target,
            records: spf.map((record) => record.text),
          }),
        );
      } else {
        const id = how === 'include' ? 'spf_include_no_record' : 'spf_redirect_no_record';
        out.findings.push(
          finding(id, 'error', `"${term.text}" in ${domain}: ${target} ${missing}, which makes the ${how} a permerror`, how === 'include' ? 'RFC 7208 §5.2' : 'RFC 7208 §6.1', {
            domain,
            term: term.text,
            target,
            status: lookup.status,
          }),
        );
      }
      return this.node(target, term.text, multiple ? 'multiple' : lookup.status === 'nxdomain' ? 'nxdomain' : 'none', null);
    }
    const record = spf[0]!;
    this.lengthFindings(target, record.text, record.strings, term.text, out.findings);
    return this.walkRecord(target, term.text, parseSpfRecord(record.text), [...ancestors, key], out);
  }

  /** Looks up the target of an a, mx or exists term to find void lookups and MX sets over 10. */
  private async voidCheck(node: SpfNode, domain: string, where: string, term: ParsedSpfTerm, out: Collected): Promise<void> {
    const target = this.literalTarget(term, domain);
    if (target === null || dnsNameProblem(target.toLowerCase()) !== null) return;
    try {
      let empty: boolean;
      if (term.name === 'mx') {
        const mx = await this.dns.lookup(target, 'MX');
        empty = mx.records.length === 0;
        if (mx.records.length > 10) {
          out.findings.push(
            finding('spf_mx_too_many', 'error', `In ${where}, "${term.text}": ${target} has ${mx.records.length} MX records; an mx mechanism may use at most 10 (permerror)`, 'RFC 7208 §4.6.4', {
              domain,
              term: term.text,
              count: mx.records.length,
            }),
          );
        }
      } else if (term.name === 'a') {
        const [a, aaaa] = await Promise.all([this.dns.lookup(target, 'A'), this.dns.lookup(target, 'AAAA')]);
        empty = a.records.length === 0 && aaaa.records.length === 0;
      } else {
        empty = (await this.dns.lookup(target, 'A')).records.length === 0;
      }
      if (empty) {
        node.void_lookups += 1;
        out.voids.push({ domain, term: term.text, name: target });
      }
    } catch (error) {
      out.findings.push(
        finding('spf_lookup_failed', 'unknown', `In ${where}, the lookup for "${term.text}" failed: ${failureText(error)}; receivers get temperror when they reach it`, 'RFC 7208 §2.6.6, §5', {
          domain,
          term: term.text,
          target,
          error: failureJson(error),
        }),
      );
    }
  }

  /** Checks of one record that do not need DNS: ptr, unknown modifiers, terms after all, redirect next to all. */
  private recordFindings(domain: string, where: string, parsed: ParsedSpfRecord, findings: Finding[]): void {
    const allIndex = parsed.terms.findIndex((term) => term.kind === 'mechanism' && term.name === 'all');
    for (const term of parsed.terms) {
      if (term.kind === 'mechanism' && term.name === 'ptr') {
        findings.push(
          finding('spf_ptr_mechanism', 'warning', `In ${where}, "${term.text}": the ptr mechanism is slow, unreliable and should not be used`, 'RFC 7208 §5.5', {
            domain,
            term: term.text,
            position: term.position,
          }),
        );
      }
      if (term.kind === 'modifier' && !term.known) {
        findings.push(
          finding('spf_unknown_modifier', 'warning', `In ${where}, "${term.text}" is not a modifier RFC 7208 defines; receivers ignore it (a typo of redirect or exp?)`, 'RFC 7208 §6', {
            domain,
            term: term.text,
            position: term.position,
          }),
        );
      }
    }
    if (allIndex !== -1) {
      const after = parsed.terms.slice(allIndex + 1).filter((term) => term.kind === 'mechanism');
      if (after.length > 0) {
        findings.push(
          finding('spf_terms_after_all', 'warning', `In ${where}, ${after.map((term) => `"${term.text}"`).join(', ')} come${after.length > 1 ? '' : 's'} after "all" and will never be evaluated`, 'RFC 7208 §5.1', {
            domain,
            terms: after.map((term) => term.text),
          }),
        );
      }
      if (parsed.redirect) {
        findings.push(
          finding('spf_redirect_ignored', 'warning', `In ${where}, "${parsed.redirect.text}" is ignored because the record has an "all" mechanism`, 'RFC 7208 §6.1', {
            domain,
            term: parsed.redirect.text,
          }),
        );
      }
    }
  }

  /** Record size: over 255 octets needs several strings, over 450 risks the 512-octet UDP answer, over 512 exceeds it. */
  private lengthFindings(domain: string, text: string, strings: string[], via: string | null, findings: Finding[]): void {
    const octets = Buffer.byteLength(text);
    const evidence = { domain, octets, strings: strings.length, via };
    const subject = via === null ? `The SPF record of ${domain}` : `The SPF record of ${domain} (${via})`;
    if (octets > 512) {
      findings.push(finding('spf_record_over_512', 'warning', `${subject} is ${octets} octets, over 512: the DNS answer no longer fits a plain UDP response, and some receivers fail on it`, 'RFC 7208 §3.4', evidence));
    } else if (octets > 450) {
      findings.push(finding('spf_record_over_450', 'warning', `${subject} is ${octets} octets; RFC 7208 advises at most 450 so that the whole answer fits 512 octets`, 'RFC 7208 §3.4', evidence));
    }
    if (octets > 255) {
      findings.push(
        finding('spf_record_over_255', 'info', `${subject} is ${octets} octets, longer than one 255-octet character-string: it must be split into several strings, which receivers join without spaces`, 'RFC 7208 §3.3', {
          ...evidence,
          string_octets: strings.map((part) => Buffer.byteLength(part)),
        }),
      );
    }
  }
}

/** The policy findings (+all, ?all, no all) of the record that ends the redirect chain from the root, and +all in includes. */
function policyFindings(walk: TreeWalk, root: SpfNode): Finding[] {
  const findings: Finding[] = [];
  // The policy for unlisted hosts is the "all" of the root record, or of the
  // record its redirect chain ends in (RFC 7208 §6.1).
  let effective: SpfNode | null = root;
  while (effective !== null) {
    const current: SpfNode = effective;
    const record = walk.parsed.get(current);
    if (!record) {
      effective = null;
      break;
    }
    const hasAll = record.terms.some((term) => term.kind === 'mechanism' && term.name === 'all');
    if (hasAll || !record.redirect) break;
    const redirect = record.redirect.text;
    effective = current.children.find((child) => child.via === redirect) ?? null;
  }
  const parsed = effective ? walk.parsed.get(effective) : undefined;
  if (effective && parsed) {
    const all = parsed.terms.find((term) => term.kind === 'mechanism' && term.name === 'all');
    const where = effective === root ? `The SPF record of ${root.domain}` : `The SPF policy of ${root.domain} (through ${effective.domain})`;
    if (!all) {
      findings.push(finding('spf_no_all', 'warning', `${where} ends without an "all" mechanism: mail from unlisted hosts gets the default neutral result`, 'RFC 7208 §4.7', { domain: effective.domain }));
    } else {
      const evidence = { domain: effective.domain, term: all.text };
      const levels: Record<string, [string, Severity, string]> = {
        '+': ['spf_permissive_all', 'error', `${where} ends with "${all.text}": every host on the Internet passes, which makes the record useless against forgery`],
        '?': ['spf_neutral_all', 'warning', `${where} ends with "${all.text}": unlisted hosts get neutral, which receivers treat like no policy`],
        '~': ['spf_softfail_all', 'info', `${where} ends with "${all.text}": unlisted hosts get softfail (accepted but marked)`],
        '-': ['spf_fail_all', 'pass', `${where} ends with "${all.text}": unlisted hosts fail`],
      };
      const [id, severity, message] = levels[all.qualifier ?? '+']!;
      findings.push(finding(id, severity, message, 'RFC 7208 §5.1, §8', evidence));
    }
  }
  // An include whose record passes everyone makes the include match everyone (RFC 7208 §5.2).
  for (const node of flatten(root)) {
    if (node === root || node === effective || !node.via?.toLowerCase().includes('include:')) continue;
    const plusAll = walk.parsed.get(node)?.terms.find((term) => term.kind === 'mechanism' && term.name === 'all' && term.qualifier === '+');
    if (plusAll) {
      findings.push(
        finding('spf_permissive_all', 'error', `${node.domain}, included by "${node.via}", ends with "${plusAll.text}": the include matches every host`, 'RFC 7208 §5.1, §5.2', {
          domain: node.domain,
          term: plusAll.text,
        }),
      );
    }
  }
  return findings;
}

function evaluationFinding(evaluation: SpfEvaluation): Finding {
  const severities: Record<SpfResultCode, Severity> = {
    pass: 'pass',
    fail: 'error',
    softfail: 'warning',
    neutral: 'info',
    none: 'info',
    // What check_host() could not decide for want of DNS answers (RFC 7208 §2.6.6): not a problem found, a part not checked.
    temperror: 'unknown',
    permerror: 'error',
  };
  const via = evaluation.matched ? `: ${evaluation.matched.path.map((step) => `${step.term} (${step.domain})`).join(' > ')}` : `: ${evaluation.reason}`;
  return finding(
    'spf_check_host',
    severities[evaluation.result],
    `check_host() for ${evaluation.ip} gives ${evaluation.result}${via}`,
    'RFC 7208 §4, §2.6',
    {
      ip: evaluation.ip,
      sender: evaluation.sender,
      result: evaluation.result,
      mechanism: evaluation.matched?.mechanism ?? null,
      explanation: evaluation.explanation,
    },
  );
}

/** The nodes of a tree in pre-order. */
export function flatten(node: SpfNode): SpfNode[] {
  return [node, ...node.children.flatMap(flatten)];
}
