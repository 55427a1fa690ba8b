import { describe, expect, it } from 'vitest';
import { NumberKeyedCache } from '../../../src/engine/ip/number-keyed-cache.js';

describe('NumberKeyedCache', () => {
  it('gives back what was stored under a key, and nothing for a key never stored', () => {
    const cache = new NumberKeyedCache<string>(64);
    cache.set(7, 'seven');
    cache.set(-8, 'minus eight');
    cache.set(4_294_967_295, 'top');
    expect(cache.get(7)).toBe('seven');
    expect(cache.get(-8)).toBe('minus eight');
    expect(cache.get(4_294_967_295)).toBe('top');
    expect(cache.get(8)).toBeUndefined();
    expect(cache.get(Number.NaN)).toBeUndefined();
  });

  it('replaces the value of a key that is stored again', () => {
    const cache = new NumberKeyedCache<string>(4);
    cache.set(1, 'old');
    cache.set(1, 'new');
    expect(cache.get(1)).toBe('new');
  });

  it('never answers a key with another key\'s value, and never holds more than its capacity', () => {
    const cache = new NumberKeyedCache<number>(256);
    for (let key = 0; key < 100_000; key += 1) {
      cache.set(key * 7919, key);
      const probe = Math.floor(key / 3) * 7919;
      const found = cache.get(probe);
      if (found !== undefined) expect(found).toBe(probe / 7919);
    }
    let held = 0;
    for (let key = 0; key < 100_000; key += 1) if (cache.get(key * 7919) !== undefined) held += 1;
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThanOrEqual(256);
  });

  it('lets a key that keeps coming in, though every slot of its set is taken', () => {
    const cache = new NumberKeyedCache<string>(4);
    for (let key = 0; key < 1000; key += 1) cache.set(key, `k${key}`);
    let misses = 0;
    while (cache.get(123_456) === undefined) {
      misses += 1;
      cache.set(123_456, 'newcomer');
    }
    expect(misses).toBeGreaterThan(0);
    expect(misses).toBeLessThanOrEqual(16);
    expect(cache.get(123_456)).toBe('newcomer');
  });

  it('rejects a capacity that is not a power of two of at least 4', () => {
    for (const capacity of [0, 2, 3, 6, 1000, 1.5]) expect(() => new NumberKeyedCache(capacity)).toThrow(RangeError);
  });
});
