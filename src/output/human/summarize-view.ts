import type { RankedRow, Share, SummaryReport } from '../../engine/summarize/summary-report.js';
import { factList, headline, heading, safe, sections, type Fact } from './blocks.js';
import { displayWidth } from './display-width.js';
import { fittedTable, type TableColumn } from './fitted-table.js';
import { viewContext, type ViewContext } from './style.js';
import { grouped } from './view.js';
import { wrapHanging, wrapText } from './wrap.js';

/** The partial blocks of a bar's last cell, one eighth to seven eighths wide. */
const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
const FULL = '█';
/** A bar narrower than this says nothing: the column is left out. */
const MIN_BAR = 4;
/** Bars wider than this only stretch the table on a wide terminal. */
const MAX_BAR = 50;
/** The bar keeps at least this many columns, names wrapping beside it, before it is given up. */
const MIN_SHOWN_BAR = 12;
/** Borders and padding of the five columns (fitted-table.ts). */
const CHROME = 5 * 3 + 1;

/** `count/total` of `width` columns in block characters, to an eighth of a column. */
export function bar(count: number, total: number, width: number): string {
  if (total <= 0 || count <= 0 || width <= 0) return '';
  const eighths = Math.round((Math.min(count, total) / total) * width * 8);
  return FULL.repeat(Math.floor(eighths / 8)) + EIGHTHS[eighths % 8]!;
}

/** `12.5%`, one decimal. */
function percentText(percent: number): string {
  return `${percent.toFixed(1)}%`;
}

interface ViewRowText {
  rank: string;
  name: string;
  count: number;
  percent: number;
}

/** A table to draw: its title, the header of its names' column, its rows. */
interface TableText {
  title: string;
  nameHeader: string;
  rows: readonly ViewRowText[];
}

/** Widest rank, count and percent of a report's tables: the numbers' columns, the same in every table. */
function numberWidths(tables: readonly TableText[]): { rank: number; count: number; percent: number; name: number } {
  const rows = tables.flatMap((table) => table.rows);
  return {
    rank: Math.max(1, ...rows.map((row) => row.rank.length)),
    count: Math.max(displayWidth('count'), ...rows.map((row) => grouped(row.count).length)),
    percent: Math.max(...rows.map((row) => percentText(row.percent).length)),
    name: Math.max(...tables.map((table) => displayWidth(table.nameHeader)), ...rows.map((row) => displayWidth(row.name))),
  };
}

/**
 * The width of every bar column of the report, so that a bar is the same
 * length for the same share in every table: what the width leaves beside
 * the numbers and the longest name, but at least MIN_SHOWN_BAR (a long
 * name wraps instead) when the width has room for that at all.
 */
function barWidthOf(ctx: ViewContext, widths: ReturnType<typeof numberWidths>): number {
  const room = ctx.width - CHROME - widths.rank - widths.count - widths.percent;
  const left = Math.min(MAX_BAR, room - widths.name);
  if (left >= MIN_SHOWN_BAR) return left;
  // The names' column wraps down to 12 columns (fitted-table.ts) before the bar goes.
  return room - 12 >= MIN_SHOWN_BAR ? MIN_SHOWN_BAR : 0;
}

/** A ranked table with its bars, fitted to the width. */
function rankedTable(ctx: ViewContext, table: TableText, total: number, widths: ReturnType<typeof numberWidths>, barWidth: number): string {
  if (table.rows.length === 0) return '';
  const withBar = barWidth >= MIN_BAR;
  const columns: TableColumn[] = [
    { header: '#', priority: 0, align: 'right' },
    { header: table.nameHeader, priority: 0, wrap: true },
    { header: 'count', priority: 0, align: 'right' },
    { header: '%', priority: 1, align: 'right' },
    { header: 'share', priority: 2 },
  ];
  const cells = table.rows.map((row) => [
    row.rank,
    row.name,
    grouped(row.count),
    percentText(row.percent),
    withBar ? bar(row.count, total, barWidth).padEnd(barWidth) : '',
  ]);
  const drawn = fittedTable(ctx, withBar ? columns : columns.slice(0, 4), cells.map((row) => ({ cells: row })));
  return wrapText(table.title, ctx.width).map((line) => heading(ctx, line)).join('') + (drawn ?? narrowRows(ctx, cells));
}

/** A table's rows as lines of text, wrapped, when even its narrowest form does not fit the width. */
function narrowRows(ctx: ViewContext, cells: ReadonlyArray<readonly string[]>): string {
  return cells.map((row) => `${wrapHanging(safe(row.slice(0, 4).join('  ').trim()), ctx.width, '', '    ').join('\n')}\n`).join('');
}

/** The rows of a table as the view names them: the ranked ones, then `other` and `no data` when they count. */
function tableRows(rows: readonly RankedRow[], name: (row: RankedRow) => string, other: Share | null, distinct: number, noData: Share): ViewRowText[] {
  const out: ViewRowText[] = rows.map((row) => ({ rank: String(row.rank), name: name(row), count: row.count, percent: row.percent }));
  if (other !== null && other.count > 0) out.push({ rank: '', name: `other (${grouped(distinct - rows.length)} more)`, ...other });
  if (noData.count > 0) out.push({ rank: '', name: 'no data', ...noData });
  return out;
}

/** The headline: how many addresses, from how many lines, how many distinct and from how many countries. */
function verdict(report: SummaryReport): { subject: string; verdict: string } {
  const { totals } = report;
  const lines = `${grouped(totals.lines)} ${totals.lines === 1 ? 'line' : 'lines'}`;
  if (totals.addresses === 0) return { subject: 'no addresses', verdict: `in ${lines}` };
  const unique = `${grouped(totals.unique)}${totals.unique_capped ? '+' : ''} unique`;
  const countries = report.countries.distinct;
  return {
    subject: `${grouped(totals.addresses)} ${totals.addresses === 1 ? 'address' : 'addresses'}`,
    verdict: `from ${lines} · ${unique} · ${grouped(countries)} ${countries === 1 ? 'country' : 'countries'}`,
  };
}

function totalsFacts(report: SummaryReport): Fact[] {
  const { totals } = report;
  const share = (count: number) => (totals.addresses === 0 ? grouped(count) : `${grouped(count)} (${percentText((count / totals.addresses) * 100)})`);
  return [
    ['lines', grouped(totals.lines)],
    ['addresses', `${grouped(totals.addresses)} (IPv4 ${grouped(totals.ipv4)} · IPv6 ${grouped(totals.ipv6)}), counted per occurrence`],
    ['unique', totals.unique_capped ? `${grouped(totals.unique)}+ (counting stops at ${grouped(totals.unique)})` : grouped(totals.unique)],
    ['reserved', share(totals.reserved)],
    ['invalid lines', grouped(totals.invalid_lines)],
    ['lookup failures', share(totals.lookup_failures)],
  ];
}

/** The report for a person: the verdict, the totals, then each ranked table with bars fitted to the width. */
export function summarizeView(report: SummaryReport, options: { width: number; color: boolean }): string {
  const ctx = viewContext({ ...options, all: false });
  const { subject, verdict: text } = verdict(report);
  const total = report.totals.addresses;
  const parts = [headline(ctx, subject, text, 'plain', ' '), factList(ctx, totalsFacts(report))];
  if (total > 0) {
    const { countries, asns, cities, flags, threat_levels: threat } = report;
    const tables: TableText[] = [
      { title: 'Top countries', nameHeader: 'country', rows: tableRows(countries.rows, (row) => `${row.name} (${row.key})`, countries.other, countries.distinct, countries.no_data) },
      { title: 'Top networks', nameHeader: 'AS', rows: tableRows(asns.rows, (row) => (row.name === '' ? row.key : `${row.key} ${row.name}`), asns.other, asns.distinct, asns.no_data) },
      { title: 'Top cities', nameHeader: 'city', rows: tableRows(cities.rows, (row) => row.name, cities.other, cities.distinct, cities.no_data) },
      // Flags overlap: they have no ranks, and their rows need not add up.
      { title: 'Security flags (an address may have several)', nameHeader: 'flag', rows: tableRows(flags.rows, (row) => row.name, null, 0, flags.no_data).map((row) => ({ ...row, rank: '' })) },
      { title: 'Threat levels', nameHeader: 'level', rows: tableRows(threat.rows, (row) => row.name, threat.other, threat.distinct, threat.no_data) },
    ];
    const widths = numberWidths(tables);
    const barWidth = barWidthOf(ctx, widths);
    parts.push(...tables.map((table) => rankedTable(ctx, table, total, widths, barWidth)));
  }
  return sections(...parts.filter((part) => part !== ''));
}
