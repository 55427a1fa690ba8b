import type { EngineContext } from '../context.js';
import { normaliseMailDomain } from './mail-domain.js';
import { finding, leavesPartUnchecked, type Finding } from '../findings.js';
import { mapOrdered } from '../bulk/map-ordered.js';
import type { Outcome } from '../outcome.js';
import { NetintelError, toNetintelError, type ErrorCode } from '../../errors.js';
import { checkFailure, failureReason, findingFailures, type CheckFailure } from '../check-failure.js';
import { EMAIL_CHECKS, isDaneFinding, ownFindings, type EmailCheck, type EmailTestType } from './email-checks.js';
import { checkDmarc, type DmarcResult } from './check-dmarc.js';
import { checkMailServers, checkMailServer, type MailServerCheck, type MailServerOptions } from './check-mail-servers.js';
import { checkMtaSts, type MtaStsFetchOptions, type MtaStsResult } from './check-mta-sts.js';
import { checkSpf, type SpfResult } from './check-spf.js';
import { checkTlsRpt, type TlsRptResult } from './check-tls-rpt.js';
import { createMailDns } from './mail-dns.js';
import { resolveMx, type MxResult } from './resolve-mx.js';
import { checkDkim, type DkimResult } from './check-dkim.js';
import { checkBimi, type BimiResult } from './check-bimi.js';
import { checkDane, validatingAuthenticator, type Authenticate, type DaneResult } from '../smtp/dane.js';
import { checkMailDnssec, type MailDnssecResult } from './check-mail-dnssec.js';
import type { TrustAnchor } from '../dns/dnssec/trust-anchor.js';

export type { EmailCheck, EmailTestType } from './email-checks.js';

/** A check that could not run: its result is null, and this says why (never "no record"). */
export interface EmailCheckError {
  check: EmailCheck;
  code: string;
  message: string;
}

/** DANE of one MX host; its findings name the host. */
export interface DaneHost extends DaneResult {
  host: string;
}

/** Findings per severity (`unknown`: checks, or parts of one, that could not run). */
export interface FindingSummary {
  error: number;
  warning: number;
  unknown: number;
  info: number;
  pass: number;
}

/**
 * How much of the report could be checked: `all` (every check of the test
 * ran), `some` (the checks in `errors`, or parts of one with `unknown`
 * findings, could not run; the others did), `none` (not one check could
 * run: the report holds no verdict, `failure` says why).
 */
export type EmailChecked = 'all' | 'some' | 'none';

/**
 * The e-mail test of one domain (`netintel email`, GET /api/email-tests):
 * every check's result (null when the test does not include it or it could
 * not run), the checks that failed, and all findings in one list.
 */
export interface EmailReport {
  kind: 'email';
  test: EmailTestType;
  /** The domain tested (ASCII), null for `smtp` with a server. */
  domain: string | null;
  domain_unicode: string | null;
  /** `smtp` with a server: the server and port tested; else null. */
  server: string | null;
  port: number | null;
  mx: MxResult | null;
  spf: SpfResult | null;
  dmarc: DmarcResult | null;
  mta_sts: MtaStsResult | null;
  tls_rpt: TlsRptResult | null;
  /** DKIM keys at the common selectors (selectors cannot be listed: none found is not "no DKIM"). */
  dkim: DkimResult | null;
  /** The BIMI record, its DMARC prerequisites and its logo. */
  bimi: BimiResult | null;
  /** DNSSEC of the domain's MX records and of each MX host's address, validated from the trust anchor. */
  dnssec: MailDnssecResult | null;
  /** SMTP connectivity of each mail server (port 25, STARTTLS), null when not tested. */
  smtp: MailServerCheck[] | null;
  /** DANE (RFC 7672) of each MX host: its TLSA records, their DNSSEC status, and the match with the presented chain. */
  dane: DaneHost[] | null;
  errors: EmailCheckError[];
  /** Whether the checks could run: all, some or none of them. */
  checked: EmailChecked;
  /**
   * Why checks, or parts of them, could not run: the most frequent error code
   * among the checks in `errors` and the failed lookups behind `unknown`
   * findings (each carries its lookup's `{ code, message }` as
   * `evidence.error`). Null when all ran.
   */
  failure: CheckFailure | null;
  /** Every finding of every check, in check order. */
  findings: Finding[];
  summary: FindingSummary;
  /** ISO 8601. */
  checked_at: string;
}

export interface CheckEmailOptions {
  /** Default `general` (form 2). */
  type?: EmailTestType;
  /** `smtp`: the server to test (instead of the domain's MX hosts). */
  server?: string;
  /** SMTP port (default 25). */
  port?: number;
  /** Leave SMTP connectivity out of the general test. */
  skipSmtp?: boolean;
  /** Leave DNSSEC validation out of the general test, and so DANE, which rests on it. */
  skipDnssec?: boolean;
  /** How SMTP probes connect (tests point them at local servers). */
  smtp?: MailServerOptions;
  /** How the MTA-STS policy is fetched (tests point it at a local HTTPS server). */
  mtaSts?: MtaStsFetchOptions;
  /** How the BIMI logo and certificate are fetched (tests trust a local CA). */
  bimi?: { port?: number; ca?: string | Buffer | Array<string | Buffer> };
  /** DKIM selectors to look at instead of the common ones. */
  dkimSelectors?: readonly string[];
  /** The BIMI selector (default `default`). */
  bimiSelector?: string;
  /** Where DNSSEC validation starts (default: the IANA root KSKs). */
  trustAnchors?: TrustAnchor;
  /** How DANE's TLSA answers are judged (default: the DNSSEC validator from `trustAnchors`). */
  authenticate?: Authenticate;
}

/**
 * Runs the e-mail test of a domain: for `general`, MX, SPF, DMARC, MTA-STS,
 * TLS-RPT and SMTP connectivity of each MX, sharing one set of DNS answers;
 * for `mx`, `spf` or `smtp` only that check. A check whose lookups fail is
 * listed in `errors` (and as a `<check>_check_failed` finding) and the others
 * still run: the report never reads a timeout as "no record".
 *
 * @throws NetintelError `invalid_input` for a bad domain or server, `usage`
 *   when `smtp` is asked without a domain or server.
 */
export async function checkEmail(ctx: EngineContext, domain: string | null, options: CheckEmailOptions = {}): Promise<EmailReport> {
  const test = options.type ?? 'general';
  const checkedAt = ctx.now().toISOString();
  const report: EmailReport = {
    kind: 'email',
    test,
    domain: null,
    domain_unicode: null,
    server: null,
    port: null,
    mx: null,
    spf: null,
    dmarc: null,
    mta_sts: null,
    tls_rpt: null,
    dkim: null,
    bimi: null,
    dnssec: null,
    smtp: null,
    dane: null,
    errors: [],
    checked: 'all',
    failure: null,
    findings: [],
    summary: { error: 0, warning: 0, unknown: 0, info: 0, pass: 0 },
    checked_at: checkedAt,
  };

  if (test === 'smtp' && options.server !== undefined) {
    const port = options.port ?? 25;
    report.server = options.server;
    report.port = port;
    report.smtp = [await checkMailServer(ctx, { host: options.server, preference: null, port }, options.smtp ?? {})];
    return finish(report);
  }
  if (domain === null) throw new NetintelError('usage', `the ${test} test needs a domain${test === 'smtp' ? ' or a server' : ''}`);
  const name = normaliseMailDomain(domain);
  report.domain = name.ascii;
  report.domain_unicode = name.unicode;
  const dns = createMailDns(ctx);

  const run = async <T>(check: EmailCheck, work: () => Promise<T>): Promise<T | null> => {
    try {
      return await work();
    } catch (error) {
      const failure = toNetintelError(error);
      if (failure.code === 'invalid_input' || failure.code === 'internal') throw failure;
      report.errors.push({ check, code: failure.code, message: failure.message });
      return null;
    }
  };

  // The MX hosts are needed by the SMTP and DANE tests too; only the general and mx tests report them.
  const skipped = (check: EmailCheck) => test === 'general' && options.skipDnssec === true && (check === 'dnssec' || check === 'dane');
  const wants = (check: EmailCheck) => !skipped(check) && (test === 'general' || test === check || ((test === 'smtp' || test === 'dane' || test === 'dnssec') && check === 'mx'));
  const [mx, spf, dmarc, tlsRpt, dkim, bimi] = await Promise.all([
    wants('mx') ? run('mx', () => resolveMx(ctx, name.ascii, { dns })) : null,
    wants('spf') ? run('spf', () => checkSpf(ctx, name.ascii, { dns })) : null,
    wants('dmarc') ? run('dmarc', () => checkDmarc(ctx, name.ascii, { dns })) : null,
    wants('tls_rpt') ? run('tls_rpt', () => checkTlsRpt(ctx, name.ascii, { dns })) : null,
    wants('dkim') ? run('dkim', () => checkDkim(ctx, name.ascii, { dns, ...(options.dkimSelectors ? { selectors: options.dkimSelectors } : {}) })) : null,
    wants('bimi') ? run('bimi', () => checkBimi(ctx, name.ascii, { dns, ...(options.bimiSelector ? { selector: options.bimiSelector } : {}), ...(options.bimi ? { fetch: options.bimi } : {}) })) : null,
  ]);
  report.mx = test === 'general' || test === 'mx' ? mx : null;
  report.spf = spf;
  report.dmarc = dmarc;
  report.tls_rpt = tlsRpt;
  report.dkim = dkim;
  report.bimi = bimi;
  const mxHosts = mx ? mx.records.map((record) => record.exchange).filter((exchange) => exchange !== '.') : [];
  const daneWanted = (test === 'general' || test === 'dane') && !skipped('dane');
  // DANE's chain comes from the SMTP probe; without one (--no-smtp) the TLSA records and their DNSSEC are still judged.
  const smtpWanted = test === 'smtp' || test === 'dane' || (test === 'general' && !options.skipSmtp);
  const authenticate = options.authenticate ?? validatingAuthenticator(ctx, options.trustAnchors);
  const probeOptions: MailServerOptions = {
    ...(options.smtp ?? {}),
    ...(options.port === undefined ? {} : { port: options.port }),
    ...(daneWanted ? { dane: { authenticate } } : {}),
  };
  const [mtaSts, smtp, dnssec] = await Promise.all([
    wants('mta_sts') ? run('mta_sts', () => checkMtaSts(ctx, name.ascii, { dns, ...(mx ? { mxHosts } : {}), ...(options.mtaSts ? { fetch: options.mtaSts } : {}) })) : null,
    smtpWanted && mx ? run('smtp', () => checkMailServers(ctx, mx, probeOptions, dns)) : null,
    wants('dnssec') ? run('dnssec', () => checkMailDnssec(ctx, name.ascii, mxHosts, options.trustAnchors)) : null,
  ]);
  report.mta_sts = mtaSts;
  report.smtp = test === 'dane' ? null : smtp;
  const dnssecChecks = dnssec ? [dnssec.domain, ...dnssec.mx] : [];
  const dnssecError = dnssecChecks.find((check) => check.error)?.error;
  if (dnssecError && dnssecChecks.every((check) => check.error)) {
    // Not one RRset could be validated for want of answers: the DNSSEC check could not run, as a check whose lookup failed.
    report.errors.push({ check: 'dnssec', code: dnssecError.code, message: dnssecError.message });
  } else {
    report.dnssec = dnssec;
  }
  if (daneWanted && mx) report.dane = await run('dane', () => daneOfHosts(ctx, mxHosts, smtp, authenticate));
  if (smtpWanted && !mx && !report.errors.some((error) => error.check === 'smtp')) {
    report.errors.push({ check: 'smtp', code: 'not_found', message: 'the MX hosts could not be looked up' });
  }
  if (daneWanted && !mx && !report.errors.some((error) => error.check === 'dane')) {
    report.errors.push({ check: 'dane', code: 'not_found', message: 'the MX hosts could not be looked up' });
  }
  return finish(report);
}

/**
 * DANE per MX host: from the SMTP probe when it ran (it looked the TLSA
 * records up while it talked, and matched the chain it was shown), else
 * the TLSA records and their DNSSEC alone.
 */
async function daneOfHosts(ctx: EngineContext, hosts: readonly string[], probes: MailServerCheck[] | null, authenticate: Authenticate): Promise<DaneHost[]> {
  return Promise.all(
    hosts.map(async (host): Promise<DaneHost> => {
      const check = probes?.find((server) => server.host === host);
      if (check?.probe?.dane) return { host, ...check.probe.dane, findings: check.findings.filter(isDaneFinding) };
      const dane = await checkDane(ctx, host, null, { authenticate });
      return { host, ...dane, findings: dane.findings.map((item) => ({ ...item, message: `${host}: ${item.message}`, evidence: { host, ...(item.evidence ?? {}) } })) };
    }),
  );
}

const CHECK_NAMES: Record<EmailCheck, string> = {
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

const CHECK_IDS: Record<EmailCheck, string> = {
  mx: 'mx_check_failed',
  spf: 'spf_check_failed',
  dmarc: 'dmarc_check_failed',
  mta_sts: 'mta_sts_check_failed',
  tls_rpt: 'tls_rpt_check_failed',
  dkim: 'dkim_check_failed',
  bimi: 'bimi_check_failed',
  dnssec: 'dnssec_check_failed',
  smtp: 'smtp_check_failed',
  dane: 'dane_check_failed',
};

function finish(report: EmailReport): EmailReport {
  // In check order, not the order the lookups failed in: the same run gives the same record.
  report.errors.sort((a, b) => EMAIL_CHECKS.indexOf(a.check) - EMAIL_CHECKS.indexOf(b.check));
  const findings: Finding[] = [];
  // The findings of the checks that ran; those of severity `unknown` are parts of them that could not.
  const ran: Finding[] = [];
  for (const check of EMAIL_CHECKS) {
    const error = report.errors.find((item) => item.check === check);
    if (error) {
      // The reason in a few words: the full message is in `errors` (and the evidence), said once rather than once per check.
      const why = error.code === 'not_found' ? error.message : `${failureReason(error.code as ErrorCode)} (${error.code}); this is not "no record"`;
      findings.push(finding(CHECK_IDS[check], 'unknown', `The ${CHECK_NAMES[check]} check could not run: ${why}`, null, { code: error.code, message: error.message }));
      continue;
    }
    const own = ownFindings(report, check);
    findings.push(...own);
    ran.push(...own);
  }
  report.findings = findings;
  report.summary = summarise(findings);
  const anyResult = EMAIL_CHECKS.some((check) => report[check] !== null);
  report.checked = !leavesPartUnchecked(findings) ? 'all' : anyResult ? 'some' : 'none';
  const checksFailed = report.errors.map((error) => ({ code: error.code as ErrorCode, message: error.message }));
  report.failure = checkFailure([...checksFailed, ...findingFailures(ran)]);
  return report;
}


/** Counts findings per severity. */
export function summarise(findings: readonly Finding[]): FindingSummary {
  const summary: FindingSummary = { error: 0, warning: 0, unknown: 0, info: 0, pass: 0 };
  for (const item of findings) summary[item.severity] += 1;
  return summary;
}

/**
 * Runs the e-mail test for many domains (POST /api/email-tests/bulk, bulk
 * `netintel email`): at most `concurrency` at once, outcomes in input order,
 * a failed domain as an error outcome.
 */
export async function runEmailTests(
  ctx: EngineContext,
  domains: readonly string[],
  options: CheckEmailOptions = {},
  concurrency = 8,
): Promise<Array<Outcome<EmailReport>>> {
  const outcomes: Array<Outcome<EmailReport>> = [];
  const run = (domain: string) =>
    checkEmail(ctx, domain, options).then(
      (value): Outcome<EmailReport> => ({ ok: true, query: domain, value }),
      (error: unknown): Outcome<EmailReport> => ({ ok: false, query: domain, error: toNetintelError(error) }),
    );
  for await (const batch of mapOrdered([domains], run, concurrency)) outcomes.push(...batch);
  return outcomes;
}
