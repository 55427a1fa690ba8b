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
  // The nodes in document order, read below as they are: the parser's own object form costs a quarter more.
  preserveOrder: true,
});

/** An element as the parser gives it in document order: its child nodes, each `{ tag: children }` or `{ '#text': text }`. */
type Children = ReadonlyArray<Readonly<Record<string, unknown>>>;

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
  const feedback = one(parser.parse(text) as Children, 'feedback');
  if (feedback === null) throw invalid(name, 'the XML is not an aggregate report (no <feedback> element)');
  const metadata = one(feedback, 'report_metadata');
  const published = one(feedback, 'policy_published');
  if (metadata === null || published === null) throw invalid(name, 'the report has no <report_metadata> or <policy_published>');
  const range = one(metadata, 'date_range');
  const orgName = textAt(metadata, 'org_name');
  const reportId = textAt(metadata, 'report_id');
  const domain = textAt(published, 'domain')?.toLowerCase();
  if (!orgName || !reportId || !domain || range === null) throw invalid(name, 'the report lacks org_name, report_id, date_range or the policy domain');
  const isBis = /urn:ietf:params:xml:ns:dmarc-2\.0/.test(text.slice(0, 2048)) || ['np', 'testing', 'discovery_method'].some((tag) => one(published, tag) !== null);
  const begin = epochText(textAt(range, 'begin'), name);
  const end = epochText(textAt(range, 'end'), name);
  if (begin > end) throw invalid(name, `the date_range ends (${end}) before it begins (${begin})`);
  return {
    format: isBis ? 'dmarcbis' : 'rfc7489',
    org_name: orgName,
    email: textAt(metadata, 'email'),
    report_id: reportId,
    begin,
    end,
    policy: {
      domain,
      p: textAt(published, 'p'),
      sp: textAt(published, 'sp'),
      np: textAt(published, 'np'),
      adkim: textAt(published, 'adkim') === 's' ? 's' : 'r',
      aspf: textAt(published, 'aspf') === 's' ? 's' : 'r',
      pct: numberOf(textAt(published, 'pct')),
    },
    records: all(feedback, 'record').map((record, index) => reportEntry(record, `${name}: record ${index + 1}`)),
  };
}

/** A DOCTYPE may declare entities that expand without bound (RFC 7489 reports never need one). */
function refuseDeclarations(text: string, name: string): void {
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw invalid(name, 'the XML declares a DOCTYPE or entities, which reports never need: refused');
}

function reportEntry(record: Children, where: string): DmarcReportEntry {
  const row = one(record, 'row');
  const evaluated = one(row, 'policy_evaluated');
  const identifiers = one(record, 'identifiers');
  const auth = one(record, 'auth_results');
  const sourceIp = textAt(row, 'source_ip');
  const count = numberOf(textAt(row, 'count'));
  if (row === null || evaluated === null || sourceIp === null || count === null) throw new NetintelError('invalid_input', `${where}: no <row> with source_ip, count and policy_evaluated`);
  return {
    source_ip: sourceIp,
    count,
    disposition: textAt(evaluated, 'disposition')?.toLowerCase() ?? 'none',
    // RFC 7489 appendix C allows "pass" and "fail"; receivers also write other words (`none`) and other cases
    // (`PASS`). Kept in lower case as written, `none` when absent: a missing result is not a "fail" to make up.
    dkim: textAt(evaluated, 'dkim')?.toLowerCase() ?? 'none',
    spf: textAt(evaluated, 'spf')?.toLowerCase() ?? 'none',
    reasons: all(evaluated, 'reason').map((reason) => ({ type: textAt(reason, 'type') ?? 'other', comment: textAt(reason, 'comment') })),
    header_from: (textAt(identifiers, 'header_from') ?? '').toLowerCase(),
    envelope_from: textAt(identifiers, 'envelope_from')?.toLowerCase() ?? null,
    dkim_results: all(auth, 'dkim').map((result) => ({ domain: (textAt(result, 'domain') ?? '').toLowerCase(), selector: textAt(result, 'selector'), result: textAt(result, 'result')?.toLowerCase() ?? 'none' })),
    spf_results: all(auth, 'spf').map((result) => ({ domain: (textAt(result, 'domain') ?? '').toLowerCase(), scope: textAt(result, 'scope'), result: textAt(result, 'result')?.toLowerCase() ?? 'none' })),
  };
}

/** The children of each element named `tag` among an element's children. */
function all(parent: Children | null, tag: string): Children[] {
  if (parent === null) return [];
  const found: Children[] = [];
  for (const node of parent) {
    const children = node[tag];
    if (Array.isArray(children)) found.push(children as Children);
  }
  return found;
}

/** The children of the first element named `tag`, or null. */
function one(parent: Children | null, tag: string): Children | null {
  if (parent === null) return null;
  for (const node of parent) {
    const children = node[tag];
    if (Array.isArray(children)) return children as Children;
  }
  return null;
}

/** The text of the first element named `tag`, trimmed; null when absent or empty. */
function textAt(parent: Children | null, tag: string): string | null {
  const element = one(parent, tag);
  if (element === null) return null;
  let text = '';
  for (const node of element) {
    const value = node['#text'];
    if (typeof value === 'string') text += value;
  }
  text = text.trim();
  return text === '' ? null : text;
}

function numberOf(text: string | null): number | null {
  if (text === null || !/^\d{1,15}$/.test(text)) return null;
  return Number(text);
}

/** The validator names the elements left open by their path when a document ends early. */
function validatorMessage(message: string): string {
  return message.startsWith("Invalid '[") ? 'it ends before its elements close: truncated' : message.replace(/\.$/, '');
}

function invalid(name: string, why: string): NetintelError {
  return new NetintelError('invalid_input', `${name}: ${why}`);
}

function epochText(value: string | null, name: string): string {
  const seconds = numberOf(value);
  const date = seconds === null ? null : new Date(seconds * 1000);
  if (date === null || Number.isNaN(date.getTime())) throw invalid(name, 'the date_range is not in Unix seconds');
  return date.toISOString().replace('.000Z', 'Z');
}
