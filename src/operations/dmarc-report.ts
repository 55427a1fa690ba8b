import type { FastifyRequest } from 'fastify';
import type { FailOn } from '../cli/fail-on.js';
import type { DmarcReportOptions } from '../engine/dmarc/report-files.js';
import type { DmarcReportRow } from '../engine/dmarc/report-rows.js';
import { NO_REPORTS, type DmarcReportSummary } from '../engine/dmarc/report-tally.js';
import type { Outcome } from '../engine/outcome.js';
import { ERROR_CODES, NetintelError, toNetintelError } from '../errors.js';
import { normaliseMailDomain } from '../engine/mail/mail-domain.js';
import { fileErrorReason } from '../file-error.js';
import { recordFromSchema } from './declare-record.js';
import { DMARC_PARTS, DMARC_ROW, DMARC_SUMMARY } from './dmarc-report-schema.js';
import { defineOperation, type Lookup, type Outcomes, type RecordDeclaration, type RemoteCall } from './operation.js';

interface DmarcReportSettings {
  filters: Pick<DmarcReportOptions, 'since' | 'domain' | 'reverseDns'>;
  /** A file's bytes ("-": stdin), up to one byte past the size cap, so that the reader refuses what is over it. */
  read: (file: string) => Promise<Buffer>;
  failOn: FailOn | undefined;
}

/** The body of POST /api/dmarc-reports. */
interface DmarcReportBody {
  files: Array<{ name: string; content_base64: string }>;
  since?: string;
  domain?: string;
  reverse_dns?: boolean;
}

/** The files of one request at most. */
const MAX_FILES_PER_REQUEST = 100;
/** The sources of one request whose PTR name the server looks up: a request is charged by its files, not its sources. */
const MAX_REVERSE_LOOKUPS_PER_REQUEST = 500;
/**
 * The XML a request may make the server read, in all: at most 50 times the
 * bytes it sent, at least 1 MiB, never over 16 MiB. Reading costs about 20
 * bytes of memory and a third of a microsecond per byte of XML, so a small
 * request of highly compressed reports (1.4 KB inflating to 59 MB) cannot
 * hold the server for seconds and gigabytes.
 */
function inflatedBytesOfRequest(files: ReadonlyArray<{ content_base64: string }>): number {
  const sent = files.reduce((sum, file) => sum + Math.floor((file.content_base64.length * 3) / 4), 0);
  return Math.min(16 * 1024 * 1024, Math.max(1024 * 1024, 50 * sent));
}

/** The summary of the reports: what the table view shows. */
export const DMARC_SUMMARY_RECORD: RecordDeclaration = recordFromSchema({
  name: 'DmarcReportSummary',
  schema: DMARC_SUMMARY,
  kind: 'dmarc-summary',
  identity: ['headline'],
  // Sources are described by the IP engine's data.
  credit: 'Source networks: DB-IP (https://db-ip.com), CC BY 4.0; ASN data: RouteViews, NRO and DB-IP',
  view: async () => (await import('../output/human/dmarc-report-view.js')).DMARC_SUMMARY_VIEW,
});

/** One report record: the rows of -f csv, json and ndjson. */
const ROW_RECORD: RecordDeclaration = recordFromSchema({
  name: 'DmarcReportRow',
  schema: DMARC_ROW,
  kind: 'dmarc-record',
  identity: ['org_name', 'report_id', 'source_ip'],
  tableColumns: ['org_name', 'source_ip', 'count', 'disposition', 'dmarc', 'dkim', 'spf', 'header_from'],
  mainValue: ['source_ip'],
  // CSV cells show the lists as words (domain:result, aligned marked); json, ndjson and xml keep them as objects.
  presentColumn: (value, column) => presentRowColumn(value as DmarcReportRow, column),
  view: async () => (await import('../output/human/dmarc-report-view.js')).DMARC_ROW_VIEW,
});

/** `netintel dmarc-report`: who sends mail as a domain and what fails, from DMARC aggregate reports (RFC 7489 appendix C). */
export const DMARC_REPORT = defineOperation<DmarcReportSettings, DmarcReportRow>()({
  name: 'dmarc-report',
  command: {
    declare(command, kit) {
      command
        .description('DMARC aggregate reports summarized (RFC 7489 appendix C and DMARCbis; .xml, .xml.gz, .zip, or attached to .eml and mbox files): who sends as your domain, which sources fail, ranked by volume, each enriched with its network, country and PTR name')
        .argument('[files...]', 'report files or directories of them ("-" or none: stdin); the kind is told by the first bytes')
        .addOption(command.createOption('--since <date>', 'only reports whose interval ends on or after this date (YYYY-MM-DD or ISO 8601)'))
        .addOption(command.createOption('--domain <domain>', 'only reports about this domain\'s policy'))
        .addOption(command.createOption('--no-ptr', 'do not look up the PTR name of each source (no DNS at all)'))
        .addHelpText(
          'after',
          [
            '',
            'The table view is the summary: a headline, the failing sources ranked by failing messages,',
            'the passing sources, the reporters. -f csv, json and ndjson give one row per report record.',
            'A report read twice (same org_name and report_id) counts once. A file that cannot be read',
            '(corrupt, truncated, over a cap, not a report) is named and the rest go on.',
            'Exit status: 0; 3 when no report was read (none in the files, or none matched the filters); 7 when some files could not be read; 2 when none could; 10 with --fail-on.',
            'Examples:',
            '  netintel dmarc-report ~/Mail/dmarc/',
            '  netintel dmarc-report reports/*.zip --since 2026-01-01 --domain example.com',
            '  netintel dmarc-report dmarc.mbox -f csv > records.csv',
            '  cat report.xml.gz | netintel dmarc-report -f json',
          ].join('\n'),
        )
        .addOption(kit.failOnOption());
    },
    async settings(flags, kit) {
      const { since, domain, ptr } = flags as { since?: string; domain?: string; ptr?: boolean };
      const { REPORT_LIMITS } = await import('../engine/dmarc/report-containers.js');
      return {
        filters: { ...(since === undefined ? {} : { since: sinceDate(since) }), ...(domain === undefined ? {} : { domain: domainFlag(domain) }), reverseDns: ptr !== false },
        read: async (file) => {
          try {
            return await kit.readUpTo(file, REPORT_LIMITS.fileBytes + 1);
          } catch (error) {
            throw new NetintelError('invalid_input', `${fileLabel(file)}: cannot read it: ${fileErrorReason(error)}`, { cause: error });
          }
        },
        failOn: flags.failOn as FailOn | undefined,
      };
    },
    async run(run) {
      const { reportFiles } = await import('./dmarc-report-files.js');
      const files = await reportFiles(run.args, run.stdinBringsList());
      const lookup = await run.lookup();
      const { DmarcTally } = await import('../engine/dmarc/report-tally.js');
      const tally = new DmarcTally();
      // The progress display (on a terminal) counts the rows as the files are read.
      const rows = run.progress.track(countedRows(files, lookup, tally), true);
      if (run.options.format !== 'table') {
        const code = await run.emit(rows, { single: false, bulk: true });
        const summary = tally.summary();
        if (summary.reports === 0 && summary.files_failed === 0) throw new NetintelError('not_found', NO_REPORTS);
        // The files decide, as in the table view: the rows alone miss a file read whole that held no record.
        return run.withFindings(code === ERROR_CODES.output_failed.exit ? code : summaryExit(summary), run.settings.failOn, summary.findings);
      }
      for await (const _ of rows);
      const summary = tally.summary();
      await run.emit([[{ ok: true, query: 'reports', value: summary }]], { single: true, bulk: false, record: DMARC_SUMMARY_RECORD });
      return run.withFindings(summaryExit(summary), run.settings.failOn, summary.findings);
    },
  },
  async lookup(ctx, settings) {
    const { createReportReader } = await import('../engine/dmarc/report-files.js');
    const read = createReportReader(ctx, settings.filters);
    const lookup: Lookup<DmarcReportRow> = async (file) => {
      try {
        return await read(fileLabel(file), await settings.read(file));
      } catch (error) {
        return [{ ok: false, query: fileLabel(file), error: error as NetintelError }];
      }
    };
    // One file at a time: memory holds one file, and duplicates are told in the order given.
    lookup.concurrency = 1;
    return lookup;
  },
  record: {
    ...ROW_RECORD,
    // The row's component, and those of the summary and of the API's answer it is part of.
    json: { name: 'DmarcReportRow', load: async () => ({ schema: DMARC_ROW, parts: DMARC_PARTS }) },
  },
  api: {
    method: 'POST',
    path: '/api/dmarc-reports',
    feature: null,
    expected: (remote) => remote.answerOf('POST', '/api/dmarc-reports', 'dmarc report answer'),
    call: (remote, file, settings) => remoteRows(remote, file, settings),
    route: () => ({
      group: 'mail',
      network: true,
      operationId: 'postDmarcReports',
      summary: 'DMARC aggregate reports summarized: who sends as the domain, and what fails',
      description:
        `Takes at most ${MAX_FILES_PER_REQUEST} report files, each base64 in \`content_base64\` (XML, gzip, zip, or a message or mbox with reports attached; the kind is told by the first bytes), ` +
        `within the server's body limit; the PTR names of the first ${MAX_REVERSE_LOOKUPS_PER_REQUEST} distinct sources are looked up, the others are \`skipped\`. ` +
        'Answers the summary of `netintel dmarc-report` (each report counted once) and each report record of the files as a row (`results`, in order, a report sent twice included), a file that cannot be read as an error item naming it. ' +
        'Each file counts against the limits.',
      body: {
        type: 'object',
        required: ['files'],
        additionalProperties: false,
        properties: {
          files: {
            type: 'array',
            minItems: 1,
            maxItems: MAX_FILES_PER_REQUEST,
            items: {
              type: 'object',
              required: ['name', 'content_base64'],
              additionalProperties: false,
              properties: { name: { type: 'string', minLength: 1, maxLength: 1000 }, content_base64: { type: 'string', contentEncoding: 'base64' } },
            },
          },
          since: { type: 'string', minLength: 10, maxLength: 40, description: 'Only reports whose interval ends on or after this date (YYYY-MM-DD or ISO 8601).' },
          domain: { type: 'string', minLength: 1, maxLength: 253, description: 'Only reports about this domain\'s policy.' },
          reverse_dns: { type: 'boolean', description: 'Look up the PTR name of each source (default true).' },
        },
      },
      responseSchema: { $ref: '#/components/schemas/DmarcReportAnswer' },
      responseDescription: 'The summary, and the rows of every file in order.',
      examples: [{ body: { files: [{ name: 'report.xml', content_base64: 'PGZlZWRiYWNrPi4uLjwvZmVlZGJhY2s+' }], domain: 'example.com' } }],
      items: (request: FastifyRequest) => (request.body as DmarcReportBody).files.length,
      handler: async (request: FastifyRequest, _reply, api) => {
        const { dmarcAnswer } = await import('./dmarc-report-answer.js');
        const body = request.body as DmarcReportBody;
        return dmarcAnswer(api.ctx, body.files, {
          ...(body.since === undefined ? {} : { since: sinceDate(body.since, 'since') }),
          ...(body.domain === undefined ? {} : { domain: domainFlag(body.domain, 'domain') }),
          reverseDns: body.reverse_dns !== false,
          maxReverseLookups: MAX_REVERSE_LOOKUPS_PER_REQUEST,
          inflatedBytesInAll: inflatedBytesOfRequest(body.files),
        });
      },
    }),
  },
});

/** The outcomes of each file in order, the rows of reports seen before left out, every file and row counted. */
async function* countedRows(files: readonly string[], lookup: Lookup<DmarcReportRow>, tally: import('../engine/dmarc/report-tally.js').DmarcTally): AsyncGenerator<Array<Outcome<DmarcReportRow>>> {
  for (const file of files) {
    yield tally.read(fileLabel(file), await lookup(file));
  }
}

/** 0; 3 when no report was read; 7 when some files could not be read; the failure's own code when no file could. */
function summaryExit(summary: DmarcReportSummary): number {
  if (summary.files_failed === 0) return summary.reports === 0 ? ERROR_CODES.not_found.exit : 0;
  if (summary.files_failed < summary.files) return ERROR_CODES.partial.exit;
  const code = summary.errors[0]!.code as keyof typeof ERROR_CODES;
  return (ERROR_CODES[code] ?? ERROR_CODES.invalid_input).exit;
}

/** One file sent to a server: its rows as the server read them. */
async function remoteRows(remote: RemoteCall, file: string, settings: DmarcReportSettings): Promise<Outcomes<DmarcReportRow>> {
  const bytes = await settings.read(file);
  const { since, domain, reverseDns } = settings.filters;
  const [{ containerKind }, { gzipSync }] = await Promise.all([import('../engine/dmarc/report-containers.js'), import('node:zlib')]);
  // A report in plain XML travels gzipped, as reporters send it: the server reads gzip the same, and ten
  // times the XML fits in its body limit. Archives and messages go as they are.
  const sent = containerKind(bytes) === 'xml' ? gzipSync(bytes) : bytes;
  const body: DmarcReportBody = {
    files: [{ name: fileLabel(file), content_base64: sent.toString('base64') }],
    ...(since === undefined ? {} : { since: since.toISOString() }),
    ...(domain === undefined ? {} : { domain }),
    reverse_dns: reverseDns !== false,
  };
  let response;
  try {
    response = await remote.post('/api/dmarc-reports', body, remote.answerOf('POST', '/api/dmarc-reports', 'dmarc report answer'));
  } catch (error) {
    // A refusal of the request (a file over the server's body limit) is this file's failure: it names the file.
    const failure = toNetintelError(error);
    throw new NetintelError(failure.code, `${fileLabel(file)}: ${failure.message}`, { details: failure.details, cause: error });
  }
  const { results } = response.body as { results: Array<{ query: string; record?: DmarcReportRow; error?: { code: string; message: string; details?: Record<string, unknown> } }> };
  return results.map((item): Outcome<DmarcReportRow> => (item.record !== undefined ? { ok: true, query: item.query, value: item.record } : { ok: false, query: item.query, error: remote.itemError(item.error!) }));
}

function presentRowColumn(row: DmarcReportRow, column: string): unknown {
  if (column === 'dkim_results') return row.dkim_results.map((each) => `${each.domain}${each.selector === null ? '' : `/${each.selector}`}:${each.result}${each.aligned ? ':aligned' : ''}`).join(' ');
  if (column === 'spf_results') return row.spf_results.map((each) => `${each.domain}:${each.result}${each.aligned ? ':aligned' : ''}`).join(' ');
  if (column === 'overrides') return row.overrides.join(' ');
  return column.split('.').reduce<unknown>((value, key) => (value as Record<string, unknown> | null)?.[key], row);
}

function fileLabel(file: string): string {
  return file === '-' ? 'stdin' : file;
}

function sinceDate(text: string, name = '--since'): Date {
  const date = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(text) ? new Date(text.length === 10 ? `${text}T00:00:00Z` : text) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime())) throw new NetintelError('usage', `${name} takes a date, YYYY-MM-DD or ISO 8601 (not ${JSON.stringify(text)})`);
  return date;
}

/** A domain filter in the form reports name the domain: ASCII (internationalised names in punycode), lower case, no final dot. */
function domainFlag(text: string, name = '--domain'): string {
  try {
    return normaliseMailDomain(text.trim()).ascii;
  } catch (error) {
    throw new NetintelError('usage', `${name} takes a mail domain: ${toNetintelError(error).message}`, { cause: error });
  }
}
