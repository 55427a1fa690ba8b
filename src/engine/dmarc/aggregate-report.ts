import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { NetintelError } from '../../errors.js';

/**
 * One DMARC aggregate report (RFC 7489 appendix C, and the DMARCbis
 * aggregate format, which keeps the same elements under its own namespace
 * and adds `np`, `testing` and `discovery_method` to the published policy).
 */
export interface DmarcAggregateReport {
  format: 'rfc7489' | 'dmarcbis';
  org_name: string;
  email: string | null;
  report_id: string;
  /** The reported interval, ISO 8601 (the report gives Unix seconds). */
  begin: string;
  end: string;
  policy: DmarcPublishedPolicy;
  records: DmarcReportEntry[];
}

export interface DmarcPublishedPolicy {
  domain: string;
  p: string | null;
  sp: string | null;
  np: string | null;
  adkim: 'r' | 's';
  aspf: 'r' | 's';
  pct: number | null;
}

/** One `<record>`: a source address, its message count, what the receiver evaluated and why. */
export interface DmarcReportEntry {
  source_ip: string;
  count: number;
  disposition: string;
  dkim: string;
  spf: string;
  reasons: Array<{ type: string; comment: string | null }>;
  header_from: string;
  envelope_from: string | null;
  dkim_results: Array<{ domain: string; selector: string | null; result: string }>;
  spf_results: Array<{ domain: string; scope: string | null; result: string }>;
}

/** The largest report XML parsed, in bytes: a report of 100,000 records is under 60 MB. */
export const MAX_REPORT_XML_BYTES = 64 * 1024 * 1024;


const parser = new XMLParser({
  ignoreAttributes: true,
  // Entities are never expanded (an XML bomb is refused before, see refuseDeclarations).
  processEntities: false,
  htmlEntities: false,
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  // No callback reads a path: without jPath the parser does not build one per value (a third of its time).
  jPath: false,
  trimValues: true,
});

/**
 * Parses the XML of one aggregate report.
 *
 * @throws NetintelError `invalid_input` for XML that is not well-formed, that
 *   declares a DOCTYPE or entities, or that is not an aggregate report.
 */
export function parseAggregateReport(xml: Buffer | string, name: string): DmarcAggregateReport {
  if (xml.length > MAX_REPORT_XML_BYTES) throw invalid(name, `the report is larger than ${MAX_REPORT_XML_BYTES} bytes`);
  const text = typeof xml === 'string' ? xml : xml.toString('utf8');
  refuseDeclarations(text, name);
  const valid = XMLValidator.validate(text);
  if (valid !== true) throw invalid(name, `malformed XML (${validatorMessage(valid.err.msg)}, line ${valid.err.line})`);
  const document = parser.parse(text) as { feedback?: unknown };
  const feedback = objectAt(document.feedback);
  if (feedback === null) throw invalid(name, 'the XML is not an aggregate report (no <feedback> element)');
  const metadata = objectAt(feedback.report_metadata);
  const published = objectAt(feedback.policy_published);
  if (metadata === null || published === null) throw invalid(name, 'the report has no <report_metadata> or <policy_published>');
  const range = objectAt(metadata.date_range);
  const orgName = textAt(metadata.org_name);
  const reportId = textAt(metadata.report_id);
  const domain = textAt(published.domain)?.toLowerCase();
  if (!orgName || !reportId || !domain || range === null) throw invalid(name, 'the report lacks org_name, report_id, date_range or the policy domain');
  const isBis = /urn:ietf:params:xml:ns:dmarc-2\.0/.test(text.slice(0, 2048)) || ['np', 'testing', 'discovery_method'].some((key) => key in published);
  return {
    format: isBis ? 'dmarcbis' : 'rfc7489',
    org_name: orgName,
    email: textAt(metadata.email),
    report_id: reportId,
    begin: epochText(range.begin, name),
    end: epochText(range.end, name),
    policy: {
      domain,
      p: textAt(published.p),
      sp: textAt(published.sp),
      np: textAt(published.np),
      adkim: textAt(published.adkim) === 's' ? 's' : 'r',
      aspf: textAt(published.aspf) === 's' ? 's' : 'r',
      pct: numberAt(published.pct),
    },
    records: listAt(feedback.record).map((each, index) => reportEntry(each, `${name}: record ${index + 1}`)),
  };
}

/** A DOCTYPE may declare entities that expand without bound (RFC 7489 reports never need one). */
function refuseDeclarations(text: string, name: string): void {
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw invalid(name, 'the XML declares a DOCTYPE or entities, which reports never need: refused');
}

function reportEntry(value: unknown, where: string): DmarcReportEntry {
  const entry = objectAt(value);
  const row = objectAt(entry?.row);
  const evaluated = objectAt(row?.policy_evaluated);
  const identifiers = objectAt(entry?.identifiers);
  const auth = objectAt(entry?.auth_results);
  const sourceIp = textAt(row?.source_ip);
  const count = numberAt(row?.count);
  if (row === null || evaluated === null || sourceIp === null || count === null) throw new NetintelError('invalid_input', `${where}: no <row> with source_ip, count and policy_evaluated`);
  return {
    source_ip: sourceIp,
    count,
    disposition: textAt(evaluated.disposition) ?? 'none',
    dkim: textAt(evaluated.dkim) ?? 'fail',
    spf: textAt(evaluated.spf) ?? 'fail',
    reasons: listAt(evaluated.reason).map((reason) => {
      const fields = objectAt(reason);
      return { type: textAt(fields?.type) ?? 'other', comment: textAt(fields?.comment) };
    }),
    header_from: (textAt(identifiers?.header_from) ?? '').toLowerCase(),
    envelope_from: textAt(identifiers?.envelope_from)?.toLowerCase() ?? null,
    dkim_results: listAt(auth?.dkim).map((result) => {
      const fields = objectAt(result);
      return { domain: (textAt(fields?.domain) ?? '').toLowerCase(), selector: textAt(fields?.selector), result: textAt(fields?.result) ?? 'none' };
    }),
    spf_results: listAt(auth?.spf).map((result) => {
      const fields = objectAt(result);
      return { domain: (textAt(fields?.domain) ?? '').toLowerCase(), scope: textAt(fields?.scope), result: textAt(fields?.result) ?? 'none' };
    }),
  };
}

/** The validator names the elements left open by their path when a document ends early. */
function validatorMessage(message: string): string {
  return message.startsWith("Invalid '[") ? 'it ends before its elements close: truncated' : message.replace(/\.$/, '');
}

function invalid(name: string, why: string): NetintelError {
  return new NetintelError('invalid_input', `${name}: ${why}`);
}

function objectAt(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function listAt(value: unknown): unknown[] {
  if (value === undefined || value === null || value === '') return [];
  return Array.isArray(value) ? value : [value];
}

function textAt(value: unknown): string | null {
  if (typeof value !== 'string' && typeof value !== 'number') return null;
  const text = String(value).trim();
  return text === '' ? null : text;
}

function numberAt(value: unknown): number | null {
  const text = textAt(value);
  if (text === null || !/^\d{1,15}$/.test(text)) return null;
  return Number(text);
}

function epochText(value: unknown, name: string): string {
  const seconds = numberAt(value);
  const date = seconds === null ? null : new Date(seconds * 1000);
  if (date === null || Number.isNaN(date.getTime())) throw invalid(name, 'the date_range is not in Unix seconds');
  return date.toISOString().replace('.000Z', 'Z');
}
