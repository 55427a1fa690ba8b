import type { DmarcReportRow } from '../../engine/dmarc/report-rows.js';
import { percent, type DmarcReportSummary, type DmarcSourceSummary } from '../../engine/dmarc/report-tally.js';
import { factList, findingsBlock, headline, heading, safe, sections } from './blocks.js';
import { fittedTable, type TableColumn } from './fitted-table.js';
import type { ViewContext } from './style.js';
import { grouped, plural, type HumanView } from './view.js';
import { wrapHanging, wrapText } from './wrap.js';

/** Sources shown in each table before "and N more" (json and csv keep them all). */
const SHOWN_SOURCES = 15;

/** Who a source is: the mail provider, else the network's organisation, and its PTR name. */
function senderText(source: DmarcSourceSummary['source']): string {
  const who = source.known_sender ?? source.organization ?? (source.asn === null ? '' : `AS${source.asn}`);
  const place = source.country_code === null ? '' : ` (${source.country_code})`;
  const ptr = source.ptr ?? (source.ptr_status === 'unknown' ? 'PTR unknown' : source.ptr_status === 'skipped' ? '' : 'no PTR');
  return [`${who}${place}`.trim(), ptr].filter((part) => part !== '').join('\n');
}

/** A section's title, wrapped to the width. */
function titled(ctx: ViewContext, title: string): string {
  return wrapText(title, ctx.width).map((line) => heading(ctx, line)).join('');
}

function shareText(part: number, whole: number): string {
  return whole === 0 ? '' : percent(part / whole);
}

/** A table of sources: failing ones with their failing count, passing ones with their volume. */
function sourceTable(ctx: ViewContext, title: string, sources: readonly DmarcSourceSummary[], total: number, failing: boolean): string {
  if (sources.length === 0) return '';
  const shown = sources.slice(0, SHOWN_SOURCES);
  const columns: TableColumn[] = [
    { header: '#', priority: 0, align: 'right' },
    { header: 'source', priority: 0, wrap: true },
    { header: failing ? 'failing' : 'messages', priority: 0, align: 'right' },
    { header: '%', priority: 1, align: 'right' },
    { header: 'sender / PTR', priority: 1, wrap: true },
    { header: failing ? 'disposition' : 'from', priority: 2, wrap: true },
  ];
  const rows = shown.map((source, index) => ({
    cells: [
      String(index + 1),
      source.source_ip,
      grouped(failing ? source.failing_messages : source.messages),
      shareText(failing ? source.failing_messages : source.messages, total),
      senderText(source.source),
      failing ? dispositionText(source) : source.header_from.join(' '),
    ],
  }));
  const more = sources.length > shown.length ? `  and ${grouped(sources.length - shown.length)} more (-f json lists them all)\n` : '';
  const drawn = fittedTable(ctx, columns, rows) ?? rows.map((row) => `${wrapHanging(safe(row.cells.slice(0, 4).join('  ')), ctx.width, '  ', '    ').join('\n')}\n`).join('');
  return titled(ctx, title) + drawn + more;
}

/** Where the failing messages went: rejected, quarantined, delivered (a policy applies to failing messages alone), and the overrides receivers gave. */
function dispositionText(source: DmarcSourceSummary): string {
  const delivered = Math.max(0, source.failing_messages - source.rejected - source.quarantined);
  const parts = [source.rejected > 0 ? `${grouped(source.rejected)} rejected` : '', source.quarantined > 0 ? `${grouped(source.quarantined)} quarantined` : '', delivered > 0 ? `${grouped(delivered)} delivered` : ''];
  const overrides = source.overrides.map((override) => `${override.type} ${grouped(override.messages)}`);
  return [...parts.filter((part) => part !== ''), ...overrides].join(', ');
}

function reportersTable(ctx: ViewContext, summary: DmarcReportSummary): string {
  if (summary.reporters.length === 0) return '';
  const columns: TableColumn[] = [
    { header: 'reporter', priority: 0, wrap: true },
    { header: 'reports', priority: 0, align: 'right' },
    { header: 'messages', priority: 0, align: 'right' },
    { header: 'interval', priority: 1 },
  ];
  const rows = summary.reporters.map((reporter) => ({ cells: [reporter.org_name, grouped(reporter.reports), grouped(reporter.messages), `${reporter.begin.slice(0, 10)} to ${reporter.end.slice(0, 10)}`] }));
  return titled(ctx, 'Reporters') + (fittedTable(ctx, columns, rows) ?? rows.map((row) => `  ${safe(row.cells.join('  '))}\n`).join(''));
}

function errorLines(ctx: ViewContext, summary: DmarcReportSummary): string {
  if (summary.errors.length === 0) return '';
  return titled(ctx, 'Files not read') + summary.errors.map((error) => `${wrapHanging(safe(error.message), ctx.width, '  - ', '    ').join('\n')}\n`).join('');
}

function summaryBlock(ctx: ViewContext, value: unknown): string {
  const summary = value as DmarcReportSummary;
  const [subject, ...rest] = summary.headline.split('; ');
  const reports = `${grouped(summary.reports)} from ${plural(summary.reporters.length, 'reporter')}${summary.duplicate_reports > 0 ? ` (${plural(summary.duplicate_reports, 'duplicate')} not counted)` : ''}`;
  return sections(
    headline(ctx, subject!, rest.join('; '), summary.failing_sources > 0 ? 'warn' : 'plain', '; '),
    factList(ctx, [
      ['reports', reports],
      ['domains', summary.domains.join(' ')],
      ['interval', summary.begin === null ? null : `${summary.begin} to ${summary.end}`],
      ['files', summary.files_failed > 0 ? `${grouped(summary.files)} (${grouped(summary.files_failed)} not read)` : grouped(summary.files)],
    ]),
    sourceTable(ctx, 'Failing sources (most failing messages first)', summary.failing, summary.messages, true),
    sourceTable(ctx, 'Passing sources', summary.passing, summary.messages, false),
    reportersTable(ctx, summary),
    errorLines(ctx, summary),
    findingsBlock(ctx, summary.findings),
  );
}

/** `netintel dmarc-report`: the summary of the reports (the format `table`). */
export const DMARC_SUMMARY_VIEW: HumanView = {
  block: summaryBlock,
  table: {
    columns: [{ header: 'summary', priority: 0, wrap: true }],
    cells: (value) => [(value as DmarcReportSummary).headline],
    key: (value) => (value as DmarcReportSummary).headline,
  },
};

/** Rows of reports drawn as a table (`--fields` with `-f table` over rows). */
export const DMARC_ROW_VIEW: HumanView = {
  block: (ctx, value) => {
    const row = value as DmarcReportRow;
    return sections(
      headline(ctx, row.source_ip, `${grouped(row.count)} ${row.dmarc === 'pass' ? 'pass' : 'fail'} DMARC`, row.dmarc === 'pass' ? 'plain' : 'warn'),
      factList(ctx, [
        ['report', `${row.org_name} ${row.report_id}`],
        ['domain', row.domain],
        ['disposition', row.disposition],
        ['dkim / spf', `${row.dkim} / ${row.spf}`],
        ['from', row.header_from],
        ['sender', senderText(row.source).replace('\n', ', ')],
      ]),
    );
  },
  table: {
    columns: [
      { header: 'source', priority: 0 },
      { header: 'count', priority: 0, align: 'right' },
      { header: 'dmarc', priority: 0 },
      { header: 'disposition', priority: 1 },
      { header: 'reporter', priority: 2, wrap: true },
    ],
    cells: (value) => {
      const row = value as DmarcReportRow;
      return [row.source_ip, grouped(row.count), row.dmarc, row.disposition, row.org_name];
    },
    key: (value) => (value as DmarcReportRow).source_ip,
  },
};
