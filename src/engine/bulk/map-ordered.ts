/**
 * Maps items through `fn` with at most `limit` asynchronous calls in flight
 * and yields the results in input order, in arrays of whatever is ready.
 * Reading from `batches` pauses while the window is full, so memory stays
 * flat whatever the input size; results are yielded as soon as every result
 * before them is in, so an interactive pipe sees each answer at once.
 * Synchronous results (local lookups) skip the promise machinery.
 *
 * `fn` must not reject: turn failures into values (see `Outcome`).
 */
export async function* mapOrdered<T, R>(
  batches: AsyncIterable<readonly T[]> | Iterable<readonly T[]>,
  fn: (item: T) => R | Promise<R>,
  limit: number,
): AsyncGenerator<R[]> {
  type Slot = { ready: true; value: R } | { ready: false; promise: Promise<R> };
  const queue: Slot[] = [];
  let head = 0;
  let inFlight = 0;
  let inputDone = false;
  let inputError: unknown = null;
  let stopped = false;
  let wakeConsumer: (() => void) | null = null;
  let wakeProducer: (() => void) | null = null;
  const notifyConsumer = () => {
    const wake = wakeConsumer as (() => void) | null;
    wakeConsumer = null;
    wake?.();
  };

  const producer = (async () => {
    try {
      for await (const batch of batches) {
        for (const item of batch) {
          if (stopped) return;
          const result = fn(item);
          if (isPromise<R>(result)) {
            inFlight += 1;
            queue.push({ ready: false, promise: result });
            notifyConsumer();
            while (inFlight >= limit) await new Promise<void>((resolve) => (wakeProducer = resolve));
          } else {
            queue.push({ ready: true, value: result });
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
      while (head < queue.length) {
        const slot = queue[head]!;
        if (!slot.ready) {
          if (ready.length > 0) break;
          const value = await slot.promise;
          inFlight -= 1;
          const wake = wakeProducer as (() => void) | null;
          wakeProducer = null;
          wake?.();
          ready.push(value);
        } else {
          ready.push(slot.value);
        }
        head += 1;
        if (head > 4096 && head * 2 > queue.length) {
          queue.splice(0, head);
          head = 0;
        }
      }
      if (ready.length > 0) {
        const wake = wakeProducer as (() => void) | null;
        wakeProducer = null;
        wake?.();
        yield ready;
        continue;
      }
      if (inputDone && head >= queue.length) break;
      await new Promise<void>((resolve) => (wakeConsumer = resolve));
    }
    if (inputError !== null) throw inputError;
  } finally {
    // The consumer may stop early (the reader of the output went away): let
    // the producer end instead of waiting for a window slot forever.
    stopped = true;
    const wake = wakeProducer as (() => void) | null;
    wakeProducer = null;
    wake?.();
    void producer;
  }
}

function isPromise<R>(value: unknown): value is Promise<R> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** Turns batches of per-item result lists into batches of results (a target may yield several records). */
export async function* flattenBatches<T>(batches: AsyncIterable<T[][]>): AsyncGenerator<T[]> {
  for await (const batch of batches) yield batch.flat();
}
