/** lookupAsn's per-AS record cache, on the bundled ASN data. */
import { describe, expect, it, vi } from 'vitest';
import { ipDatabasesFor } from '../../../src/engine/ip/ip-databases.js';
import { AS_RECORD_CACHE_SIZE, lookupAsn } from '../../../src/engine/asn/lookup-asn.js';
import { createEngineContext } from '../../../src/engine/context.js';

const ctx = createEngineContext();

describe('lookupAsn cache', () => {
  it('returns a record equal to the first for a repeated AS, with lists of its own', () => {
    const first = lookupAsn(ctx, 'AS16509', 'memory');
    expect(first.prefixes!.ipv4.length).toBeGreaterThan(1000);
    const second = lookupAsn(ctx, 'as16509', 'memory');
    expect(second).toEqual({ ...first, query: 'as16509' });
    expect(second.prefixes!.ipv4).not.toBe(first.prefixes!.ipv4);
    first.prefixes!.ipv4.length = 0;
    first.counts!.ipv4_prefixes = -1;
    expect(lookupAsn(ctx, 'AS16509', 'memory')).toEqual({ ...second, query: 'AS16509' });
  });

  it('answers the same after more distinct ASes than it keeps have pushed an entry out', () => {
    const before = lookupAsn(ctx, 'AS15169', 'memory');
    const filler = Array.from({ length: AS_RECORD_CACHE_SIZE + 8 }, (_, i) => `AS${64512 + i}`);
    for (const query of filler) {
      try {
        lookupAsn(ctx, query, 'memory');
      } catch {
        // Private AS numbers announce nothing: not_found is cached like a record.
      }
    }
    expect(lookupAsn(ctx, 'AS15169', 'memory')).toEqual(before);
    expect(lookupAsn(ctx, 'AS15169', 'pread')).toEqual(before);
  });

  it('keeps a not-found AS not found', () => {
    for (let i = 0; i < 2; i++) expect(() => lookupAsn(ctx, 'AS64512', 'memory')).toThrow(expect.objectContaining({ code: 'not_found' }));
  });

  it('builds the record of a repeated AS once, not per row', () => {
    const index = ipDatabasesFor(ctx, 'memory').asn;
    const prefixesOf = vi.spyOn(index, 'prefixesOf');
    try {
      lookupAsn(ctx, 'AS8075', 'memory');
      for (let i = 0; i < 200; i++) lookupAsn(ctx, 'AS8075', 'memory');
      expect(prefixesOf.mock.calls.filter(([asn]) => asn === 8075).length).toBeLessThanOrEqual(1);
    } finally {
      prefixesOf.mockRestore();
    }
  });
});
