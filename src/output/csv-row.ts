import { stringify } from 'csv-stringify/sync';
import { visibleEscape } from './terminal-text.js';

/**
 * CSV encoding (RFC 4180) with formula-injection escaping and one physical
 * line per row: a line break inside a text cell (a multi-line presentation,
 * a TXT record with one) is folded to ` | ` before encoding, because
 * line-oriented tools (grep, wc -l, split, awk) read a quoted line break as
 * the end of a row. Control characters other than TAB and line breaks (C0,
 * DEL, C1) and bidirectional controls are written as visible escapes
 * (`\x1b`, `\u202e`), as the value format writes them, so that a CSV shown
 * on a terminal cannot drive it (json keeps the exact text). Then a text cell that
 * starts with = + - @ TAB or CR (or the full-width forms of = + - @) gets a
 * leading apostrophe so that spreadsheets show it instead of evaluating it
 * (numbers keep their minus sign). csv-stringify, with the options below, is
 * the reference; text, number and boolean cells are encoded here with the
 * same result, because the library, built for whole documents, costs more
 * per cell than a whole DNS lookup in a bulk run. Array and object cells
 * (ASN prefix lists) go through the library. Tests check both give the same
 * bytes.
 */
const STRINGIFY_OPTIONS = {
  escape_formulas: true,
  eof: true,
  cast: { boolean: (value: boolean) => String(value) },
} as const;

/** Characters that make a text cell need quoting: the delimiter, the quote, line breaks (RFC 4180 §2.6). */
const NEEDS_QUOTES = /[",\r\n]/;
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** The text with its control characters (not TAB or line breaks) as visible escapes. */
export function escapeCsvControls(text: string): string {
  CONTROLS.lastIndex = 0;
  if (!CONTROLS.test(text)) return text;
  CONTROLS.lastIndex = 0;
  return text.replace(CONTROLS, visibleEscape);
}
const QUOTES = /"/g;

/** A cell; arrays and objects (ASN prefix lists) are written as JSON text. */
export type CsvCell = string | number | boolean | null | undefined | readonly unknown[] | { readonly [key: string]: unknown };

/** Encodes one row, with its line ending. */
export function csvRow(cells: readonly CsvCell[]): string {
  let line = '';
  for (let i = 0; i < cells.length; i++) {
    const text = csvCell(cells[i]);
    line += i === 0 ? text : `,${text}`;
  }
  return `${line}\n`;
}

/** The reference encoding through csv-stringify (used by tests as the oracle), line breaks folded first. */
export function csvRowViaLibrary(cells: readonly CsvCell[]): string {
  return stringify([cells.map((cell) => (typeof cell === 'string' ? foldLineBreaks(escapeCsvControls(cell)) : cell)) as CsvCell[]], STRINGIFY_OPTIONS);
}

const LINE_BREAK = /[\r\n]/;

/**
 * A text on one line: each line break (CRLF, CR or LF) with the blanks
 * around it becomes ` | `; breaks at either end are dropped.
 */
export function foldLineBreaks(text: string): string {
  return text.replace(/^[\s]*[\r\n][\s]*|[\s]*[\r\n][\s]*$/g, '').replace(/[ \t]*(?:\r\n|\r|\n)[ \t]*/g, ' | ');
}

/**
 * Encodes one cell as it would appear in `csvRow`'s output, without
 * separator or line ending: rows built from such cells joined with commas
 * are byte-identical to `csvRow` of the same cells.
 */
export function csvCell(cell: CsvCell): string {
  if (cell === null || cell === undefined) return '';
  if (typeof cell === 'string') return csvText(cell);
  if (typeof cell === 'number' || typeof cell === 'boolean') return String(cell);
  return stringify([[cell as CsvCell[]]], STRINGIFY_OPTIONS).slice(0, -1);
}

/** A text cell: controls escaped, line breaks folded, the formula guard, then quoting with inner quotes doubled. */
function csvText(raw: string): string {
  if (raw.length === 0) return raw;
  const text = escapeCsvControls(raw);
  const guarded = startsLikeFormula(text.charCodeAt(0)) ? `'${text}` : text;
  if (!NEEDS_QUOTES.test(guarded)) return guarded;
  // Checked only here: a text that needs no quotes has no line break.
  if (LINE_BREAK.test(text)) return csvText(foldLineBreaks(text));
  return `"${guarded.replace(QUOTES, '""')}"`;
}

/** The first characters csv-stringify's escape_formulas guards (OWASP "CSV Injection"). */
export function startsLikeFormula(code: number): boolean {
  switch (code) {
    case 0x3d: // =
    case 0x2b: // +
    case 0x2d: // -
    case 0x40: // @
    case 0x09: // TAB
    case 0x0d: // CR
    case 0xff1d: // full-width =
    case 0xff0b: // full-width +
    case 0xff0d: // full-width -
    case 0xff20: // full-width @
      return true;
    default:
      return false;
  }
}
