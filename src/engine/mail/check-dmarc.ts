import type { EngineContext } from '../context.js';
import { normaliseMailDomain } from './mail-domain.js';
import { finding, type Finding } from '../findings.js';
import { createMailDns, dnsNameProblem, type MailDns } from './mail-dns.js';
import { failureJson, failureText, withContext, type FailureJson } from './mail-errors.js';

export type DmarcPolicy = 'none' | 'quarantine' | 'reject';

/** The tags of a DMARC record as written (RFC 7489 §6.3), null when absent. */
export interface DmarcTags {
  v: string | null;
  p: string | null;
  sp: string | null;
  pct: string | null;
  rua: string | null;
  ruf: string | null;
  adkim: string | null;
  aspf: string | null;
  fo: string | null;
  rf: string | null;
  ri: string | null;
}

/** A report address of rua/ruf and whether its domain agreed to receive the reports (RFC 7489 §7.1). */
export interface DmarcReportDestination {
  tag: 'rua' | 'ruf';
  uri: string;
  /** The domain of a mailto: address, null for other schemes. */
  domain: string | null;
  /** True when the domain is outside the policy domain's tree, so authorization is needed. */
  external: boolean;
  /** Authorized by `<policy domain>._report._dmarc.<domain>`: true/false, null when not needed or not told. */
  authorized: boolean | null;
  error: FailureJson | null;
}

/** The DMARC check of one domain. */
export interface DmarcResult {
  kind: 'dmarc';
  domain: string;
  /** Where the record was found (`_dmarc.<domain>` or a parent's), null when none was. */
  location: string | null;
  /** The domain that published the policy: the domain itself or the parent found by the tree walk. */
  policy_domain: string | null;
  /** True when the policy comes from a parent domain (its sp applies). */
  inherited: boolean;
  record: string | null;
  /** Every DMARC record at the location (more than one means no policy applies). */
  records: string[];
  tags: DmarcTags;
  /** The policy that applies to mail from the domain (p, or sp for a parent's record), null when there is none. */
  policy: DmarcPolicy | null;
  /** Percentage of mail the policy applies to (pct, default 100). */
  percent: number | null;
  /** DKIM and SPF alignment modes, `r` (relaxed, default) or `s` (strict). */
  alignment_dkim: 'r' | 's' | null;
  alignment_spf: 'r' | 's' | null;
  report_destinations: DmarcReportDestination[];
  findings: Finding[];
}

export interface CheckDmarcOptions {
  dns?: MailDns;
}

const TAG_NAMES = ['v', 'p', 'sp', 'pct', 'rua', 'ruf', 'adkim', 'aspf', 'fo', 'rf', 'ri'] as const;
const POLICIES: readonly string[] = ['none', 'quarantine', 'reject'];
/** Parents asked at most by the tree walk. */
const MAX_WALK = 7;

/**
 * Finds and validates the DMARC record of `domain` (RFC 7489): at
 * `_dmarc.<domain>`, else at the nearest parent that has one (the DNS tree
 * walk of DMARCbis, which needs no public-suffix list; the walk stops at
 * two labels). Parses and checks p, sp, pct, rua, ruf, adkim, aspf, fo,
 * rf, ri, and asks every external report domain whether it accepts the
 * reports.
 *
 * @throws NetintelError `invalid_input` for a bad domain; `timeout`,
 *   `upstream`, `unreachable` when a `_dmarc` lookup fails (never read as
 *   "no record"); a failed authorization lookup is a finding.
 */
export async function checkDmarc(ctx: EngineContext, domain: string, options: CheckDmarcOptions = {}): Promise<DmarcResult> {
  const name = normaliseMailDomain(domain).ascii;
  const dns = options.dns ?? createMailDns(ctx);
  const findings: Finding[] = [];
  const empty: DmarcResult = {
    kind: 'dmarc',
    domain: name,
    location: null,
    policy_domain: null,
    inherited: false,
    record: null,
    records: [],
    tags: Object.fromEntries(TAG_NAMES.map((tag) => [tag, null])) as unknown as DmarcTags,
    policy: null,
    percent: null,
    alignment_dkim: null,
    alignment_spf: null,
    report_destinations: [],
    findings,
  };

  const candidates = [name, ...parents(name)];
  let found: { location: string; policy_domain: string; records: string[]; near: string[] } | null = null;
  let firstNear: string[] = [];
  for (const candidate of candidates) {
    const location = `_dmarc.${candidate}`;
    if (dnsNameProblem(location) !== null) continue;
    let lookup;
    try {
      lookup = await dns.lookup(location, 'TXT');
    } catch (error) {
      throw withContext(error, `the DMARC lookup of ${location} failed`);
    }
    const texts = lookup.records.map((record) => record.text);
    const records = texts.filter((text) => /^v\s*=\s*DMARC1\s*(;|$)/.test(text));
    const near = texts.filter((text) => !records.includes(text) && /v\s*=\s*dmarc1/i.test(text));
    if (candidate === name) firstNear = near;
    if (records.length > 0) {
      found = { location, policy_domain: candidate, records, near };
      break;
    }
  }

  for (const text of firstNear) {
    findings.push(
      finding('dmarc_version_not_first', 'error', `A TXT record at _dmarc.${name} mentions DMARC1 but does not start with "v=DMARC1", so receivers ignore it: "${text}"`, 'RFC 7489 §6.4', {
        record: text,
      }),
    );
  }
  if (!found) {
    findings.push(
      finding('dmarc_no_record', 'warning', `No DMARC record at _dmarc.${name}${candidates.length > 1 ? ' nor at a parent domain' : ''}: receivers apply no DMARC policy and send no reports`, 'RFC 7489 §6.6.3', {
        asked: candidates.map((candidate) => `_dmarc.${candidate}`),
      }),
    );
    return empty;
  }
  const inherited = found.policy_domain !== name;
  const result: DmarcResult = { ...empty, location: found.location, policy_domain: found.policy_domain, inherited, records: found.records };
  if (found.records.length > 1) {
    findings.push(
      finding('dmarc_multiple_records', 'error', `${found.location} holds ${found.records.length} DMARC records; with more than one, receivers apply no DMARC policy`, 'RFC 7489 §6.6.3', {
        records: found.records,
      }),
    );
    return result;
  }
  const record = found.records[0]!;
  result.record = record;
  findings.push(finding('dmarc_record_found', 'pass', `DMARC record found at ${found.location}`, 'RFC 7489 §6.1', { location: found.location, record }));
  if (inherited) {
    findings.push(
      finding('dmarc_inherited', 'info', `${name} has no DMARC record of its own; the record of ${found.policy_domain} applies (its sp= tag, or p= without one)`, 'RFC 7489 §6.6.3', {
        policy_domain: found.policy_domain,
      }),
    );
  }

  const { tags, problems } = parseTags(record);
  result.tags = tags;
  for (const problem of problems) findings.push(finding(problem.id, problem.severity, problem.message, 'RFC 7489 §6.4', { record, ...problem.evidence }));
  validateTags(result, findings);
  await checkDestinations(dns, result, findings);
  return result;
}

/** Parent domains for the tree walk, nearest first, down to two labels. */
function parents(domain: string): string[] {
  let labels = domain.split('.');
  const out: string[] = [];
  if (labels.length > MAX_WALK + 1) labels = labels.slice(labels.length - MAX_WALK);
  else labels = labels.slice(1);
  while (labels.length >= 2) {
    out.push(labels.join('.'));
    labels = labels.slice(1);
  }
  return out;
}

interface TagProblem {
  id: string;
  severity: 'error' | 'warning';
  message: string;
  evidence: Record<string, unknown>;
}

function parseTags(record: string): { tags: DmarcTags; problems: TagProblem[] } {
  const tags = Object.fromEntries(TAG_NAMES.map((tag) => [tag, null])) as unknown as Record<string, string | null>;
  const problems: TagProblem[] = [];
  const seen = new Set<string>();
  const parts = record.split(';').map((part) => part.trim());
  parts.forEach((part, index) => {
    if (part.length === 0) return;
    const eq = part.indexOf('=');
    if (eq <= 0) {
      problems.push({ id: 'dmarc_syntax_error', severity: 'error', message: `"${part}" is not a tag=value pair`, evidence: { part } });
      return;
    }
    const tag = part.slice(0, eq).trim().toLowerCase();
    const value = part.slice(eq + 1).trim();
    if (seen.has(tag)) {
      problems.push({ id: 'dmarc_duplicate_tag', severity: 'error', message: `The tag "${tag}" appears more than once`, evidence: { tag } });
      return;
    }
    seen.add(tag);
    if (!(TAG_NAMES as readonly string[]).includes(tag)) {
      problems.push({ id: 'dmarc_unknown_tag', severity: 'warning', message: `Unknown tag "${tag}" (ignored by receivers)`, evidence: { tag, value } });
      return;
    }
    if (tag === 'p' && index !== 1) {
      problems.push({ id: 'dmarc_policy_not_second', severity: 'warning', message: 'The p tag should come right after v=DMARC1', evidence: { position: index + 1 } });
    }
    tags[tag] = value;
  });
  return { tags: tags as unknown as DmarcTags, problems };
}

function validateTags(result: DmarcResult, findings: Finding[]): void {
  const { tags } = result;
  const domain = result.domain;
  const p = tags.p?.toLowerCase() ?? null;
  const sp = tags.sp?.toLowerCase() ?? null;
  let policy: DmarcPolicy | null = null;
  if (p === null) {
    const fallback = tags.rua !== null ? ' (with rua present, receivers read it as p=none)' : ', so receivers ignore the record';
    findings.push(finding('dmarc_policy_missing', 'error', `The DMARC record has no p tag${fallback}`, 'RFC 7489 §6.3, §6.6.3', { record: result.record }));
    if (tags.rua !== null) policy = 'none';
  } else if (!POLICIES.includes(p)) {
    findings.push(finding('dmarc_policy_invalid', 'error', `p=${tags.p} is not none, quarantine or reject`, 'RFC 7489 §6.3', { p: tags.p }));
  } else {
    policy = p as DmarcPolicy;
  }
  if (sp !== null && !POLICIES.includes(sp)) {
    findings.push(finding('dmarc_subdomain_policy_invalid', 'error', `sp=${tags.sp} is not none, quarantine or reject`, 'RFC 7489 §6.3', { sp: tags.sp }));
  }
  const applied = result.inherited && sp !== null && POLICIES.includes(sp) ? (sp as DmarcPolicy) : policy;
  result.policy = applied;
  if (applied === 'none') {
    findings.push(finding('dmarc_policy_none', 'warning', `The DMARC policy for ${domain} is none: receivers only report, forged mail is still delivered`, 'RFC 7489 §6.3', { policy: applied }));
  } else if (applied !== null) {
    findings.push(finding('dmarc_policy_enforced', 'pass', `The DMARC policy for ${domain} is ${applied}`, 'RFC 7489 §6.3', { policy: applied }));
  }
  if (!result.inherited && sp === 'none' && (policy === 'quarantine' || policy === 'reject')) {
    findings.push(finding('dmarc_subdomain_policy_none', 'warning', `p=${policy} but sp=none: mail from subdomains of ${domain} is not protected`, 'RFC 7489 §6.3', { p: policy, sp }));
  }

  if (tags.pct === null) {
    result.percent = policy === null ? null : 100;
  } else if (!/^\d{1,3}$/.test(tags.pct) || Number(tags.pct) > 100) {
    findings.push(finding('dmarc_pct_invalid', 'error', `pct=${tags.pct} is not an integer from 0 to 100`, 'RFC 7489 §6.3', { pct: tags.pct }));
  } else {
    result.percent = Number(tags.pct);
    if (result.percent < 100 && applied !== 'none') {
      findings.push(
        finding('dmarc_pct_partial', 'warning', `pct=${result.percent}: the ${applied ?? ''} policy applies to only ${result.percent}% of failing mail`, 'RFC 7489 §6.3', { pct: result.percent }),
      );
    }
  }

  for (const tag of ['adkim', 'aspf'] as const) {
    const value = tags[tag]?.toLowerCase() ?? null;
    if (value === null) {
      if (tag === 'adkim') result.alignment_dkim = 'r';
      else result.alignment_spf = 'r';
    } else if (value !== 'r' && value !== 's') {
      findings.push(finding('dmarc_alignment_invalid', 'error', `${tag}=${tags[tag]} is not r (relaxed) or s (strict)`, 'RFC 7489 §6.3', { tag, value: tags[tag] }));
    } else if (tag === 'adkim') {
      result.alignment_dkim = value;
    } else {
      result.alignment_spf = value;
    }
  }
  if (tags.fo !== null && !tags.fo.split(':').every((option) => ['0', '1', 'd', 's'].includes(option.trim().toLowerCase()))) {
    findings.push(finding('dmarc_fo_invalid', 'error', `fo=${tags.fo} is not a colon-separated list of 0, 1, d, s`, 'RFC 7489 §6.3', { fo: tags.fo }));
  }
  if (tags.rf !== null && !tags.rf.split(':').every((format) => format.trim().toLowerCase() === 'afrf')) {
    findings.push(finding('dmarc_rf_invalid', 'error', `rf=${tags.rf}: the only failure report format is afrf`, 'RFC 7489 §6.3', { rf: tags.rf }));
  }
  if (tags.ri !== null && !/^\d{1,10}$/.test(tags.ri)) {
    findings.push(finding('dmarc_ri_invalid', 'error', `ri=${tags.ri} is not a number of seconds`, 'RFC 7489 §6.3', { ri: tags.ri }));
  }
  if (tags.rua === null) {
    findings.push(finding('dmarc_no_rua', 'info', 'The DMARC record has no rua tag: no aggregate reports are sent, so failures go unseen', 'RFC 7489 §6.3', null));
  }
}

/** Parses rua/ruf and checks that external report domains authorize the reports (RFC 7489 §7.1). */
async function checkDestinations(dns: MailDns, result: DmarcResult, findings: Finding[]): Promise<void> {
  const policyDomain = result.policy_domain!;
  const destinations: DmarcReportDestination[] = [];
  for (const tag of ['rua', 'ruf'] as const) {
    const value = result.tags[tag];
    if (value === null) continue;
    for (const raw of value.split(',').map((uri) => uri.trim())) {
      const destination: DmarcReportDestination = { tag, uri: raw, domain: null, external: false, authorized: null, error: null };
      destinations.push(destination);
      const mailto = /^mailto:([^@!]+)@([^!]+)(?:!\d+[kmgt]?)?$/i.exec(raw);
      if (!mailto) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(raw) && !/^mailto:/i.test(raw)) {
          findings.push(finding('dmarc_uri_unsupported', 'warning', `${tag}: "${raw}" is not a mailto: URI; receivers are only required to support mailto`, 'RFC 7489 §6.2', { tag, uri: raw }));
        } else {
          findings.push(finding('dmarc_uri_invalid', 'error', `${tag}: "${raw}" is not a valid report URI (mailto:address)`, 'RFC 7489 §6.2, §6.3', { tag, uri: raw }));
        }
        continue;
      }
      const reportDomain = mailto[2]!.toLowerCase().replace(/\.$/, '');
      if (dnsNameProblem(reportDomain) !== null || !reportDomain.includes('.')) {
        findings.push(finding('dmarc_uri_invalid', 'error', `${tag}: "${raw}" has no valid domain`, 'RFC 7489 §6.2', { tag, uri: raw }));
        continue;
      }
      destination.domain = reportDomain;
      destination.external = !sameTree(reportDomain, policyDomain);
    }
  }
  await Promise.all(
    destinations
      .filter((destination) => destination.external)
      .map(async (destination) => {
        const name = `${policyDomain}._report._dmarc.${destination.domain}`;
        if (dnsNameProblem(name) !== null) return;
        try {
          const lookup = await dns.lookup(name, 'TXT');
          destination.authorized = lookup.records.some((record) => /^v\s*=\s*DMARC1\s*(;|$)/.test(record.text));
        } catch (error) {
          destination.error = failureJson(error);
        }
      }),
  );
  for (const destination of destinations) {
    if (!destination.external) continue;
    const name = `${policyDomain}._report._dmarc.${destination.domain}`;
    if (destination.error) {
      findings.push(
        finding('dmarc_report_authorization_failed', 'warning', `Could not check whether ${destination.domain} accepts DMARC reports for ${policyDomain}: ${failureText(destination.error)}`, 'RFC 7489 §7.1', {
          uri: destination.uri,
          name,
          error: destination.error,
        }),
      );
    } else if (destination.authorized === false) {
      findings.push(
        finding(
          'dmarc_report_unauthorized',
          'warning',
          `${destination.tag} ${destination.uri}: ${destination.domain} does not say it accepts reports for ${policyDomain} (no "v=DMARC1" TXT record at ${name}), so receivers will not send them`,
          'RFC 7489 §7.1',
          { uri: destination.uri, name },
        ),
      );
    } else if (destination.authorized === true) {
      findings.push(finding('dmarc_report_authorized', 'pass', `${destination.domain} accepts DMARC reports for ${policyDomain}`, 'RFC 7489 §7.1', { uri: destination.uri, name }));
    }
  }
  result.report_destinations = destinations;
}

/**
 * True when one domain is the other or under it. This stands in for "same
 * organizational domain" without a public-suffix list: reports to a sibling
 * (reports.example.com for mail.example.com) are checked for authorization
 * too, which at worst asks one query more than needed.
 */
function sameTree(a: string, b: string): boolean {
  return a === b || a.endsWith(`.${b}`) || b.endsWith(`.${a}`);
}
