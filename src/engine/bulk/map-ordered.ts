/** A result in input order: ready at once (synchronous), or filled in when its promise settles. */
interface Slot<R> {
  /** An asynchronous call: it counts against the window until its result is yielded. */
  counted: boolean;
  ready: boolean;
  value: R | undefined;
  failure: { error: unknown } | null;
}

/**
 * Maps items through `fn` with at most `limit` asynchronous calls in flight
 * and yields the results in input order, in arrays of whatever is ready.
 * Reading from `batches` pauses while the window is full, so memory stays
 * flat whatever the input size; a call counts against the window until its
 * result has been yielded, so a slow item holds the results after it, and
 * the reading, to `limit`.
 *
 * Results are yielded as soon as every result before them is in, at the end
 * of the event-loop turn in which they came in: everything that completes
 * in one turn (a burst of network replies read in one poll) leaves as one
 * batch, so the writer makes one write per turn rather than one per item,
 * and an interactive pipe still sees each answer at once. Synchronous
 * results (local lookups) skip the promise machinery.
 *
 * `fn` should not reject (turn failures into values, see `Outcome`); a
 * rejection is rethrown by the generator once the results before it have
 * been yielded.
 */
export async function* mapOrdered<T, R>(
  batches: AsyncIterable<readonly T[]> | Iterable<readonly T[]>,
  fn: (item: T) => R | Promise<R>,
  limit: number,
): AsyncGenerator<R[]> {
  const queue: Array<Slot<R>> = [];
  let head = 0;
  let inFlight = 0;
  let inputDone = false;
  let inputError: unknown = null;
  let stopped = false;
  let wakeConsumer: (() => void) | null = null;
  let wakeProducer: (() => void) | null = null;
  let wakeScheduled = false;

  const notifyConsumer = (): void => {
    wakeScheduled = false;
    const wake = wakeConsumer as (() => void) | null;
    wakeConsumer = null;
    wake?.();
  };
  const notifyProducer = (): void => {
    const wake = wakeProducer as (() => void) | null;
    wakeProducer = null;
    wake?.();
  };
  // Only the head settling lets the consumer make progress; it is woken at
  // the end of the turn (setImmediate), after the rest of the turn's replies.
  const headSettled = (slot: Slot<R>): void => {
    if (queue[head] !== slot || wakeConsumer === null || wakeScheduled) return;
    wakeScheduled = true;
    setImmediate(notifyConsumer);
  };

  const producer = (async () => {
    try {
      for await (const batch of batches) {
        for (const item of batch) {
          if (stopped) return;
          const result = fn(item);
          if (isPromise<R>(result)) {
            const slot: Slot<R> = { counted: true, ready: false, value: undefined, failure: null };
            inFlight += 1;
            queue.push(slot);
            result.then(
              (value) => {
                slot.value = value;
                slot.ready = true;
                headSettled(slot);
              },
              (error: unknown) => {
                slot.failure = { error };
                slot.ready = true;
                headSettled(slot);
              },
            );
            while (inFlight >= limit && !stopped) await new Promise<void>((resolve) => (wakeProducer = resolve));
          } else {
            queue.push({ counted: false, ready: true, value: result, failure: null });
          }
        }
        notifyConsumer();
        // Synchronous results never fill the in-flight window: pause reading
        // until the consumer has taken them, or a slow writer would let the
        // whole input pile up in the queue.
        while (!stopped && queue.length - head >= limit) await new Promise<void>((resolve) => (wakeProducer = resolve));
      }
    } catch (error) {
      inputError = error;
    } finally {
      inputDone = true;
      notifyConsumer();
    }
  })();

  try {
    for (;;) {
      const ready: R[] = [];
      let failure: { error: unknown } | null = null;
      while (head < queue.length) {
        const slot = queue[head]!;
        if (!slot.ready) break;
        if (slot.failure !== null && ready.length > 0) break;
        head += 1;
        if (slot.counted) inFlight -= 1;
        if (slot.failure !== null) {
          failure = slot.failure;
          break;
        }
        ready.push(slot.value as R);
        // Slots stay until the queue is compacted below; a result handed on must not outlive young-generation collections with them.
        slot.value = undefined;
        if (head > 4096 && head * 2 > queue.length) {
          queue.splice(0, head);
          head = 0;
        }
      }
      if (failure !== null) throw failure.error;
      if (ready.length > 0) {
        notifyProducer();
        yield ready;
        continue;
      }
      if (inputDone && head >= queue.length) break;
      await new Promise<void>((resolve) => {
        wakeConsumer = resolve;
        // The head may have settled while nobody waited for it.
        if (head < queue.length && queue[head]!.ready) notifyConsumer();
      });
    }
    if (inputError !== null) throw inputError;
  } finally {
    // The consumer may stop early (the reader of the output went away): let
    // the producer end instead of waiting for a window slot forever.
    stopped = true;
    notifyProducer();
    void producer;
  }
}

function isPromise<R>(value: unknown): value is Promise<R> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** Turns batches of per-item result lists into batches of results (a target may yield several records). */
export async function* flattenBatches<T>(batches: AsyncIterable<T[][]>): AsyncGenerator<T[]> {
  for await (const batch of batches) {
    // A plain loop: Array.prototype.flat is several times slower on V8.
    const flat: T[] = [];
    for (const list of batch) for (const item of list) flat.push(item);
    yield flat;
  }
}
