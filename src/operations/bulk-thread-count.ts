import { availableParallelism } from 'node:os';

/** The most threads a run uses unless told otherwise: each worker holds its own caches, datasets view and heap. */
export const DEFAULT_MAX_BULK_THREADS = 4;

/**
 * The default thread count: one CPU is left to whatever reads the output
 * (or writes the input) of a pipeline. On a 2-CPU machine a second lookup
 * thread makes a run to a file faster but a run feeding a busy reader
 * slower (bench/run.js measures both), so the default there is one thread.
 */
export function defaultBulkThreads(): number {
  return Math.max(1, Math.min(availableParallelism() - 1, DEFAULT_MAX_BULK_THREADS));
}
