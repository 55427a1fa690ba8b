import type { DmarcReportRow } from '../engine/dmarc/report-rows.js';
import type { DmarcReporter, DmarcReportSummary, DmarcSourceSummary } from '../engine/dmarc/report-tally.js';
import type { DmarcSource } from '../engine/dmarc/source-enrichment.js';
import { arrayOf, bool, described, eg, int, nullable, num, oneOfStrings, record, ref, str, strings } from './json-schema.js';

/** What netintel knows of a source address (docs/commands/dmarc-report.md). */
export const DMARC_SOURCE = record<DmarcSource>({
  organization: described(nullable(eg(str, 'Google LLC')), 'The organisation of the network, from the AS data.'),
  asn: described(nullable(eg(int, 15169)), 'The AS number announcing the address.'),
  country_code: described(nullable(eg(str, 'US')), 'ISO 3166-1 alpha-2 code of the location.'),
  ptr: described(nullable(eg(str, 'mail-sor-f41.google.com')), 'The first PTR name, or null (see ptr_status).'),
  ptr_status: described(oneOfStrings(['answer', 'nodata', 'nxdomain', 'unknown', 'skipped']), 'unknown: the reverse lookup failed (not "no name"); skipped: reverse DNS was off.'),
  known_sender: described(nullable(eg(str, 'Google')), 'The mail provider whose network the AS data names, or null.'),
});

/** One record of one aggregate report: a row of `netintel dmarc-report -f csv`. */
export const DMARC_ROW = record<DmarcReportRow>(
  {
    kind: { const: 'dmarc-record' },
    file: described(eg(str, 'reports/google.com!example.com!1767225600!1767311999.xml.gz'), 'The file (and archive entry or attachment) the report came from.'),
    org_name: described(eg(str, 'google.com'), 'The reporting organisation.'),
    report_id: described(eg(str, '17214528413271920373'), 'The report id, unique per reporting organisation.'),
    begin: described(eg(str, '2026-01-01T00:00:00Z'), 'The start of the reported interval.'),
    end: described(eg(str, '2026-01-01T23:59:59Z'), 'The end of the reported interval.'),
    domain: described(eg(str, 'example.com'), 'The domain of the published policy.'),
    policy: described(nullable(eg(str, 'reject')), 'The published policy (p=).'),
    source_ip: described(eg(str, '209.85.220.41'), 'The address that sent the messages.'),
    count: described(eg(int, 120), 'Messages from the address in the interval.'),
    disposition: described(eg(str, 'none'), 'What the receiver did: none, quarantine or reject.'),
    dmarc: described(oneOfStrings(['pass', 'fail']), 'pass when aligned DKIM or aligned SPF passed.'),
    dkim: described(eg(str, 'pass'), 'DKIM as evaluated for DMARC (aligned).'),
    spf: described(eg(str, 'pass'), 'SPF as evaluated for DMARC (aligned).'),
    header_from: described(eg(str, 'example.com'), 'The RFC 5322 From domain.'),
    envelope_from: described(nullable(eg(str, 'bounce.example.com')), 'The envelope sender domain, when the report gives it.'),
    dkim_results: described(
      arrayOf(record({ domain: str, selector: nullable(str), result: str, aligned: bool })),
      'The DKIM signatures checked, each with whether its domain aligns with header_from.',
    ),
    spf_results: described(arrayOf(record({ domain: str, scope: nullable(str), result: str, aligned: bool })), 'The SPF checks, each with whether its domain aligns with header_from.'),
    overrides: described(strings, 'Reason types of a disposition other than the policy (forwarded, local_policy, mailing_list, ...).'),
    source: DMARC_SOURCE,
  },
  { description: 'One record of a DMARC aggregate report, its source enriched.' },
);

const FINDING = ref('Finding');

const SOURCE_SUMMARY = record<DmarcSourceSummary>({
  source_ip: str,
  messages: int,
  failing_messages: int,
  dkim_pass: int,
  spf_pass: int,
  quarantined: int,
  rejected: int,
  overrides: arrayOf(record({ type: str, messages: int })),
  header_from: strings,
  source: ref('DmarcSource'),
});

const REPORTER = record<DmarcReporter>({ org_name: str, reports: int, messages: int, begin: str, end: str });

/** The summary of many aggregate reports: `netintel dmarc-report`'s view, and the API's and library's answer. */
export const DMARC_SUMMARY = record<DmarcReportSummary>(
  {
    kind: { const: 'dmarc-summary' },
    headline: described(eg(str, '12,430 messages from 38 sources; 3 sources fail DMARC: 2.1% of volume'), 'The summary in one sentence.'),
    messages: int,
    sources: described(int, 'Distinct source addresses.'),
    failing_sources: int,
    failing_messages: int,
    failing_share: described(num, 'The failing messages\' share of all, 0 to 1.'),
    reports: described(int, 'Distinct reports counted.'),
    duplicate_reports: described(int, 'Reports read again (same org_name and report_id) and not counted.'),
    files: int,
    files_failed: int,
    domains: strings,
    begin: nullable(str),
    end: nullable(str),
    failing: described(arrayOf(ref('DmarcSourceSummary')), 'Sources with failing messages, most failing messages first.'),
    passing: described(arrayOf(ref('DmarcSourceSummary')), 'Sources all of whose messages pass, most messages first.'),
    reporters: arrayOf(REPORTER),
    errors: described(arrayOf(record({ file: str, code: str, message: str })), 'The files that could not be read, each with its error.'),
    findings: arrayOf(FINDING),
  },
  { description: 'Who sends mail as the domains of many DMARC aggregate reports, and what fails.' },
);

/** The answer of POST /api/dmarc-reports: the summary, and each record as a row (or a file's error) in order. */
export const DMARC_ANSWER = {
  type: 'object',
  required: ['summary', 'results'],
  properties: {
    summary: ref('DmarcReportSummary'),
    results: {
      type: 'array',
      description: 'The rows of every file in order (those of a report sent twice too: the summary counts it once), each naming its file as `query`; a file that could not be read is one error item.',
      items: {
        oneOf: [
          { type: 'object', required: ['query', 'record'], properties: { query: str, record: ref('DmarcReportRow') } },
          { type: 'object', required: ['query', 'error'], properties: { query: str, error: ref('ItemError') } },
        ],
      },
    },
  },
};

export const DMARC_PARTS = { DmarcSource: DMARC_SOURCE, DmarcSourceSummary: SOURCE_SUMMARY, DmarcReportSummary: DMARC_SUMMARY, DmarcReportAnswer: DMARC_ANSWER };
