/**
 * The results of `fn` over `batch`, each made when the iteration reaches
 * it. For work that never waits (lookups in local datasets): each result
 * can be written and dropped before the next is made, where results
 * computed a batch ahead would live long enough to be moved to the old
 * generation, and the heap would grow all through a long run.
 *
 * `fn` must not throw: turn failures into values (see `Outcome`).
 */
export function mapEach<T, R>(batch: readonly T[], fn: (item: T) => R): EachMapped<T, R> {
  return new EachMapped(batch, fn);
}

/** What `mapEach` gives: iterable, and `forEach` for a caller that visits every result. */
export class EachMapped<T, R> implements Iterable<R> {
  constructor(
    private readonly batch: readonly T[],
    private readonly fn: (item: T) => R,
  ) {}

  *[Symbol.iterator](): Iterator<R> {
    for (let i = 0; i < this.batch.length; i++) yield this.fn(this.batch[i]!);
  }

  /**
   * Makes each result in order and hands it to `visit`: a plain loop, where
   * iterating resumes a generator per result (a few percent of a bulk run).
   */
  forEach(visit: (result: R) => void): void {
    const { batch, fn } = this;
    for (let i = 0; i < batch.length; i++) visit(fn(batch[i]!));
  }
}
