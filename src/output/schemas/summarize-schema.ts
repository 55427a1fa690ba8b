import type { RankedRow, Share, SummaryReport } from '../../engine/summarize/summary-report.js';
import { csvRow } from '../csv-row.js';
import type { RecordSchema } from '../record-schema.js';
import { DBIP_CREDIT } from './ip-schema.js';
import { jsonText } from '../json-text.js';

/**
 * `netintel summarize` as data. json and xml: the report as one document
 * (summary-report.ts). csv and ndjson: the long form, one row per table
 * row, `section,rank,key,name,count,percent`; the totals are section
 * `total`, each table's `other` and `no data` rows have no rank.
 */
export const SUMMARY_COLUMNS = ['section', 'rank', 'key', 'name', 'count', 'percent'] as const;

/** A row of the long form. */
export interface SummaryRow {
  section: string;
  rank: number | null;
  key: string;
  name: string;
  count: number;
  percent: number | null;
}

/** The schema of the report: its kind (xml), the long form's columns, the data credit under the human view. */
export const SUMMARIZE_SCHEMA: RecordSchema = {
  kind: 'summarize',
  columns: SUMMARY_COLUMNS,
  groups: {},
  identity: [],
  tableColumns: SUMMARY_COLUMNS,
  credit: DBIP_CREDIT,
};

/** The key of a table's row for the addresses beyond the top rows. */
export const OTHER_KEY = '(other)';
/** The key of a table's row for the addresses it has no key for. */
export const NO_DATA_KEY = '(no data)';

/** The report's rows in the long form, totals first, then each table in the order the human view shows them. */
export function summaryRows(report: SummaryReport): SummaryRow[] {
  const { totals } = report;
  const total = (key: string, name: string, count: number, share: Share | null): SummaryRow => ({
    section: 'total',
    rank: null,
    key,
    name,
    count,
    percent: share?.percent ?? null,
  });
  const of = (count: number) => ({ count, percent: totals.addresses === 0 ? 0 : Math.round((count / totals.addresses) * 10000) / 100 });
  const rows: SummaryRow[] = [
    total('lines', 'lines read', totals.lines, null),
    total('addresses', 'addresses found', totals.addresses, of(totals.addresses)),
    total('ipv4', 'IPv4 addresses', totals.ipv4, of(totals.ipv4)),
    total('ipv6', 'IPv6 addresses', totals.ipv6, of(totals.ipv6)),
    total('unique', totals.unique_capped ? 'unique addresses (at least; counting stopped at this many)' : 'unique addresses', totals.unique, of(totals.unique)),
    total('reserved', 'reserved addresses', totals.reserved, of(totals.reserved)),
    total('invalid_lines', 'lines without an address', totals.invalid_lines, null),
    total('lookup_failures', 'failed lookups', totals.lookup_failures, of(totals.lookup_failures)),
  ];
  const table = (section: string, ranked: readonly RankedRow[], other: Share | null, noData: Share) => {
    for (const row of ranked) rows.push({ section, ...row });
    if (other !== null && other.count > 0) rows.push({ section, rank: null, key: OTHER_KEY, name: 'other', ...other });
    if (noData.count > 0) rows.push({ section, rank: null, key: NO_DATA_KEY, name: 'no data', ...noData });
  };
  table('countries', report.countries.rows, report.countries.other, report.countries.no_data);
  table('asns', report.asns.rows, report.asns.other, report.asns.no_data);
  table('cities', report.cities.rows, report.cities.other, report.cities.no_data);
  table('flags', report.flags.rows, null, report.flags.no_data);
  table('threat_levels', report.threat_levels.rows, report.threat_levels.other, report.threat_levels.no_data);
  return rows;
}

/** The long form as CSV, through the project's CSV encoder (formula-looking cells guarded as everywhere). */
export function summaryCsv(report: SummaryReport, header: boolean): string {
  let text = header ? csvRow(SUMMARY_COLUMNS) : '';
  for (const row of summaryRows(report)) text += csvRow(SUMMARY_COLUMNS.map((column) => row[column]));
  return text;
}

/** The long form as NDJSON: one object per row, the CSV's columns as keys. */
export function summaryNdjson(report: SummaryReport): string {
  return summaryRows(report)
    .map((row) => `${jsonText(row)}\n`)
    .join('');
}

/** The report as one JSON document. */
export function summaryJson(report: SummaryReport): string {
  return `${jsonText(report, 2)}\n`;
}
