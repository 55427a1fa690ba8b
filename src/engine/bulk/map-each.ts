/**
 * The results of `fn` over `batch`, each made when the iteration reaches
 * it. For work that never waits (lookups in local datasets): each result
 * can be written and dropped before the next is made, where results
 * computed a batch ahead would live long enough to be moved to the old
 * generation, and the heap would grow all through a long run.
 *
 * `fn` must not throw: turn failures into values (see `Outcome`).
 */
export function* mapEach<T, R>(batch: readonly T[], fn: (item: T) => R): Generator<R> {
  for (let i = 0; i < batch.length; i++) yield fn(batch[i]!);
}
