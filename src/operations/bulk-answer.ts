import { setImmediate as nextTurn } from 'node:timers/promises';
import { toNetintelError, type ErrorCode } from '../errors.js';

/** One item of a bulk answer: the query as sent, and its record or its error. */
export type BulkItem =
  | { query: string; record: unknown }
  | { query: string; error: { code: ErrorCode; message: string; details?: Record<string, unknown> } };

/** A bulk answer: one item per query in the order sent, and counts. */
export interface BulkAnswer {
  results: BulkItem[];
  summary: {
    total: number;
    succeeded: number;
    failed: number;
    /** Failed items by error code. */
    errors: Partial<Record<ErrorCode, number>>;
  };
}

/**
 * Looks up every query and answers in input order; a failed item is an error
 * item, never a failed request. Each item starts on a turn of the event loop
 * of its own (an asynchronous lookup still runs beside the others): fifty
 * large ASes in one request must not hold every other request, `/healthz`
 * included, until the last is done.
 */
export async function bulkAnswer<T>(queries: readonly string[], lookup: (query: string) => T | Promise<T>): Promise<BulkAnswer> {
  const pending: Array<Promise<BulkItem>> = [];
  for (const [index, query] of queries.entries()) {
    if (index > 0) await nextTurn();
    pending.push(answerOf(query, lookup));
  }
  const results = await Promise.all(pending);
  const errors: Partial<Record<ErrorCode, number>> = {};
  let failed = 0;
  for (const item of results) {
    if ('error' in item) {
      failed += 1;
      errors[item.error.code] = (errors[item.error.code] ?? 0) + 1;
    }
  }
  return { results, summary: { total: results.length, succeeded: results.length - failed, failed, errors } };
}


async function answerOf<T>(query: string, lookup: (query: string) => T | Promise<T>): Promise<BulkItem> {
  try {
    return { query, record: await lookup(query) };
  } catch (error) {
    return { query, error: toNetintelError(error).toJSON() };
  }
}
