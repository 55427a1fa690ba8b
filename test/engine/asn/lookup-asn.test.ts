/**
 * lookupAsn's per-AS record cache and the bulk form that yields to the
 * event loop, on the bundled ASN data.
 */
import { describe, expect, it } from 'vitest';
import { AS_RECORD_CACHE_SIZE, lookupAsn, lookupAsnBulk } from '../../../src/engine/asn/lookup-asn.js';
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
    first.counts!.ipv4Prefixes = -1;
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

  it('makes a repeated large AS cheap: 200 rows of AS16509 in well under a second', () => {
    lookupAsn(ctx, 'AS16509', 'memory');
    const started = performance.now();
    for (let i = 0; i < 200; i++) lookupAsn(ctx, 'AS16509', 'memory');
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('lookupAsnBulk', () => {
  it('gives one outcome per query in order, failures included, never rejecting', async () => {
    const outcomes = await lookupAsnBulk(ctx, ['AS15169', 'ASX', '8.8.8.8', 'AS4294967296', '10.0.0.1']);
    expect(outcomes.map((outcome) => [outcome.query, outcome.ok ? 'ok' : outcome.error.code])).toEqual([
      ['AS15169', 'ok'],
      ['ASX', 'invalid_input'],
      ['8.8.8.8', 'ok'],
      ['AS4294967296', 'invalid_input'],
      ['10.0.0.1', 'not_found'],
    ]);
  });

  it('lets other work run between items', async () => {
    const queries = ['AS16509', 'AS8075', 'AS3356', 'AS174', 'AS7018', 'AS15169'];
    let turns = 0;
    let running = true;
    const tick = (): void => {
      turns += 1;
      if (running) setImmediate(tick);
    };
    setImmediate(tick);
    await lookupAsnBulk(ctx, queries, 'memory');
    running = false;
    expect(turns).toBeGreaterThanOrEqual(queries.length - 1);
  });
});
