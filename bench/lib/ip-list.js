// The bulk input: N random public unicast IPv4 addresses, one per line, from a
// seeded PRNG, so every run (and every tool in a run) reads the same list.
// Addresses in special-purpose ranges are redrawn: netintel answers those
// without a database lookup, and the baselines would look them up for
// nothing, so keeping them would compare different work.
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Bump when the generator changes, so cached lists are not reused. */
const GENERATOR_VERSION = 1;

/** IPv4 special-purpose ranges (RFC 6890 and friends), as [base, prefix length]. */
const SPECIAL_V4 = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
].map(([text, length]) => {
  const base = text.split('.').reduce((value, octet) => value * 256 + Number(octet), 0);
  const mask = length === 0 ? 0 : (0xffffffff << (32 - length)) >>> 0;
  return { base: (base & mask) >>> 0, mask };
});

export function isSpecialV4(value) {
  for (const { base, mask } of SPECIAL_V4) if (((value & mask) >>> 0) === base) return true;
  return false;
}

/** mulberry32: a small, fast, seeded 32-bit PRNG. */
export function createPrng(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/**
 * Writes (once) and returns the path of a list of `count` addresses for
 * `seed`. The first k lines of the list for (seed, N) are the list for
 * (seed, k), so a small and a large run share their beginning.
 */
export function ipListFile(count, seed) {
  const dir = join(tmpdir(), 'netintel-bench');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `ipv4-v${GENERATOR_VERSION}-seed${seed}-${count}.txt`);
  if (existsSync(path)) return { path, generated: false };
  const next = createPrng(seed);
  const lines = new Array(count);
  for (let i = 0; i < count; i++) {
    let value;
    do value = next();
    while (isSpecialV4(value));
    lines[i] = `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
  }
  const partial = `${path}.${process.pid}.tmp`;
  writeFileSync(partial, `${lines.join('\n')}\n`);
  renameSync(partial, path);
  return { path, generated: true };
}
