import type { HumanView } from './human/view.js';
import { distance } from 'fastest-levenshtein';
import { NetintelError } from '../errors.js';
import type { CsvRecordWriter } from './csv-encoder.js';

/**
 * The column schema of one record kind. It drives CSV columns, the table
 * view and `--fields` selection, so the columns stay the same whatever the
 * first record holds.
 */
export interface RecordSchema {
  kind: string;
  /**
   * The human view (format `table`) of a record no operation declares
   * (the service records: quota, API keys, data sources), loaded when a
   * table is drawn; an operation names its record's view in its descriptor.
   */
  view?: () => Promise<HumanView>;
  /** Every leaf of the record as a dot path, in output order. */
  columns: readonly string[];
  /** Labels of columns in human views, where the words of the path (field-label.ts) do not say it well. */
  labels?: Readonly<Record<string, string>>;
  /** Named groups `--fields` accepts (e.g. location, security). */
  groups: Readonly<Record<string, readonly string[]>>;
  /** Columns always kept, whatever `--fields` selects (the record's identity). */
  identity: readonly string[];
  /** What `-f value` prints without `--fields` (default: its identity): the one fact a script most often wants from the record. */
  mainValue?: readonly string[];
  /** The compact column set of the horizontal table (many records). */
  tableColumns: readonly string[];
  /** A one-line credit shown under human-readable output (data licences). */
  credit?: string;
  /**
   * Reads a column of a record when records of several kinds share the
   * columns (bulk) or a column is presented differently (DNS answers);
   * default getPath. When `adapt` is given, this must equal
   * `getPath(adapt(record), column)`.
   */
  readColumn?: (record: unknown, column: string) => unknown;
  /**
   * Text views only (CSV cells, table cells): a column shown differently
   * from its value, e.g. DNS answers in zone-file form. Default readColumn.
   * json, ndjson and xml keep the value, also under `--fields`.
   */
  presentColumn?: (record: unknown, column: string) => unknown;
  /**
   * The record in the plain shape its columns read as dot paths, sharing the
   * record's sub-objects (lets the CSV encoder cache per sub-object).
   */
  adapt?: (record: unknown) => unknown;
  /**
   * Loads a CSV record writer specialised for these columns (the many rows
   * of a bulk run), or gives null for the generic one. Its bytes must equal
   * the generic writer's over `adapt` (or the plain paths) for every record.
   */
  csvRecordWriter?: (columns: readonly string[]) => Promise<CsvRecordWriter | null>;
  /**
   * CSV only: a column written as several flat columns (`findings` as
   * `findings.max_severity`, counts and ids), each read by `read` from the
   * column's value, so that no cell holds a multi-line text.
   */
  csvFlat?: { column: string; columns: readonly string[]; read: (value: unknown, column: string) => unknown };
}

/** The CSV columns of a column selection: `csvFlat`'s column replaced by its flat columns. */
export function csvColumnsOf(schema: RecordSchema, columns: readonly string[]): readonly string[] {
  const flat = schema.csvFlat;
  if (flat === undefined || !columns.includes(flat.column)) return columns;
  return columns.flatMap((column) => (column === flat.column ? flat.columns : [column]));
}

/** Reads a CSV column: a flat one from `csvFlat`, any other as the text views present it. */
export function csvColumnReader(schema: RecordSchema, present: (record: unknown, column: string) => unknown): (record: unknown, column: string) => unknown {
  const flat = schema.csvFlat;
  if (flat === undefined) return present;
  const read = schema.readColumn ?? getPath;
  return (record, column) => (flat.columns.includes(column) ? flat.read(read(record, flat.column), column) : present(record, column));
}

/**
 * Reads a dot path (`location.city`) from a record; undefined when absent.
 * Own properties only: `constructor` or `__proto__` is a key a record does
 * not have, never what its prototype holds.
 */
export function getPath(record: unknown, path: string): unknown {
  let value: unknown = record;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** The fields each selection asked for, in the order asked (groups expanded), without the identity columns. */
const requestedOrder = new WeakMap<readonly string[], readonly string[]>();

/**
 * Resolves a `--fields` list (groups and dot paths, comma separated) to the
 * columns to show, in schema order. Throws `usage` naming an unknown field,
 * with the nearest known fields as suggestions.
 */
export function selectColumns(schema: RecordSchema, fields: readonly string[] | null): readonly string[] {
  if (fields === null || fields.length === 0) return schema.columns;
  const wanted = new Set<string>(schema.identity);
  const asked: string[] = [];
  for (const field of fields) {
    // Own keys only: `--fields constructor` names no group (Object.prototype's is not one).
    const group = Object.hasOwn(schema.groups, field) ? schema.groups[field] : undefined;
    const matches = group ?? schema.columns.filter((column) => column === field || column.startsWith(`${field}.`));
    if (matches.length === 0) throw unknownField(schema, field);
    for (const column of matches) {
      wanted.add(column);
      if (!asked.includes(column)) asked.push(column);
    }
  }
  const selected = schema.columns.filter((column) => wanted.has(column));
  requestedOrder.set(selected, asked);
  return selected;
}

/**
 * The columns a `selectColumns` result was asked for, in the order `--fields`
 * named them and without the identity columns it adds; undefined for an array
 * it did not return.
 */
export function fieldsAsked(columns: readonly string[]): readonly string[] | undefined {
  return requestedOrder.get(columns);
}

function unknownField(schema: RecordSchema, field: string): NetintelError {
  const suggestions = suggestFields(schema, field);
  const hint = suggestions.length > 0 ? `did you mean ${suggestions.map((name) => JSON.stringify(name)).join(' or ')}?; ` : '';
  return new NetintelError('usage', `unknown field ${JSON.stringify(field)} for ${schema.kind} records (${hint}see --help for the field list)`, {
    details: { field, ...(suggestions.length > 0 ? { suggestions } : {}) },
  });
}

/**
 * Known fields (groups and columns) close to an unknown one, best first, at
 * most two: those whose last path segment is the field's (`city` for
 * `location.city`), then those within a small edit distance of the field or
 * whose last segment is (`cty`, `location.cty`, `Location`).
 */
export function suggestFields(schema: RecordSchema, field: string): string[] {
  const known = [...Object.keys(schema.groups), ...schema.columns];
  const wanted = field.toLowerCase();
  const lastOf = (name: string) => name.slice(name.lastIndexOf('.') + 1).toLowerCase();
  const wantedLast = lastOf(wanted);
  // Typos only: a third of the word's letters at most, so `ip` never suggests `zip`.
  const limit = Math.max(1, Math.floor(wantedLast.length / 3));
  const scored: Array<{ name: string; score: number }> = [];
  for (const name of known) {
    const lower = name.toLowerCase();
    const whole = distance(wanted, lower);
    const last = distance(wantedLast, lastOf(lower));
    const score = last === 0 ? 0 : Math.min(whole, last);
    if (score <= limit) scored.push({ name, score });
  }
  scored.sort((a, b) => a.score - b.score || known.indexOf(a.name) - known.indexOf(b.name));
  return scored.slice(0, 2).map(({ name }) => name);
}

/**
 * Keeps only the selected columns of a record, preserving its nesting (for
 * json/xml with `--fields`), read with the schema's reader where it has one
 * (bulk: `kind`, and an ASN line's facts in the IP columns, as in CSV).
 */
export function projectRecord(
  record: unknown,
  columns: readonly string[],
  readColumn: (record: unknown, column: string) => unknown = getPath,
): Record<string, unknown> {
  const projected: Record<string, unknown> = {};
  // Keys are defined, not assigned: a key named `__proto__` would otherwise set the prototype.
  const define = (target: Record<string, unknown>, key: string, value: unknown) =>
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  columns: for (const column of columns) {
    const keys = column.split('.');
    let target = projected;
    for (let depth = 0; depth < keys.length - 1; depth++) {
      const key = keys[depth]!;
      // An object the record holds as null (no RPKI validity, no reserved range) stays null, not an object of nulls.
      if (!Object.hasOwn(target, key)) define(target, key, getPath(record, keys.slice(0, depth + 1).join('.')) === null ? null : {});
      if (target[key] === null) continue columns;
      target = target[key] as Record<string, unknown>;
    }
    const value = readColumn(record, column);
    define(target, keys[keys.length - 1]!, value === undefined ? null : value);
  }
  return projected;
}

/** Splits a comma-separated `--fields` value. */
export function parseFieldList(value: string): string[] {
  return value
    .split(',')
    .map((field) => field.trim())
    .filter((field) => field.length > 0);
}
