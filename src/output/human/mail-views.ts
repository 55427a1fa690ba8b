import type { Finding } from '../../engine/findings.js';
import type { BimiResult } from '../../engine/mail/check-bimi.js';
import type { DkimResult } from '../../engine/mail/check-dkim.js';
import type { DaneHost, EmailCheck, EmailReport } from '../../engine/mail/check-email.js';
import { checksRunInPart } from '../../engine/mail/email-checks.js';
import { failureReason } from '../../engine/check-failure.js';
import type { ErrorCode } from '../../errors.js';
import type { SpfResult } from '../../engine/mail/check-spf.js';
import type { MxResult } from '../../engine/mail/resolve-mx.js';
import { presentMailServers } from '../schemas/email-schema.js';
import { presentMxHosts } from '../schemas/mx-schema.js';
import { presentSpfMatch, presentSpfTree } from '../schemas/spf-schema.js';
import { factList, findingCounts, findingsBlock, headline, sections, type Fact } from './blocks.js';
import type { Tone, ViewContext } from './style.js';
import type { HumanView } from './view.js';

/** The domain as a person reads it: its Unicode form, the ASCII form beside it when they differ. */
function domainName(record: { domain: string | null; domain_unicode: string | null }): string {
  const ascii = record.domain ?? '';
  const unicode = record.domain_unicode ?? ascii;
  return unicode === ascii ? ascii : `${unicode} (${ascii})`;
}

/** The view of a check that ends in findings: `<domain> <what>: 2 errors, 1 warning`, facts, findings. */
function checkBlock(ctx: ViewContext, subject: string, facts: readonly Fact[], findings: readonly Finding[]): string {
  const counts = findingCounts(findings);
  return sections(headline(ctx, subject, counts.text, counts.tone, ': '), factList(ctx, facts), findingsBlock(ctx, findings));
}

/** Columns of a table of many domains' checks: the domain, the check's status, the finding counts. */
function checkTable<T extends { domain: string | null; domain_unicode: string | null; findings: readonly Finding[] }>(status: (record: T) => string): HumanView['table'] {
  const count = (findings: readonly Finding[], severity: Finding['severity']) => String(findings.filter((item) => item.severity === severity).length);
  return {
    columns: [
      { header: 'domain', priority: 0, wrap: true },
      { header: 'status', priority: 0, wrap: true },
      { header: 'errors', priority: 1 },
      { header: 'warnings', priority: 2 },
      { header: 'notes', priority: 3 },
    ],
    cells: (value) => {
      const record = value as T;
      return [domainName(record), status(record), count(record.findings, 'error'), count(record.findings, 'warning'), count(record.findings, 'info')];
    },
    key: (value) => (value as T).domain ?? '',
  };
}

const MX_STATUS: Readonly<Record<string, string>> = {
  mx: 'MX records',
  null_mx: 'null MX: the domain accepts no mail (RFC 7505)',
  implicit: 'no MX records: mail goes to the domain itself (implicit MX, RFC 5321 §5.1)',
  no_mail: 'no MX records and no address: the domain receives no mail',
  nxdomain: 'the domain does not exist',
};

function mxFacts(mx: MxResult): Fact[] {
  return [
    ['status', mx.status === 'mx' ? null : MX_STATUS[mx.status] ?? mx.status],
    ['hosts', mx.records.length > 0 ? presentMxHosts(mx.records) : null],
    ['implicit', mx.implicit_addresses.length > 0 ? mx.implicit_addresses.join(', ') : null],
    ['TTL', mx.ttl_seconds === null ? null : `${mx.ttl_seconds} s`],
  ];
}

export const MX_VIEW: HumanView = {
  block: (ctx, value) => {
    const mx = value as MxResult;
    return checkBlock(ctx, `${domainName(mx)} MX`, mxFacts(mx), mx.findings);
  },
  table: checkTable<MxResult>((mx) => mx.status),
};

function spfFacts(spf: SpfResult): Fact[] {
  const evaluation = spf.evaluation;
  return [
    ['status', spf.status],
    ['record', spf.record ?? (spf.records.length > 1 ? spf.records.map((text) => JSON.stringify(text)).join('\n') : null)],
    ['strings', spf.record_strings.length > 1 ? spf.record_strings.map((text) => JSON.stringify(text)).join('\n') : null],
    ['lookups', `${spf.lookups} of at most ${spf.lookup_limit}`],
    ['void lookups', spf.void_lookups > 0 ? `${spf.void_lookups} of at most ${spf.void_lookup_limit}` : null],
    ['includes', spf.tree && spf.tree.children.length > 0 ? presentSpfTree(spf.tree) : null],
    ...(evaluation
      ? ([
          ['check', `${evaluation.ip}${evaluation.sender ? ` sending as ${evaluation.sender}` : ''}${evaluation.helo ? ` (HELO ${evaluation.helo})` : ''}`],
          ['result', evaluation.result],
          ['matched', evaluation.matched ? presentSpfMatch(evaluation.matched) : null],
          ['explanation', evaluation.explanation],
          ['reason', evaluation.reason],
        ] satisfies Fact[])
      : []),
  ];
}

export const SPF_VIEW: HumanView = {
  block: (ctx, value) => {
    const spf = value as SpfResult;
    return checkBlock(ctx, `${domainName(spf)} SPF`, spfFacts(spf), spf.findings);
  },
  table: checkTable<SpfResult>((spf) => (spf.evaluation ? `${spf.status}, ${spf.evaluation.ip}: ${spf.evaluation.result}` : spf.status)),
};

/** A policy that hangs on a lookup that failed is unknown, not absent. */
function dmarcPolicyText(dmarc: NonNullable<EmailReport['dmarc']>): string {
  if (dmarc.policy !== null) return `policy ${dmarc.policy}`;
  return dmarc.findings.some((item) => item.id === 'dmarc_existence_unknown') ? 'policy unknown' : 'no policy';
}

function emailFacts(report: EmailReport): Fact[] {
  const { mx, spf, dmarc, mta_sts: mtaSts, tls_rpt: tlsRpt } = report;
  const dmarcText = dmarc
    ? dmarc.record
      ? `${dmarcPolicyText(dmarc)}${dmarc.inherited && dmarc.policy_domain ? ` (from ${dmarc.policy_domain})` : ''}\n${dmarc.record}`
      : 'no record'
    : null;
  const mtaStsText = mtaSts
    ? mtaSts.record
      ? [mtaSts.policy?.mode ? `mode ${mtaSts.policy.mode}` : mtaSts.policy_error ? `policy not fetched: ${mtaSts.policy_error.code}` : 'no policy', mtaSts.record].join('\n')
      : 'no record'
    : null;
  return [
    ['server', report.server ? `${report.server}${report.port ? ` port ${report.port}` : ''}` : null],
    ['MX', mx ? (mx.records.length > 0 ? presentMxHosts(mx.records) : MX_STATUS[mx.status] ?? mx.status) : null],
    ['SPF', spf ? (spf.record ? `${spf.status}, ${spf.lookups} of ${spf.lookup_limit} lookups\n${spf.record}` : spf.status) : null],
    ['DMARC', dmarcText],
    ['MTA-STS', mtaStsText],
    ['TLS-RPT', tlsRpt ? tlsRpt.record ?? 'no record' : null],
    ['DKIM', report.dkim ? dkimSummary(report.dkim) : null],
    ['BIMI', report.bimi ? bimiSummary(report.bimi) : null],
    ['DNSSEC', report.dnssec ? [report.dnssec.domain, ...report.dnssec.mx].map((check) => `${check.name} ${check.type}: ${check.status}${check.status === 'secure' || check.reason === null ? '' : ` (${check.reason})`}`).join('\n') : null],
    ['SMTP', report.smtp ? presentMailServers(report.smtp) : null],
    ['DANE', report.dane ? report.dane.map((host) => `${host.host}: ${daneVerdictText(host)}${host.tlsa.records.length > 0 ? ` (${host.tlsa.records.length} TLSA, DNSSEC ${host.dnssec.status})` : ''}`).join('\n') : null],
    ['not checked', notChecked(report)],
    // The first failure in full, once: the checks above all met the same one (a resolver that did not answer, say).
    ['failure', report.failure ? report.failure.message : null],
  ];
}

/** The checks that could not run, grouped by why: `MX, SPF, DMARC: DNS did not answer (timeout)`. */
function notChecked(report: EmailReport): string | null {
  if (report.errors.length === 0) return null;
  const groups = new Map<string, string[]>();
  for (const error of report.errors) {
    // A check skipped because another failed says so in its own words.
    const why = error.code === 'not_found' ? error.message : `${failureReason(error.code as ErrorCode)} (${error.code})`;
    groups.set(why, [...(groups.get(why) ?? []), CHECK_LABELS[error.check]]);
  }
  return [...groups].map(([why, checks]) => `${checks.join(', ')}: ${why}`).join('\n');
}

const CHECK_LABELS: Record<EmailCheck, string> = {
  mx: 'MX',
  spf: 'SPF',
  dmarc: 'DMARC',
  mta_sts: 'MTA-STS',
  tls_rpt: 'TLS-RPT',
  dkim: 'DKIM',
  bimi: 'BIMI',
  dnssec: 'DNSSEC',
  smtp: 'SMTP',
  dane: 'DANE',
};

/** The checks a report could not run in full: those in `errors`, then those that ran but left a part unchecked (DNSSEC of one name, an MX host). */
function uncheckedLabels(report: EmailReport): string[] {
  return [...report.errors.map((error) => CHECK_LABELS[error.check]), ...checksRunInPart(report).map((check) => `${CHECK_LABELS[check]} (in part)`)];
}

/**
 * The verdict of an e-mail report in a few words: the finding counts; with
 * `could not check ...` after them when some checks could not run; only
 * that when none could (there is no verdict then, and no count to give).
 */
function emailVerdict(report: EmailReport): { text: string; tone: Tone } {
  if (report.checked === 'none') return { text: `could not check: ${report.failure?.reason ?? 'no check could run'}`, tone: 'bad' };
  const counts = findingCounts(report.findings.filter((item) => item.severity !== 'unknown'));
  if (report.checked === 'all') return counts;
  const unchecked = `could not check ${uncheckedLabels(report).join(', ')}${report.failure ? `: ${report.failure.reason}` : ''}`;
  return { text: `${counts.text}; ${unchecked}`, tone: counts.tone === 'bad' ? 'bad' : 'warn' };
}

/** One line: the keys found at the selectors asked, or why there are none. */
function dkimSummary(dkim: DkimResult): string {
  const found = dkim.selectors.filter((selector) => selector.found);
  if (found.length === 0) return dkim.probed === 'common' ? `no key at ${dkim.selectors.length} common selectors (selectors cannot be listed: not proof of no DKIM)` : `no key at ${dkim.selectors.map((item) => item.selector).join(', ')}`;
  const keys = found.map((selector) => `${selector.selector}${selector.key ? ` ${selector.key.type === 'rsa' ? 'RSA' : 'Ed25519'} ${selector.key.bits}` : selector.record?.public_key === '' ? ' revoked' : ''}`);
  return `${dkim.status}: ${keys.join(', ')}`;
}

function bimiSummary(bimi: BimiResult): string {
  if (bimi.status === 'none') return 'no record';
  if (bimi.status === 'declined') return 'declined (empty record)';
  const dmarc = bimi.dmarc.met === true ? 'DMARC prerequisites met' : bimi.dmarc.met === false ? 'DMARC prerequisites not met' : 'DMARC unknown';
  return `${bimi.status}, ${dmarc}${bimi.logo ? `, logo ${bimi.logo.error ? 'not fetched' : 'fetched'}` : ''}`;
}

const DANE_VERDICTS: Record<DaneHost['verdict'], string> = {
  matched: 'TLSA matches the certificate',
  mismatch: 'TLSA does not match the certificate',
  unusable: 'no TLSA record senders can use',
  'no-tls': 'TLSA published, but no certificate was seen',
  'not-applicable': 'not in use',
  failed: 'TLSA lookup failed',
};

/** A host's DANE verdict in words; `failed` covers a bogus answer and undecided DNSSEC too, which are not a lookup that failed. */
function daneVerdictText(host: DaneHost): string {
  if (host.verdict === 'failed' && host.dnssec.status === 'bogus') return 'TLSA records fail DNSSEC validation (bogus)';
  if (host.verdict === 'failed' && host.tlsa.status !== 'failed' && host.dnssec.status === 'indeterminate') return "not checked: the TLSA records' DNSSEC could not be decided";
  return DANE_VERDICTS[host.verdict];
}

export const EMAIL_VIEW: HumanView = {
  block: (ctx, value) => {
    const report = value as EmailReport;
    const subject = report.domain ? `${domainName(report)} mail` : `${report.server ?? ''} mail`;
    const verdict = emailVerdict(report);
    // Nothing could be checked: the facts say which checks and why, once; a finding per check would say it again.
    const findings = report.checked === 'none' ? [] : report.findings;
    return sections(headline(ctx, report.test === 'general' ? subject : `${subject} (${report.test})`, verdict.text, verdict.tone, ': '), factList(ctx, emailFacts(report)), findingsBlock(ctx, findings));
  },
  table: checkTable<EmailReport>((report) =>
    report.checked === 'none'
      ? `could not check: ${report.failure?.reason ?? 'no check could run'}`
      : report.checked === 'some'
        ? `incomplete: ${uncheckedLabels(report).join(', ')} not checked`
        : report.summary.error > 0
          ? 'errors'
          : report.summary.warning > 0
            ? 'warnings'
            : 'ok',
  ),
};
