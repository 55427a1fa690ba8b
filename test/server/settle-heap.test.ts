import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { settleHeap } from '../../src/server/settle-heap.js';

describe('settleHeap', () => {
  it('runs a full collection: an object only a WeakRef points to is gone afterwards', async () => {
    let target: object | null = { payload: new Array(1000).fill('x') };
    const ref = new WeakRef(target);
    target = null;
    // A WeakRef keeps its target alive until the job that made (or last read) it ends.
    await nextTurn();
    expect(ref.deref()).toBeDefined();
    await nextTurn();
    settleHeap();
    expect(ref.deref()).toBeUndefined();
  });
});
