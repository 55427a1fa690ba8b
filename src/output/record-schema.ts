import { NetintelError } from '../errors.js';
import type { CsvRecordWriter } from './csv-encoder.js';

/**
 * The column schema of one record kind. It drives CSV columns, the table
 * view and `--fields` selection, so the columns stay the same whatever the
 * first record holds.
 */
export interface RecordSchema {
  kind: string;
  /** Every leaf of the record as a dot path, in output order. */
  columns: readonly string[];
  /** Named groups `--fields` accepts (e.g. location, security). */
  groups: Readonly<Record<string, readonly string[]>>;
  /** Columns always kept, whatever `--fields` selects (the record's identity). */
  identity: readonly string[];
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

/**
 * Resolves a `--fields` list (groups and dot paths, comma separated) to the
 * columns to show, in schema order. Throws `usage` naming an unknown field.
 */
export function selectColumns(schema: RecordSchema, fields: readonly string[] | null): readonly string[] {
  if (fields === null || fields.length === 0) return schema.columns;
  const wanted = new Set<string>(schema.identity);
  for (const field of fields) {
    // Own keys only: `--fields constructor` names no group (Object.prototype's is not one).
    const group = Object.hasOwn(schema.groups, field) ? schema.groups[field] : undefined;
    if (group) {
      group.forEach((column) => wanted.add(column));
      continue;
    }
    const matches = schema.columns.filter((column) => column === field || column.startsWith(`${field}.`));
    if (matches.length === 0) {
      const known = [...Object.keys(schema.groups), ...schema.columns].join(', ');
      throw new NetintelError('usage', `unknown field ${JSON.stringify(field)} for ${schema.kind} records; known: ${known}`, {
        details: { field },
      });
    }
    matches.forEach((column) => wanted.add(column));
  }
  return schema.columns.filter((column) => wanted.has(column));
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
  for (const column of columns) {
    const keys = column.split('.');
    let target = projected;
    for (const key of keys.slice(0, -1)) {
      if (!Object.hasOwn(target, key)) define(target, key, {});
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
