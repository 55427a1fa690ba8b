/**
 * The list of operations (docs/design.md, Operations) names each operation
 * beside the loader of its descriptor: the two names must be one.
 */
import { describe, expect, it } from 'vitest';
import { loadOperations, OPERATIONS } from '../../src/operations/operations.js';

describe('OPERATIONS', () => {
  it('names each operation once', () => {
    const names = OPERATIONS.map(({ name }) => name);
    expect(names.length).toBeGreaterThan(0);
    expect(new Set(names).size).toBe(names.length);
  });

  it('loads, for each entry, the descriptor of the entry\'s name', async () => {
    for (const entry of OPERATIONS) expect((await entry.load()).name, entry.name).toBe(entry.name);
  });

  it('loads every descriptor in the list\'s order with loadOperations, each the one its entry loads', async () => {
    const operations = await loadOperations();
    expect(operations.map(({ name }) => name)).toEqual(OPERATIONS.map(({ name }) => name));
    for (const [i, entry] of OPERATIONS.entries()) expect(operations[i]).toBe(await entry.load());
  });
});
