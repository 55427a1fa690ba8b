import type { RenderedRows } from './rendered-rows.js';
import { flattenBatches, mapOrdered } from '../engine/bulk/map-ordered.js';
import type { Target } from '../engine/bulk/read-targets.js';
import type { Outcome } from '../engine/outcome.js';
import type { Lookup, Operation, RemoteOperation } from './operation.js';

/** Targets of a run in batches, as read: arguments (one batch) or the lines of a list. */
export type TargetSource<T extends Target = Target> = AsyncIterable<readonly T[]> | Iterable<readonly T[]>;

/** Rows a lookup rendered ahead (a bulk run's worker threads): passed to the writer as they are. */
export type PreparedRows = RenderedRows;

/** How a run takes many targets. */
export interface ManyTargets {
  /** Lookups in flight at once (`--concurrency`); a remote lookup asks a server fewer at once. */
  concurrency: number;
  /** The targets are a list read from stdin or files (a bulk form of the API may then apply). */
  list: boolean;
}

/**
 * The engine as commands see it: one interface, two implementations with
 * the same signatures, local (over the engine context, createLocalEngine)
 * and remote (over the HTTP API, src/remote). A command cannot tell which
 * it has; an operation without an API mapping is not a `RemoteOperation`
 * and cannot be given to it.
 */
export interface Engine {
  /**
   * The lookup of a run: made once from the run's settings, called once per target.
   *
   * @throws NetintelError `usage` for settings this engine cannot carry (remote: what the API does not take).
   */
  lookup<S, R>(operation: RemoteOperation<S, R>, settings: S): Promise<Lookup<R>>;
  /**
   * Every A then AAAA address of a host name.
   *
   * @throws NetintelError `not_found` when it has neither.
   */
  hostAddresses(name: string): Promise<string[]>;
  /** Releases what the run's lookups hold. */
  close(): Promise<void>;
}

/** The local engine: every operation, those the API cannot ask included. */
export interface LocalEngine extends Engine {
  lookup<S, R>(operation: Operation<S, R>, settings: S): Promise<Lookup<R>>;
}

/**
 * The outcomes of many targets through one lookup, in input order, in
 * batches: the lookup's own way for many (a bulk form, worker threads)
 * when it has one, else at most `concurrency` targets in flight.
 */
export function lookupMany<R, T extends Target>(lookup: Lookup<R>, targets: TargetSource<T>, many: ManyTargets): AsyncIterable<Array<Outcome<R>> | PreparedRows> {
  if (lookup.all) return lookup.all(targets, many);
  return flattenBatches(mapOrdered(targets, (target) => lookup(target.text), Math.min(many.concurrency, lookup.concurrency ?? many.concurrency)));
}
