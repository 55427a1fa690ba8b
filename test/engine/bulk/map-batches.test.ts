import { describe, expect, it } from 'vitest';
import { mapBatches } from '../../../src/engine/bulk/map-batches.js';

async function* batchesOf<T>(batches: T[][], read: T[][]): AsyncGenerator<T[]> {
  for (const batch of batches) {
    read.push(batch);
    yield batch;
  }
}

describe('mapBatches', () => {
  it('maps every item in input order, one result batch per input batch', async () => {
    const out: number[][] = [];
    for await (const results of mapBatches([[1, 2], [], [3, 4, 5]], (n: number) => n * 10)) out.push([...results]);
    expect(out).toEqual([[10, 20], [], [30, 40, 50]]);
  });

  it('computes each result only when the consumer reaches it, and reads no batch ahead', async () => {
    const read: string[][] = [];
    const mapped: string[] = [];
    const seen: string[] = [];
    for await (const results of mapBatches(batchesOf([['a', 'b'], ['c']], read), (item: string) => {
      mapped.push(item);
      return item.toUpperCase();
    })) {
      expect(read).toHaveLength(seen.length === 0 ? 1 : 2);
      for (const result of results) {
        seen.push(result);
        expect(mapped).toEqual(seen.map((item) => item.toLowerCase()));
      }
    }
    expect(seen).toEqual(['A', 'B', 'C']);
  });

  it('stops reading when the consumer stops', async () => {
    const read: number[][] = [];
    for await (const results of mapBatches(batchesOf([[1], [2], [3]], read), (n: number) => n)) {
      if ([...results][0] === 1) break;
    }
    expect(read).toEqual([[1]]);
  });
});
