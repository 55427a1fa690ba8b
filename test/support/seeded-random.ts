import { createPrng } from '../../bench/lib/ip-list.js';

/**
 * A seeded generator of numbers in [0, 1): the benchmarks' mulberry32
 * (bench/lib/ip-list.js), so that a test drawing random inputs draws the
 * same ones every run and a failure reproduces from its seed.
 */
export function seededRandom(seed: number): () => number {
  const next = createPrng(seed);
  return () => next() / 4294967296;
}
