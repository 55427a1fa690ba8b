import Table from 'cli-table3';
import { Chalk } from 'chalk';
import { escapeTerminalText } from './terminal-text.js';

export interface TableStyle {
  color: boolean;
  readColumn: (record: unknown, column: string) => unknown;
}

/**
 * Items of a list shown in a table cell. An AS announces up to thousands of
 * prefixes: written whole, the cell is one line of tens of kilobytes that no
 * terminal shows, and cli-table3 takes time growing with the cube of a
 * cell's line count when it is broken into lines. The table shows the first
 * items and says how many there are; json, ndjson, csv and xml keep the list.
 */
export const TABLE_LIST_ITEMS = 5;

/**
 * A cell's text, with control characters from the data written visibly
 * (terminal-text.ts): the table is the view a terminal shows. A line break
 * stays, as the cell's layout.
 */
function cellText(value: unknown): string {
  return escapeTerminalText(rawCellText(value), { keepNewlines: true });
}

function rawCellText(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (Array.isArray(value) && value.length > TABLE_LIST_ITEMS) {
    const shown = JSON.stringify(value.slice(0, TABLE_LIST_ITEMS)).slice(0, -1);
    return `${shown},…] (${TABLE_LIST_ITEMS} of ${value.length} shown; -f json or -f csv for all)`;
  }
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function shortHeaders(columns: readonly string[]): string[] {
  const last = columns.map((column) => column.split('.').pop()!);
  return columns.map((column, i) => (last.filter((name) => name === last[i]).length > 1 ? column : last[i]!));
}

const COMPACT_ROWS = { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' };

/** One record as a two-column field/value table (a single lookup). */
export function verticalTable(record: unknown, columns: readonly string[], style: TableStyle): string {
  const chalk = new Chalk({ level: style.color ? 1 : 0 });
  // No rule between fields: a record fits a terminal screen (an IP record is
  // 25 lines instead of 47); a value of several lines still reads as one,
  // since its field name stands on its first line only.
  const table = new Table({ style: { head: [], border: [] }, chars: COMPACT_ROWS });
  for (const column of columns) {
    const value = style.readColumn(record, column);
    const text = cellText(value);
    table.push({ [chalk.cyan(escapeTerminalText(column))]: value === null || value === undefined ? chalk.dim(text) : text });
  }
  return `${table.toString()}\n`;
}

export interface TableRow {
  query: string;
  record: unknown;
  error: { code: string; message: string } | null;
}

/** Many records as one row each, with the schema's compact columns. */
export function horizontalTable(rows: readonly TableRow[], columns: readonly string[], style: TableStyle): string {
  const chalk = new Chalk({ level: style.color ? 1 : 0 });
  const head = ['query', ...shortHeaders(columns)].map((name) => chalk.bold(escapeTerminalText(name)));
  const cells = rows.map((row) =>
    row.error
      ? [escapeTerminalText(row.query), { colSpan: columns.length, content: chalk.red(escapeTerminalText(`${row.error.code}: ${row.error.message}`)) }]
      : [escapeTerminalText(row.query), ...columns.map((column) => cellText(style.readColumn(row.record, column)))],
  );
  // Rows of one line each read best without a rule between them (like psql);
  // rows of several lines keep the rules that tell where each ends, and so
  // do tables with an error row (its spanned cell is an object here, and
  // cli-table3 draws spanned cells' joints on the row rules).
  const oneLineRows = cells.every((row) => row.every((cell) => typeof cell === 'string' && !cell.includes('\n')));
  const table = new Table({ head, style: { head: [], border: [] }, ...(oneLineRows ? { chars: COMPACT_ROWS } : {}) });
  table.push(...cells);
  const text = table.toString();
  if (!oneLineRows || rows.length === 0) return `${text}\n`;
  // Without row rules cli-table3 draws none under the header either: put it back.
  const lines = text.split('\n');
  const rule = lines[0]!.replace('┌', '├').replaceAll('┬', '┼').replace('┐', '┤');
  lines.splice(2, 0, rule);
  return `${lines.join('\n')}\n`;
}
