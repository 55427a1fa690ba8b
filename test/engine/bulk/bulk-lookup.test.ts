/**
 * The bulk lookup's move to the in-memory datasets: a batch announced
 * ahead that takes the run to MEMORY_MODE_AFTER addresses loads them
 * before its first lookup; AS numbers and short batches do not.
 */
import { describe, expect, it } from 'vitest';
import { createBulkLookup, type SourcedTarget } from '../../../src/engine/bulk/bulk-lookup.js';
import { createEngineContext } from '../../../src/engine/context.js';
import { wholeFilesRead } from '../../../src/engine/data/whole-files.js';
import { createAdaptiveIpLookup, MEMORY_MODE_AFTER } from '../../../src/engine/ip/ip-target-lookup.js';

const cityDatabasesRead = () => [...wholeFilesRead().keys()].filter((path) => path.endsWith('.mmdb'));
const batchOf = (texts: readonly string[]): SourcedTarget[] => texts.map((text, i) => ({ text, line: i + 1, source: null }));
const addresses = (count: number) => Array.from({ length: count }, (_, i) => `${(i % 200) + 1}.${i % 251}.${i % 7}.1`);

// One test file, one process: the tests run in order and see the files read by those before them.
describe('createBulkLookup: loading the datasets', () => {
  it('keeps positioned reads for a batch of AS numbers, however long, and for a short batch of addresses', () => {
    const lookup = createBulkLookup(createEngineContext());
    const asns = batchOf(Array.from({ length: MEMORY_MODE_AFTER + 500 }, (_, i) => `AS${i + 1}`));
    lookup.expect!(asns);
    for (const target of asns.slice(0, 10)) lookup(target);
    const short = batchOf(addresses(100));
    lookup.expect!(short);
    const outcomes = short.map(lookup);
    expect(outcomes.every((outcome) => outcome.ok)).toBe(true);
    expect(cityDatabasesRead()).toEqual([]);
  });

  it('loads the city databases before the first address of a batch that takes the run to the threshold, with the same rows', () => {
    const ctx = createEngineContext();
    const texts = addresses(MEMORY_MODE_AFTER);
    const expected = createBulkLookup(ctx);
    const before = texts.slice(0, 50).map((text, i) => expected({ text, line: i + 1, source: null }));
    expect(cityDatabasesRead()).toEqual([]);
    const lookup = createBulkLookup(ctx);
    const batch = batchOf(texts);
    lookup.expect!(batch);
    const first = lookup(batch[0]!);
    expect(cityDatabasesRead()).toHaveLength(1);
    expect([first, ...batch.slice(1, 50).map(lookup)]).toEqual(before);
  });
});

describe('createAdaptiveIpLookup.expect', () => {
  it('counts the lookups made so far: an announcement that reaches the threshold with them moves to memory', () => {
    const lookup = createAdaptiveIpLookup(createEngineContext());
    expect(lookup.expect(MEMORY_MODE_AFTER - 11)).toBe(false);
    for (let i = 0; i < 10; i++) lookup('8.8.8.8');
    expect(lookup.expect(MEMORY_MODE_AFTER - 11)).toBe(false);
    lookup('8.8.8.8');
    expect(lookup.expect(MEMORY_MODE_AFTER - 11)).toBe(true);
    expect(createAdaptiveIpLookup(createEngineContext(), { inMemoryFromStart: true }).expect(0)).toBe(true);
  });
});
