import type { EngineContext } from '../context.js';
import { NetintelError, toNetintelError } from '../../errors.js';
import { normaliseMailDomain } from '../mail/mail-domain.js';
import type { Outcome } from '../outcome.js';
import { parseAggregateReport, type DmarcAggregateReport } from './aggregate-report.js';
import { REPORT_LIMITS, reportDocuments, type ReportLimits } from './report-containers.js';
import { loadAlignment, reportRow, type Alignment, type DmarcReportRow } from './report-rows.js';
import { createSourceEnrichment, type DmarcSource } from './source-enrichment.js';

/** What reports are kept, and how sources are enriched. */
export interface DmarcReportOptions {
  /** Reports whose interval ends before this time are left out. */
  since?: Date;
  /** Only reports about this domain's policy (any case, a final dot, an internationalised name in either form). */
  domain?: string;
  /** Look the PTR name of each source up (default true). */
  reverseDns?: boolean;
  /** The most sources whose PTR name is looked up; the others are `skipped` (default: every source). */
  maxReverseLookups?: number;
  limits?: ReportLimits;
  /**
   * The most bytes inflated out of all the files this reader reads together
   * (a server's request), a file refused half way included; a file that
   * would go past it is refused, as one past the per-file cap is. Default:
   * no cap but the per-file one.
   */
  inflatedBytesInAll?: number;
}

/** The rows of one file of reports, or the file's failure. */
export type FileRows = (file: string, bytes: Buffer) => Promise<Array<Outcome<DmarcReportRow>>>;

/**
 * The reader of report files for one run: each file's reports parsed and
 * filtered, each record a row with its source enriched (once per distinct
 * source). A file that cannot be read is one failed outcome naming it.
 * Reports seen twice are dropped by the tally (report-tally.ts), which every
 * caller runs the rows through, remote ones included.
 */
export function createReportReader(ctx: EngineContext, options: DmarcReportOptions = {}): FileRows {
  const enrichment = createSourceEnrichment(ctx, { reverseDns: options.reverseDns !== false, ...(options.maxReverseLookups === undefined ? {} : { maxReverseLookups: options.maxReverseLookups }) });
  // Reports name the domain in ASCII, lower case, without a final dot.
  const domain = options.domain === undefined ? undefined : normaliseMailDomain(options.domain.trim()).ascii;
  let alignment: Promise<Alignment> | undefined;
  const limits = options.limits ?? REPORT_LIMITS;
  let inflatedLeft = options.inflatedBytesInAll ?? Number.POSITIVE_INFINITY;
  return async (file, bytes) => {
    try {
      alignment ??= loadAlignment();
      const aligned = await alignment;
      // A file in plain XML inflates nothing and is read whatever is left.
      const budget = { left: Math.min(limits.inflatedBytes, inflatedLeft) };
      const start = budget.left;
      let documents;
      try {
        documents = await reportDocuments(bytes, file, limits, budget);
      } finally {
        // What a refused file inflated before it was stopped is spent too.
        inflatedLeft -= start - budget.left;
      }
      const reports = documents.map((document) => ({ name: document.name, report: parseAggregateReport(document.xml, document.name) }));
      const wanted = reports.filter(({ report }) => kept(report, domain, options.since));
      const sources = await enrichedSources(wanted.flatMap(({ report }) => report.records.map((entry) => entry.source_ip)), enrichment);
      return wanted.flatMap(({ name, report }) => report.records.map((entry) => ({ ok: true as const, query: file, value: reportRow(report, entry, name, sources.get(entry.source_ip)!, aligned) })));
    } catch (error) {
      const failure = toNetintelError(error);
      // A library's own exception on a hostile file (the mail parser's, the inflater's) is that file's failure, not the run's.
      return [{ ok: false, query: file, error: failure.code === 'internal' ? new NetintelError('invalid_input', `${file}: ${failure.message}`) : failure }];
    }
  };
}

/** PTR lookups of one file in flight at once. */
const LOOKUPS_IN_FLIGHT = 32;

/** The enrichment of a file's distinct sources, a few at a time (the PTR lookups wait on DNS). */
async function enrichedSources(addresses: readonly string[], enrichment: (address: string) => Promise<DmarcSource>): Promise<Map<string, DmarcSource>> {
  const distinct = [...new Set(addresses)];
  const sources = new Map<string, DmarcSource>();
  for (let start = 0; start < distinct.length; start += LOOKUPS_IN_FLIGHT) {
    const batch = distinct.slice(start, start + LOOKUPS_IN_FLIGHT);
    const enriched = await Promise.all(batch.map(enrichment));
    batch.forEach((address, index) => sources.set(address, enriched[index]!));
  }
  return sources;
}

function kept(report: DmarcAggregateReport, domain: string | undefined, since: Date | undefined): boolean {
  if (domain !== undefined && report.policy.domain !== domain) return false;
  if (since !== undefined && new Date(report.end).getTime() < since.getTime()) return false;
  return true;
}

