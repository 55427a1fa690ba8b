import { describe, expect, it } from 'vitest';
import { mapEach } from '../../../src/engine/bulk/map-each.js';

describe('mapEach', () => {
  it('makes each result when it is reached, iterated or visited with forEach, in order', () => {
    for (const visit of ['iterate', 'forEach'] as const) {
      const events: string[] = [];
      const mapped = mapEach([1, 2, 3], (n) => {
        events.push(`make ${n}`);
        return n * 10;
      });
      expect(events).toEqual([]);
      const take = (result: number) => events.push(`take ${result}`);
      if (visit === 'iterate') for (const result of mapped) take(result);
      else mapped.forEach(take);
      expect(events).toEqual(['make 1', 'take 10', 'make 2', 'take 20', 'make 3', 'take 30']);
    }
  });
});
