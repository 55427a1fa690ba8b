import type { NetintelError } from '../errors.js';

/**
 * The result of one target of a run: a record, or the error that stopped it.
 * Bulk runs keep one outcome per input line, failures included, so that the
 * output has exactly one row per line in input order.
 */
export type Outcome<T> =
  | { ok: true; query: string; value: T }
  | { ok: false; query: string; error: NetintelError };
