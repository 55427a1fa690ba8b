import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { mapOrdered } from '../../../src/engine/bulk/map-ordered.js';
import { seededRandom } from '../../support/seeded-random.js';

async function collect<R>(batches: AsyncIterable<R[]>): Promise<R[][]> {
  const out: R[][] = [];
  for await (const batch of batches) out.push(batch);
  return out;
}

function rangeBatches(count: number, size: number): number[][] {
  const batches: number[][] = [];
  for (let start = 0; start < count; start += size) {
    batches.push(Array.from({ length: Math.min(size, count - start) }, (_, i) => start + i));
  }
  return batches;
}

async function* slowly<T>(batches: T[][], delayMs = 0): AsyncGenerator<T[]> {
  for (const batch of batches) {
    await sleep(delayMs);
    yield batch;
  }
}

/** An async mapper that records how many calls are running at once. */
function tracked(delays: (item: number) => number) {
  const stats = { inFlight: 0, maxInFlight: 0, calls: 0 };
  const fn = async (item: number) => {
    stats.calls += 1;
    stats.inFlight += 1;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    await sleep(delays(item));
    stats.inFlight -= 1;
    return item * 10;
  };
  return { fn, stats };
}

describe('mapOrdered', () => {
  it('keeps input order with random async delays and never runs more than the limit at once', async () => {
    const random = seededRandom(42);
    const delays = Array.from({ length: 300 }, () => Math.floor(random() * 6));
    const { fn, stats } = tracked((item) => delays[item]!);
    const batches = await collect(mapOrdered(slowly(rangeBatches(300, 37)), fn, 8));
    expect(batches.flat()).toEqual(Array.from({ length: 300 }, (_, i) => i * 10));
    expect(stats.maxInFlight).toBe(8);
    expect(stats.calls).toBe(300);
  });

  it.each([1, 3, 64])('keeps the in-flight maximum at the limit %i', async (limit) => {
    const random = seededRandom(limit);
    const { fn, stats } = tracked(() => Math.floor(random() * 3));
    const out = await collect(mapOrdered(rangeBatches(100, 100), fn, limit));
    expect(out.flat()).toHaveLength(100);
    expect(stats.maxInFlight).toBe(Math.min(limit, 100));
  });

  it('yields each result as soon as every result before it is in, not at the end', async () => {
    const { fn } = tracked((item) => (item === 0 ? 0 : 40));
    const started = Date.now();
    const iterator = mapOrdered([[0, 1, 2]], fn, 3)[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.value).toEqual([0]);
    expect(Date.now() - started).toBeLessThan(35);
    const rest = await collect({ [Symbol.asyncIterator]: () => iterator });
    expect(rest.flat()).toEqual([10, 20]);
  });

  it('takes the synchronous fast path: no promise per item, one output batch per input batch', async () => {
    const seen: number[] = [];
    const batches = await collect(
      mapOrdered(
        [[1, 2, 3], [4], [5, 6]],
        (item) => {
          seen.push(item);
          return item * 2;
        },
        2,
      ),
    );
    expect(batches).toEqual([[2, 4, 6], [8], [10, 12]]);
    expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('mixes synchronous and asynchronous results in input order', async () => {
    const fn = (item: number) => (item % 3 === 0 ? sleep(5 - (item % 5)).then(() => -item) : item);
    const out = await collect(mapOrdered(slowly(rangeBatches(40, 7)), fn, 4));
    expect(out.flat()).toEqual(Array.from({ length: 40 }, (_, i) => (i % 3 === 0 ? -i : i)));
  });

  it('pauses reading while the consumer holds a full window of synchronous results', async () => {
    let mapped = 0;
    const batches = rangeBatches(10_000, 100);
    const iterator = mapOrdered(slowly(batches), (item) => {
      mapped += 1;
      return item;
    }, 64)[Symbol.asyncIterator]();
    await iterator.next();
    // A consumer that stops pulling (a full stdout): the input must stop too.
    await sleep(100);
    expect(mapped).toBeLessThanOrEqual(300);
    await iterator.return(undefined);
  });

  it('ends without hanging when the consumer breaks out early, with async work pending', async () => {
    const { fn, stats } = tracked(() => 20);
    let read = 0;
    async function* endless(): AsyncGenerator<number[]> {
      for (let i = 0; ; i++) {
        read += 1;
        yield [i];
        await sleep(0);
      }
    }
    const out: number[] = [];
    for await (const batch of mapOrdered(endless(), fn, 4)) {
      out.push(...batch);
      if (out.length >= 5) break;
    }
    expect(out.slice(0, 5)).toEqual([0, 10, 20, 30, 40]);
    await sleep(60);
    const readAfterStop = read;
    await sleep(60);
    expect(read).toBe(readAfterStop);
    expect(stats.inFlight).toBe(0);
  });

  it('ends without hanging when the consumer breaks out early on synchronous results', async () => {
    let read = 0;
    async function* endless(): AsyncGenerator<number[]> {
      for (let i = 0; ; i += 100) {
        read += 1;
        yield Array.from({ length: 100 }, (_, j) => i + j);
        await sleep(0);
      }
    }
    let count = 0;
    for await (const batch of mapOrdered(endless(), (item) => item, 16)) {
      count += batch.length;
      if (count >= 250) break;
    }
    await sleep(30);
    const readAfterStop = read;
    await sleep(30);
    expect(read).toBe(readAfterStop);
  });

  it('yields every result and then rethrows when reading the input fails', async () => {
    async function* failing(): AsyncGenerator<number[]> {
      yield [1, 2];
      throw new Error('cannot read input.txt');
    }
    const out: number[] = [];
    await expect(
      (async () => {
        for await (const batch of mapOrdered(failing(), async (item: number) => item, 4)) out.push(...batch);
      })(),
    ).rejects.toThrow('cannot read input.txt');
    expect(out).toEqual([1, 2]);
  });

  it('yields nothing for empty input', async () => {
    expect(await collect(mapOrdered([], (item: number) => item, 4))).toEqual([]);
    expect(await collect(mapOrdered([[], []], (item: number) => item, 4))).toEqual([]);
  });

  it('yields the results that come in during one event-loop turn as one batch', async () => {
    // Every call settles in the same turn (one timer callback), in reverse order.
    const release: Array<() => void> = [];
    const fn = (item: number) => new Promise<number>((resolve) => release.push(() => resolve(item)));
    const iterator = mapOrdered([[0, 1, 2, 3, 4, 5]], fn, 10)[Symbol.asyncIterator]();
    const first = iterator.next();
    setTimeout(() => {
      for (const done of release.reverse()) done();
    }, 5);
    expect((await first).value).toEqual([0, 1, 2, 3, 4, 5]);
    expect((await iterator.next()).done).toBe(true);
  });

  it('counts a finished call against the window until the results before it are yielded', async () => {
    let started = 0;
    const fn = (item: number) => {
      started += 1;
      return sleep(item === 0 ? 60 : 1).then(() => item);
    };
    const iterator = mapOrdered([[0, 1, 2, 3, 4, 5, 6, 7]], fn, 3)[Symbol.asyncIterator]();
    const first = iterator.next();
    await sleep(30);
    // Items 1 and 2 are done, but item 0 holds them, so nothing more starts.
    expect(started).toBe(3);
    expect((await first).value).toEqual([0, 1, 2]);
    const rest = await collect({ [Symbol.asyncIterator]: () => iterator });
    expect(rest.flat()).toEqual([3, 4, 5, 6, 7]);
  });

  it('yields the results before a rejected call, then rethrows its error', async () => {
    const fn = (item: number) => (item === 2 ? sleep(5).then(() => Promise.reject(new Error('lookup bug'))) : sleep(1).then(() => item));
    const out: number[] = [];
    await expect(
      (async () => {
        for await (const batch of mapOrdered([[0, 1, 2, 3]], fn, 4)) out.push(...batch);
      })(),
    ).rejects.toThrow('lookup bug');
    expect(out).toEqual([0, 1]);
  });
});
