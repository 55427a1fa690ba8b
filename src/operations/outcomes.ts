import type { Outcome } from '../engine/outcome.js';
import { toNetintelError } from '../errors.js';
import type { Lookup, Outcomes } from './operation.js';

/** The outcome of one piece of work under `query`: its value, or the error it threw (never rejects). */
export async function settle<R>(query: string, work: () => R | Promise<R>): Promise<Outcome<R>> {
  try {
    return { ok: true, query, value: await work() };
  } catch (error) {
    return { ok: false, query, error: toNetintelError(error) };
  }
}

/** The failed outcome of `query`. */
export function failed(query: string, error: unknown): Outcome<never> {
  return { ok: false, query, error: toNetintelError(error) };
}

/** A lookup giving one record per target from an engine call that throws NetintelError. */
export function oneRecordEach<R>(check: (target: string) => Promise<R>): Lookup<R> {
  return async (target): Promise<Outcomes<R>> => [await settle(target, () => check(target))];
}
