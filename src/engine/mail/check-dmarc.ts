import type { EngineContext } from '../context.js';
import { normaliseMailDomain } from './mail-domain.js';
import { finding, type Finding } from '../findings.js';
import { createMailDns, dnsNameProblem, type MailDns } from './mail-dns.js';
import { failureJson, failureText, withContext, type FailureJson } from './mail-errors.js';
import { DmarcWalker } from './dmarc-discovery.js';
import { DMARC_POLICIES, emptyDmarcTags, inTestingMode, isDmarcRecord, parseDmarcTags, type DmarcPolicy, type DmarcTags } from './dmarc-record.js';

export type { DmarcPolicy, DmarcTags } from './dmarc-record.js';

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
  /** Where the record that applies was found (`_dmarc.<domain>` or a parent's), null when none was. */
  location: string | null;
  /** The domain that published that record: the domain itself, its Organizational Domain, or the public suffix domain above it. */
  policy_domain: string | null;
  /**
   * The Organizational Domain (RFC 9989 §4.10.2), found by the DNS tree walk:
   * what relaxed alignment compares. Null when the walk could not finish.
   */
  organizational_domain: string | null;
  /** True when the policy comes from a parent domain (its sp, or np for a domain that does not exist, applies). */
  inherited: boolean;
  record: string | null;
  /** Every DMARC record at `_dmarc.<domain>` itself (more than one: receivers discard them all). */
  records: string[];
  tags: DmarcTags;
  /**
   * The policy that applies to mail from the domain: p, or for a parent's
   * record sp (np when the domain does not exist), one level lower with t=y.
   * Null when there is none, or when it hangs on a lookup that failed.
   */
  policy: DmarcPolicy | null;
  /** Percentage of mail the policy applies to for RFC 7489 receivers (pct, default 100); RFC 9989 removed pct. */
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

/**
 * Finds and validates the DMARC record of `domain` by RFC 9989: at
 * `_dmarc.<domain>`, else the record of its Organizational Domain or of the
 * public suffix domain above it, found by the DNS tree walk (§4.10, no
 * public-suffix list; up to the top label, at most eight queries). Parses
 * and checks every tag, works out the policy that applies (p, sp, np, t),
 * and asks every external report domain whether it accepts the reports.
 *
 * @throws NetintelError `invalid_input` for a bad domain; `timeout`,
 *   `upstream`, `unreachable` when a `_dmarc` lookup the policy depends on
 *   fails (never read as "no record"); a failed authorization or existence
 *   lookup is a finding.
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
    organizational_domain: null,
    inherited: false,
    record: null,
    records: [],
    tags: emptyDmarcTags(),
    policy: null,
    percent: null,
    alignment_dkim: null,
    alignment_spf: null,
    report_destinations: [],
    findings,
  };

  let applied;
  try {
    applied = await new DmarcWalker(dns).applied(name);
  } catch (error) {
    throw withContext(error, `the DMARC lookup of _dmarc.${name} or a parent failed`);
  }
  const own = applied.sets.get(name) ?? { records: [], near: [] };
  for (const text of own.near) {
    findings.push(
      finding('dmarc_version_not_first', 'error', `A TXT record at _dmarc.${name} mentions DMARC1 but does not start with "v=DMARC1", so receivers ignore it: "${text}"`, 'RFC 9989 §4.7', {
        record: text,
      }),
    );
  }
  if (own.records.length > 1) {
    findings.push(
      finding('dmarc_multiple_records', 'error', `_dmarc.${name} holds ${own.records.length} DMARC records; receivers discard them all${applied.record ? '' : ' and apply no DMARC policy'}`, 'RFC 9989 §4.10', {
        records: own.records,
      }),
    );
  }
  const result: DmarcResult = { ...empty, records: own.records, organizational_domain: applied.organizationalDomain };
  if (applied.error !== null && applied.organizationalDomain === null) {
    findings.push(
      finding('dmarc_organizational_domain_unknown', 'unknown', `The DNS tree walk above ${name} could not finish, so its Organizational Domain is unknown: ${failureText(failureJson(applied.error))}`, 'RFC 9989 §4.10.2', {
        asked: applied.asked,
        error: failureJson(applied.error),
      }),
    );
  }
  const found = applied.record;
  if (!found) {
    findings.push(
      finding('dmarc_no_record', 'warning', `No DMARC record at _dmarc.${name} nor at a parent domain that applies to it: receivers apply no DMARC policy and send no reports`, 'RFC 9989 §4.10.1', {
        asked: applied.asked,
      }),
    );
    return result;
  }
  result.location = `_dmarc.${found.domain}`;
  result.policy_domain = found.domain;
  result.inherited = applied.inherited;
  result.record = found.record;
  findings.push(finding('dmarc_record_found', 'pass', `DMARC record found at ${result.location}`, 'RFC 9989 §4.10', { location: result.location, record: found.record }));
  if (applied.inherited) {
    findings.push(
      finding('dmarc_inherited', 'info', `${name} has no DMARC record of its own; the record of ${found.domain} applies (its sp= tag, np= when ${name} does not exist, or p=)`, 'RFC 9989 §4.10.1', {
        policy_domain: found.domain,
      }),
    );
  }

  const { tags, problems } = parseDmarcTags(found.record);
  result.tags = tags;
  for (const problem of problems) findings.push(finding(problem.id, problem.severity, problem.message, 'RFC 9989 §4.7', { record: found.record, ...problem.evidence }));
  result.policy = applied.policy;
  if (applied.existenceError !== null) {
    findings.push(
      finding('dmarc_existence_unknown', 'unknown', `Whether ${name} exists could not be checked, so whether np=${tags.np} or the sp/p policy applies is unknown: ${failureText(failureJson(applied.existenceError))}`, 'RFC 9989 §4.10.1', {
        error: failureJson(applied.existenceError),
      }),
    );
  }
  validateTags(result, applied.policyTags !== null, findings);
  await checkDestinations(dns, result, findings);
  return result;
}

function validateTags(result: DmarcResult, applies: boolean, findings: Finding[]): void {
  const { tags } = result;
  const domain = result.domain;
  const p = tags.p?.toLowerCase() ?? null;
  const sp = tags.sp?.toLowerCase() ?? null;
  const ignored = applies ? ' (with a valid rua, receivers read the record as p=none)' : ', so receivers ignore the record';
  if (p === null) {
    findings.push(finding('dmarc_policy_missing', 'error', `The DMARC record has no p tag${ignored}`, 'RFC 9989 §4.7, §4.10.1', { record: result.record }));
  } else if (!DMARC_POLICIES.includes(p)) {
    findings.push(finding('dmarc_policy_invalid', 'error', `p=${tags.p} is not none, quarantine or reject${ignored}`, 'RFC 9989 §4.7, §4.10.1', { p: tags.p }));
  }
  if (sp !== null && !DMARC_POLICIES.includes(sp)) {
    findings.push(finding('dmarc_subdomain_policy_invalid', 'error', `sp=${tags.sp} is not none, quarantine or reject${ignored}`, 'RFC 9989 §4.7, §4.10.1', { sp: tags.sp }));
  }
  if (tags.np !== null && !DMARC_POLICIES.includes(tags.np.toLowerCase())) {
    findings.push(finding('dmarc_np_invalid', 'error', `np=${tags.np} is not none, quarantine or reject${ignored}`, 'RFC 9989 §4.7, §4.10.1', { np: tags.np }));
  }
  if (tags.psd !== null && !['y', 'n', 'u'].includes(tags.psd.toLowerCase())) {
    findings.push(finding('dmarc_psd_invalid', 'error', `psd=${tags.psd} is not y, n or u`, 'RFC 9989 §4.7', { psd: tags.psd }));
  }
  if (tags.t !== null && !['y', 'n'].includes(tags.t.toLowerCase())) {
    findings.push(finding('dmarc_t_invalid', 'error', `t=${tags.t} is not y or n`, 'RFC 9989 §4.7', { t: tags.t }));
  }
  const applied = result.policy;
  if (applied !== null && inTestingMode(tags)) {
    findings.push(finding('dmarc_testing', 'warning', `t=y: the record is in testing mode, so receivers apply ${applied}, one level below what it asks`, 'RFC 9989 §4.7', { policy: applied }));
  }
  if (applied === 'none') {
    findings.push(finding('dmarc_policy_none', 'warning', `The DMARC policy for ${domain} is none: receivers only report, forged mail is still delivered`, 'RFC 9989 §4.7', { policy: applied }));
  } else if (applied !== null) {
    findings.push(finding('dmarc_policy_enforced', 'pass', `The DMARC policy for ${domain} is ${applied}`, 'RFC 9989 §4.7', { policy: applied }));
  }
  const enforcing = p === 'quarantine' || p === 'reject';
  if (!result.inherited && sp === 'none' && enforcing) {
    findings.push(finding('dmarc_subdomain_policy_none', 'warning', `p=${p} but sp=none: mail from subdomains of ${domain} is not protected`, 'RFC 9989 §4.7', { p, sp }));
  }

  if (tags.pct === null) {
    result.percent = applied === null ? null : 100;
  } else if (!/^\d{1,3}$/.test(tags.pct) || Number(tags.pct) > 100) {
    findings.push(finding('dmarc_pct_invalid', 'error', `pct=${tags.pct} is not an integer from 0 to 100`, 'RFC 7489 §6.3', { pct: tags.pct }));
  } else {
    result.percent = Number(tags.pct);
    if (result.percent < 100 && applied !== 'none') {
      findings.push(
        finding(
          'dmarc_pct_partial',
          'warning',
          `pct=${result.percent}: receivers that follow RFC 7489 apply the ${applied ?? ''} policy to only ${result.percent}% of failing mail; RFC 9989 removed pct (its testing mode is t=y), so others apply it to all`,
          'RFC 7489 §6.3; RFC 9989 §4.7',
          { pct: result.percent },
        ),
      );
    }
  }

  for (const tag of ['adkim', 'aspf'] as const) {
    const value = tags[tag]?.toLowerCase() ?? null;
    if (value === null) {
      if (tag === 'adkim') result.alignment_dkim = 'r';
      else result.alignment_spf = 'r';
    } else if (value !== 'r' && value !== 's') {
      findings.push(finding('dmarc_alignment_invalid', 'error', `${tag}=${tags[tag]} is not r (relaxed) or s (strict)`, 'RFC 9989 §4.7', { tag, value: tags[tag] }));
    } else if (tag === 'adkim') {
      result.alignment_dkim = value;
    } else {
      result.alignment_spf = value;
    }
  }
  if (tags.fo !== null && !tags.fo.split(':').every((option) => ['0', '1', 'd', 's'].includes(option.trim().toLowerCase()))) {
    findings.push(finding('dmarc_fo_invalid', 'error', `fo=${tags.fo} is not a colon-separated list of 0, 1, d, s`, 'RFC 9989 §4.7', { fo: tags.fo }));
  }
  if (tags.rf !== null && !tags.rf.split(':').every((format) => format.trim().toLowerCase() === 'afrf')) {
    findings.push(finding('dmarc_rf_invalid', 'error', `rf=${tags.rf}: the only failure report format is afrf`, 'RFC 7489 §6.3', { rf: tags.rf }));
  }
  if (tags.ri !== null && !/^\d{1,10}$/.test(tags.ri)) {
    findings.push(finding('dmarc_ri_invalid', 'error', `ri=${tags.ri} is not a number of seconds`, 'RFC 7489 §6.3', { ri: tags.ri }));
  }
  if (tags.rua === null) {
    findings.push(finding('dmarc_no_rua', 'info', 'The DMARC record has no rua tag: no aggregate reports are sent, so failures go unseen', 'RFC 9989 §4.7', null));
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
          destination.authorized = lookup.records.some((record) => isDmarcRecord(record.text));
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
        finding('dmarc_report_authorization_failed', 'unknown', `Could not check whether ${destination.domain} accepts DMARC reports for ${policyDomain}: ${failureText(destination.error)}`, 'RFC 7489 §7.1', {
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
