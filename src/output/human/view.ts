import type { TableColumn } from './fitted-table.js';
import type { ViewContext } from './style.js';

/** A record to show, or the error a lookup ended in, with the query that asked for it. */
export interface ViewRow {
  query: string;
  record: unknown;
  /** The message is empty when the run reports it on stderr already. */
  error: { code: string; message: string } | null;
}

/** A failed lookup in a view of many: `query: code: message`, or `query: failed (code)` when its message is on stderr. */
export function failureText(row: ViewRow): string {
  const error = row.error!;
  return error.message === '' ? `${row.query}: failed (${error.code})` : `${row.query}: ${error.code}: ${error.message}`;
}

/** How one kind of record reads to a person (format `table`). */
export interface HumanView {
  /** One record in full: a headline verdict, the key facts, findings by severity. */
  block(ctx: ViewContext, record: unknown): string;
  /** Many records as one table row each. */
  table: {
    columns: readonly TableColumn[];
    cells(record: unknown): string[];
    /** The record's own name for itself: the query column is left out when every row's query is this. */
    key(record: unknown): string;
  };
  /** Many records drawn otherwise than one row each (the answers of several DNS types in one table). */
  many?(ctx: ViewContext, rows: readonly ViewRow[]): string | null;
}

/** `1234567` as `1,234,567`. */
export function grouped(value: number | string): string {
  return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** `1 record`, `2 records`. */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** `yes`, `no`, or null (unknown) for a flag that may be unset. */
export function yesNo(value: boolean | null | undefined): string | null {
  return value === true ? 'yes' : value === false ? 'no' : null;
}
