import { stringify } from 'csv-stringify/sync';

/**
 * CSV encoding (RFC 4180) with formula-injection escaping: a text cell that
 * starts with = + - @ TAB or CR gets a leading apostrophe so that spreadsheets
 * show it instead of evaluating it (numbers keep their minus sign).
 */
const STRINGIFY_OPTIONS = {
  escape_formulas: true,
  eof: true,
  cast: { boolean: (value: boolean) => String(value) },
} as const;

/** Characters that make a text cell need csv-stringify's quoting or escaping. */
const NEEDS_LIBRARY = /^[=+\-@\t\r]|[",\r\n]/;
/** A first character that csv-stringify's formula escaping prefixes with an apostrophe. */
const FORMULA_START = /^[=+\-@\t\r]/;

/** A cell; arrays and objects (ASN prefix lists) are written as JSON text. */
export type CsvCell = string | number | boolean | null | undefined | readonly unknown[] | { readonly [key: string]: unknown };

/**
 * Encodes one row, with its line ending. Rows of plain cells that need no
 * quoting or escaping (most rows of a bulk run) are joined directly, because
 * csv-stringify costs about 4 µs a row, more than a whole lookup; every other
 * row (a cell to quote or escape, an array or object cell) goes through
 * csv-stringify. A test checks both paths give the same bytes.
 */
export function csvRow(cells: readonly CsvCell[]): string {
  let line = '';
  for (let i = 0; i < cells.length; i++) {
    const cell = cells[i];
    let text: string;
    if (cell === null || cell === undefined) text = '';
    else if (typeof cell === 'string') {
      if (NEEDS_LIBRARY.test(cell)) return stringify([cells as CsvCell[]], STRINGIFY_OPTIONS);
      text = cell;
    } else if (typeof cell === 'number' || typeof cell === 'boolean') text = String(cell);
    else return stringify([cells as CsvCell[]], STRINGIFY_OPTIONS);
    line += i === 0 ? text : `,${text}`;
  }
  return `${line}\n`;
}

/** The reference encoding through csv-stringify alone (used by tests as the oracle). */
export function csvRowViaLibrary(cells: readonly CsvCell[]): string {
  return stringify([cells as CsvCell[]], STRINGIFY_OPTIONS);
}

/**
 * Encodes one cell as it would appear in `csvRow`'s output, without
 * separator or line ending: rows built from such cells joined with commas
 * are byte-identical to `csvRow` of the same cells.
 */
export function csvCell(cell: CsvCell): string {
  if (cell === null || cell === undefined) return '';
  if (typeof cell === 'string') {
    if (!NEEDS_LIBRARY.test(cell)) return cell;
    // A comma, quote or line break and no formula to escape (organisation
    // names such as "Example Co.,Ltd."): RFC 4180 quoting, as csv-stringify
    // writes it, without the 4 us its per-call stream setup costs.
    if (!FORMULA_START.test(cell)) return `"${cell.replace(/"/g, '""')}"`;
    return stringify([[cell]], STRINGIFY_OPTIONS).slice(0, -1);
  }
  if (typeof cell === 'number' || typeof cell === 'boolean') return String(cell);
  return stringify([[cell as CsvCell[]]], STRINGIFY_OPTIONS).slice(0, -1);
}
