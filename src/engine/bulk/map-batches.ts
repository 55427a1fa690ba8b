/**
 * Maps each batch through a synchronous `fn`, yielding per input batch an
 * iterable that computes its results as it is iterated (once), in input
 * order. For work that never waits (lookups in local datasets) this is all
 * `mapOrdered` would do, without its in-flight window. Reading pauses while
 * the consumer handles a batch, and each result can be written and dropped
 * before the next is made: results computed a batch ahead would live long
 * enough to be moved to the old generation, and the heap would grow all
 * through a long run.
 *
 * `fn` must not throw: turn failures into values (see `Outcome`).
 */
export async function* mapBatches<T, R>(
  batches: AsyncIterable<readonly T[]> | Iterable<readonly T[]>,
  fn: (item: T) => R,
): AsyncGenerator<Iterable<R>> {
  for await (const batch of batches) yield mapEach(batch, fn);
}

/** The results of `fn` over `batch`, each made when the iteration reaches it. */
export function* mapEach<T, R>(batch: readonly T[], fn: (item: T) => R): Generator<R> {
  for (let i = 0; i < batch.length; i++) yield fn(batch[i]!);
}
