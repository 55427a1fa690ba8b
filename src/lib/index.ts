/**
 * netintel as a library: the package's public entry (`import … from
 * 'netintel'`). Everything exported here is the stable surface
 * (docs/library.md); every other module of the package is internal and may
 * change in any release. Nothing here prints or reads `process`: what the
 * engine needs from outside comes in through `createNetintel`'s options.
 */
import { createBulkLookup, type SourcedTarget } from '../engine/bulk/bulk-lookup.js';
import { mapOrdered } from '../engine/bulk/map-ordered.js';
import type { DnsQueryType } from '../engine/dns/dns-type.js';
import type { DnsResult } from '../engine/dns/dns-result.js';
import type { DnssecVerdict } from '../engine/dns/dnssec/validate.js';
import type { IpInfoRecord } from '../engine/ip/ip-record.js';
import type { HeadersReport } from '../engine/mail/headers/analyze-headers.js';
import type { AsnResult } from '../engine/asn/lookup-asn.js';
import type { SpfResult } from '../engine/mail/check-spf.js';
import type { DkimResult } from '../engine/mail/check-dkim.js';
import type { BimiResult } from '../engine/mail/check-bimi.js';
import type { EmailReport, EmailTestType } from '../engine/mail/check-email.js';
import type { DmarcReportSummary } from '../engine/dmarc/report-tally.js';
import { NetintelError, toNetintelError } from '../errors.js';
import { contextOf, createNetintel, type Netintel, type NetintelOptions } from './client.js';

export { NetintelError, createNetintel };
export { lookup } from './operation-lookup.js';
export type { Netintel, NetintelOptions };
export type { AsnResult } from '../engine/asn/lookup-asn.js';
export type { DnsAnswer, DnsCaaData, DnsDataByType, DnsMxData, DnsResult, DnsSoaData, DnsSrvData, DnsStatus, DnsTransportKind, DnsTxtData, OtherDnsAnswer, TypedDnsAnswer } from '../engine/dns/dns-result.js';
export type { DnsQueryType, DnsRecordType, OtherDnsType } from '../engine/dns/dns-type.js';
export type { DnssecAnswer, DnssecChainLink, DnssecStatus, DnssecVerdict } from '../engine/dns/dnssec/validate.js';
export type { Finding, Severity } from '../engine/findings.js';
export type { IpInfoRecord, IpLocation, IpNetwork, IpRecordMeta, IpSecurity, ThreatLevel } from '../engine/ip/ip-record.js';
export type { HeadersHop, HeadersMessage, HeadersReport } from '../engine/mail/headers/analyze-headers.js';
export type { StatedResult } from '../engine/mail/headers/auth-results.js';
export type { ArcSeal, ArcVerdict } from '../engine/mail/headers/arc-chain.js';
export type { DkimVerdict, DkimVerdictSignature, DmarcVerdict, HeadersAuthentication, SpfVerdict } from '../engine/mail/headers/authentication.js';
export type { HopAddress, HopBlacklist } from '../engine/mail/headers/hop-addresses.js';
export type { Hop } from '../engine/mail/headers/hops.js';
export type { ReceivedFields } from '../engine/mail/headers/received.js';
export type { RpkiReason, RpkiStatus, RpkiValidity, RpkiVrp } from '../engine/rpki/route-validity.js';
export type { MarkCertificate } from '../engine/mail/bimi-certificate.js';
export type { BimiTags } from '../engine/mail/bimi-record.js';
export type { SvgFacts } from '../engine/mail/bimi-svg.js';
export type { BimiCertificate, BimiDmarcPrerequisites, BimiLogo, BimiResult, BimiStatus } from '../engine/mail/check-bimi.js';
export type { DkimResult, DkimSelectorResult, DkimStatus } from '../engine/mail/check-dkim.js';
export type { DmarcPolicy, DmarcReportDestination, DmarcResult, DmarcTags } from '../engine/mail/check-dmarc.js';
export type { DaneHost, EmailCheck, EmailCheckError, EmailChecked, EmailReport, EmailTestType, FindingSummary } from '../engine/mail/check-email.js';
export type { CheckFailure } from '../engine/check-failure.js';
export type { MailDnssecCheck, MailDnssecResult } from '../engine/mail/check-mail-dnssec.js';
export type { MailServerCheck } from '../engine/mail/check-mail-servers.js';
export type { MtaStsMode, MtaStsPolicy, MtaStsResult } from '../engine/mail/check-mta-sts.js';
export type { SpfNode, SpfNodeStatus, SpfResult, SpfStatus } from '../engine/mail/check-spf.js';
export type { TlsRptResult } from '../engine/mail/check-tls-rpt.js';
export type { DkimPublicKey } from '../engine/mail/dkim-key.js';
export type { DkimKeyRecord } from '../engine/mail/dkim-record.js';
export type { FailureJson } from '../engine/mail/mail-errors.js';
export type { MxAddress, MxHost, MxResult, MxStatus } from '../engine/mail/resolve-mx.js';
export type { SpfEvaluation, SpfMatch, SpfPathStep, SpfResultCode } from '../engine/mail/spf-evaluate.js';
export type { SpfQualifier, SpfTerm } from '../engine/mail/spf-record.js';
export type { SecurityVerdict } from '../engine/security/security-signals.js';
export type { SecurityEvidence, SignalCoverage, SignalName } from '../engine/security/signals.js';
export type { ThreatRule } from '../engine/security/threat-rule.js';
export type { DaneResult, RrsetAuthentication, TlsaLookup, TlsaMatch } from '../engine/smtp/dane.js';
export type { SmtpAuth, SmtpAuthMechanism, SmtpBanner, SmtpCertificate, SmtpChainCertificate, SmtpDane, SmtpEhlo, SmtpEnvelope, SmtpExtensions, SmtpFailure, SmtpReply, SmtpResult, SmtpReverseDns, SmtpStage, SmtpTimings, SmtpTls, SmtpTlsMode, SmtpTranscriptLine } from '../engine/smtp/smtp-result.js';
export type { TlsaRecord } from '../engine/smtp/tlsa-record.js';
export type { ErrorCode, NetintelErrorOptions } from '../errors.js';
export type { DmarcReportRow } from '../engine/dmarc/report-rows.js';
export type { DmarcReporter, DmarcReportSummary, DmarcSourceSummary } from '../engine/dmarc/report-tally.js';
export type { DmarcSource } from '../engine/dmarc/source-enrichment.js';

/** Runs an engine call and gives every failure as a NetintelError. */
async function guarded<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toNetintelError(error);
  }
}

/**
 * The location, network and security record of one IP address (IPv4 or
 * IPv6, any valid text form), from the local datasets; no network.
 *
 * @throws NetintelError `invalid_input` for text that is not an address,
 *   `data_unavailable` when a dataset is missing or corrupt.
 */
export async function lookupIp(client: Netintel, address: string): Promise<IpInfoRecord> {
  const { lookupIp: lookup } = await import('../engine/ip/lookup-ip.js');
  return guarded(() => lookup(contextOf(client), address));
}

/** What {@link resolveDns} asks. */
export interface ResolveDnsOptions {
  /** Types to ask, each a separate question; `ALL` for the common set. Default `PTR` for an IP address, else `A`. */
  types?: readonly DnsQueryType[];
}

/**
 * Asks the client's resolvers about a domain name (or an IP address: a
 * reverse lookup), one result per type in the order asked. NXDOMAIN and
 * NODATA are results (`status`), not errors.
 *
 * @throws NetintelError `invalid_input` for a bad name; `timeout`,
 *   `unreachable` or `upstream` when no resolver answered.
 */
export async function resolveDns(client: Netintel, name: string, options: ResolveDnsOptions = {}): Promise<DnsResult[]> {
  const { resolveDns: resolve } = await import('../engine/dns/resolve-dns.js');
  const ctx = contextOf(client);
  return guarded(async () => resolve(await ctx.dnsTransport(), options.types ? { domain: name, types: options.types } : { domain: name }));
}

/** What {@link checkSpf} evaluates besides the record. */
export interface CheckSpfOptions {
  /** Evaluate the policy for this sending address (RFC 7208 check_host). */
  ip?: string;
  /** The MAIL FROM address of that evaluation. */
  sender?: string;
  /** The HELO name of that evaluation. */
  helo?: string;
}

/** The SPF record of a domain, its includes resolved into a tree, and its problems. */
export async function checkSpf(client: Netintel, domain: string, options: CheckSpfOptions = {}): Promise<SpfResult> {
  const { checkSpf: check } = await import('../engine/mail/check-spf.js');
  return guarded(() => check(contextOf(client), domain, { ...options }));
}

/** What {@link checkEmail} runs. */
export interface CheckEmailOptions {
  /** Which test: `general` (default: MX, SPF, DMARC, MTA-STS, TLS-RPT, SMTP) or one check. */
  type?: EmailTestType;
  /** Leave the SMTP connections to the MX hosts out. */
  skipSmtp?: boolean;
  /** Leave DNSSEC validation out, and so DANE, which rests on it. */
  skipDnssec?: boolean;
  /** DKIM selectors to look at instead of the common ones. */
  dkimSelectors?: readonly string[];
}

/** The e-mail report of a domain: every check, its findings and a summary. */
export async function checkEmail(client: Netintel, domain: string, options: CheckEmailOptions = {}): Promise<EmailReport> {
  const { checkEmail: check } = await import('../engine/mail/check-email.js');
  return guarded(() => check(contextOf(client), domain, { ...options }));
}

/** What {@link checkDkim} looks at. */
export interface CheckDkimOptions {
  /** Selectors to look up instead of the common ones. */
  selectors?: readonly string[];
}

/** The DKIM keys a domain publishes under the given (or the common) selectors. */
export async function checkDkim(client: Netintel, domain: string, options: CheckDkimOptions = {}): Promise<DkimResult> {
  const { checkDkim: check } = await import('../engine/mail/check-dkim.js');
  return guarded(() => check(contextOf(client), domain, { ...options }));
}

/** What {@link analyzeHeaders} adds. */
export interface AnalyzeHeadersOptions {
  /** Check each public hop address against the DNS blocklists. */
  blacklist?: boolean;
}

/**
 * A message's journey read from its header block (a saved message, one
 * mbox entry, or the header fields alone): the hops oldest first, their
 * delays and clock skew, the total transit time, each public hop address
 * described.
 *
 * @throws NetintelError `invalid_input` when the input is not a message or is over the reader's limits.
 */
export async function analyzeHeaders(client: Netintel, message: string | Uint8Array, options: AnalyzeHeadersOptions = {}): Promise<HeadersReport> {
  const { analyzeHeaders: analyze } = await import('../engine/mail/headers/analyze-headers.js');
  const bytes = typeof message === 'string' ? Buffer.from(message, 'utf8') : Buffer.from(message.buffer, message.byteOffset, message.byteLength);
  return guarded(() => analyze(contextOf(client), bytes, 'message', { blacklist: options.blacklist === true }));
}

/** What {@link checkBimi} looks at. */
export interface CheckBimiOptions {
  /** The BIMI selector (default `default`). */
  selector?: string;
}

/** The BIMI record of a domain, its logo and mark certificate, and the DMARC policy it needs. */
export async function checkBimi(client: Netintel, domain: string, options: CheckBimiOptions = {}): Promise<BimiResult> {
  const { checkBimi: check } = await import('../engine/mail/check-bimi.js');
  return guarded(() => check(contextOf(client), domain, { ...options }));
}

/**
 * Validates the RRset of `type` at `name` (or the proof that it does not
 * exist) from the IANA root trust anchor down (RFC 4035 §5).
 *
 * @throws NetintelError `invalid_input` for a bad name, `usage` for an
 *   unknown type, `timeout`/`unreachable`/`upstream` when the question gets no answer.
 */
export async function validateDnssec(client: Netintel, name: string, type = 'A'): Promise<DnssecVerdict> {
  const { validateRrset } = await import('../engine/dns/dnssec/validate.js');
  return guarded(() => validateRrset(contextOf(client), name, type));
}

/** The record of one {@link bulkLookup} input: an IP address's, or an AS number's (`AS15169`). */
export type BulkRecord = IpInfoRecord | AsnResult;

/** One input of {@link bulkLookup}: its record, or the error that stopped it. */
export type BulkOutcome =
  | { ok: true; query: string; value: BulkRecord }
  | { ok: false; query: string; error: NetintelError };

/** How {@link bulkLookup} runs. */
export interface BulkLookupOptions {
  /** How many inputs are read ahead of the results taken (default 1024); memory stays bounded by it. */
  window?: number;
}

/** Inputs are handed to the engine in batches, so the per-item cost stays small. */
const BATCH_SIZE = 256;

async function* targetBatches(inputs: AsyncIterable<string> | Iterable<string>): AsyncGenerator<SourcedTarget[]> {
  let batch: SourcedTarget[] = [];
  let line = 0;
  try {
    for await (const text of inputs) {
      line += 1;
      batch.push({ text: String(text).trim(), line, source: null });
      if (batch.length >= BATCH_SIZE) {
        yield batch;
        batch = [];
      }
    }
  } catch (error) {
    // A source that fails still gets the outcomes of the inputs it gave.
    if (batch.length > 0) yield batch;
    throw error;
  }
  if (batch.length > 0) yield batch;
}

/**
 * Looks up many IP addresses or AS numbers from the local datasets: one
 * outcome per input, in input order, a failed input an `ok: false` outcome
 * (its error names the input's position as `line`). Inputs are read as
 * results are taken, so an endless source works.
 *
 * @throws NetintelError `usage` for a bad window; whatever the input iterable throws, as a NetintelError.
 */
export async function* bulkLookup(
  client: Netintel,
  inputs: AsyncIterable<string> | Iterable<string>,
  options: BulkLookupOptions = {},
): AsyncGenerator<BulkOutcome, void, undefined> {
  const window = options.window ?? 1024;
  if (!Number.isInteger(window) || window < 1) {
    throw new NetintelError('usage', `invalid bulk window ${JSON.stringify(window)}: expected a whole number of at least 1`);
  }
  const lookup = createBulkLookup(contextOf(client), { evidence: true });
  try {
    for await (const batch of mapOrdered(targetBatches(inputs), lookup, window)) {
      yield* batch as BulkOutcome[];
    }
  } catch (error) {
    throw toNetintelError(error);
  }
}

/** A file of DMARC aggregate reports: its name (for errors and rows) and its bytes. */
export interface DmarcReportFile {
  name: string;
  content: Uint8Array;
}

/** What {@link summarizeDmarcReports} keeps and looks up. */
export interface SummarizeDmarcOptions {
  /** Only reports whose interval ends at or after this time. */
  since?: Date;
  /** Only reports about this domain's policy. */
  domain?: string;
  /** Look the PTR name of each source up (default true; false: no DNS). */
  reverseDns?: boolean;
}

/**
 * The summary of DMARC aggregate report files (docs/commands/dmarc-report.md),
 * as `netintel dmarc-report` shows it: each file an XML report, a gzip or
 * zip of reports, or a message or mbox with them attached (told by its
 * first bytes), read one at a time as the iterable gives them. A file that
 * cannot be read is an entry of `errors` naming it; the rest are counted.
 *
 * @throws NetintelError whatever the iterable throws, as a NetintelError.
 */
export async function summarizeDmarcReports(client: Netintel, files: Iterable<DmarcReportFile> | AsyncIterable<DmarcReportFile>, options: SummarizeDmarcOptions = {}): Promise<DmarcReportSummary> {
  const { summarizeDmarcReports: summarize } = await import('../engine/dmarc/summarize-dmarc.js');
  return guarded(() => summarize(contextOf(client), files, options));
}
