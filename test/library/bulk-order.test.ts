/**
 * bulkLookup keeps input order and gives one outcome per input, whatever
 * the inputs (addresses, AS numbers, junk) and however the source yields
 * them (a synchronous iterable, or an async one that pauses between items).
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { bulkLookup, createNetintel, NetintelError } from '../../src/lib/index.js';

const client = createNetintel();
afterAll(() => client.close());

const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((parts) => parts.join('.'));
const ipv6 = fc.ipV6();
const asn = fc.nat(4_200_000_000).map((n) => `AS${n}`);
const input = fc.oneof(ipv4, ipv6, asn, fc.string({ maxLength: 12 }));

async function* slowly(items: readonly string[]): AsyncGenerator<string> {
  for (const [index, item] of items.entries()) {
    if (index % 7 === 0) await new Promise((resolve) => setImmediate(resolve));
    yield item;
  }
}

async function collect(source: AsyncIterable<string> | Iterable<string>, window?: number) {
  const outcomes = [];
  for await (const outcome of bulkLookup(client, source, window === undefined ? {} : { window })) outcomes.push(outcome);
  return outcomes;
}

describe('bulkLookup', () => {
  it('yields one outcome per input, in input order, failures as outcomes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(input, { maxLength: 600 }), fc.boolean(), fc.integer({ min: 1, max: 64 }), async (items, async, window) => {
        const outcomes = await collect(async ? slowly(items) : items, window);
        expect(outcomes.map((outcome) => outcome.query)).toEqual(items.map((item) => item.trim()));
        for (const outcome of outcomes) if (!outcome.ok) expect(outcome.error).toBeInstanceOf(NetintelError);
      }),
      { numRuns: 60 },
    );
  });

  it('gives a record to an address and an error row to junk', async () => {
    const outcomes = await collect(['192.0.2.1', 'no address', 'AS15169']);
    expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, false, true]);
    expect(outcomes[1]).toMatchObject({ ok: false, error: { code: 'invalid_input', details: { line: 2 } } });
  });

  it('stops reading an endless source when the consumer stops', async () => {
    let read = 0;
    function* endless(): Generator<string> {
      for (;;) {
        read += 1;
        yield '198.51.100.7';
      }
    }
    let taken = 0;
    for await (const outcome of bulkLookup(client, endless(), { window: 16 })) {
      expect(outcome.ok).toBe(true);
      if (++taken === 1000) break;
    }
    expect(read).toBeLessThan(1000 + 256 * 2 + 16);
  });

  it('passes on a failing source as a NetintelError, after the outcomes before it', async () => {
    function* failing(): Generator<string> {
      yield '192.0.2.1';
      throw new Error('source broke');
    }
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const outcome of bulkLookup(client, failing())) seen.push(outcome.query);
      })(),
    ).rejects.toBeInstanceOf(NetintelError);
    expect(seen).toEqual(['192.0.2.1']);
  });

  it('refuses a window that is not a positive whole number', async () => {
    await expect(collect([], 0)).rejects.toMatchObject({ code: 'usage' });
  });
});
