/**
 * Route-origin validation (RFC 6811 §2) over the compiled RPKI index: a
 * hand-made ROA set against hand-computed answers (maxLength edges, absent
 * maxLength, overlapping ROAs, AS0, IPv6), and the index's answers against a
 * naive scan of random ROA sets.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRpkiIndex } from '../../../src/engine/rpki/compile-rpki-index.js';
import { RpkiIndex } from '../../../src/engine/rpki/rpki-index.js';
import { routeKeyOf, routeValidity, type RpkiValidity } from '../../../src/engine/rpki/route-validity.js';
import { parseVrpJson, type Vrp } from '../../../src/engine/rpki/vrp-json.js';

const EXPORT = {
  metadata: { buildtime: '2026-11-29T12:00:00Z' },
  roas: [
    { asn: 'AS15169', prefix: '8.8.8.0/24', maxLength: 24, ta: 'arin' },
    { asn: 13335, prefix: '1.1.1.0/24', ta: 'apnic' }, // no maxLength: /24 only
    { asn: 64500, prefix: '10.0.0.0/8', maxLength: 16, ta: 'ripe' },
    { asn: 64501, prefix: '10.1.0.0/16', maxLength: 24, ta: 'ripe' },
    { asn: 64502, prefix: '10.1.0.0/16', maxLength: 16, ta: 'ripe' },
    { asn: 0, prefix: '192.0.2.0/24', maxLength: 32, ta: 'iana' },
    { asn: 0, prefix: '198.51.100.0/24', maxLength: 24, ta: 'iana' },
    { asn: 64510, prefix: '198.51.100.0/24', maxLength: 25, ta: 'arin' },
    { asn: 'AS15169', prefix: '2001:4860::/32', maxLength: 48, ta: 'arin' },
    { asn: 'as64496', prefix: '2001:db8::/32', ta: 'ripe' },
  ],
};

function indexOf(vrps: readonly Vrp[]): RpkiIndex {
  const compiled = compileRpkiIndex(vrps, { builtAt: new Date(0), updated: null, source: null });
  const index = RpkiIndex.fromBytes('test.idx', compiled.bytes);
  index.verify();
  return index;
}

const index = indexOf(parseVrpJson(JSON.stringify(EXPORT)).vrps);
const check = (route: string, origin: number): RpkiValidity => routeValidity(index, route, origin);
const summary = (route: string, origin: number) => {
  const answer = check(route, origin);
  return [answer.status, answer.reason, answer.vrps.filter((vrp) => vrp.matches).map((vrp) => `${vrp.prefix}-${vrp.max_length} AS${vrp.asn}`)];
};

describe('route-origin validation', () => {
  it('a route exactly at the ROA, maxLength equal to its length, is valid', () => {
    expect(check('8.8.8.0/24', 15169)).toEqual({
      status: 'valid',
      reason: null,
      route: '8.8.8.0/24',
      origin_asn: 15169,
      vrps: [{ asn: 15169, prefix: '8.8.8.0/24', max_length: 24, ta: 'arin', matches: true }],
    });
  });

  it('one more than maxLength is invalid for exceeding it', () => {
    expect(summary('8.8.8.0/25', 15169)).toEqual(['invalid', 'max_length_exceeded', []]);
    expect(summary('8.8.8.128/25', 15169)).toEqual(['invalid', 'max_length_exceeded', []]);
  });

  it('an absent maxLength is the prefix length', () => {
    expect(summary('1.1.1.0/24', 13335)).toEqual(['valid', null, ['1.1.1.0/24-24 AS13335']]);
    expect(summary('1.1.1.0/25', 13335)).toEqual(['invalid', 'max_length_exceeded', []]);
  });

  it('the wrong origin is invalid, not authorised', () => {
    expect(summary('8.8.8.0/24', 64500)).toEqual(['invalid', 'origin_not_authorised', []]);
  });

  it('a route less specific than every ROA is not found', () => {
    expect(summary('8.8.0.0/16', 15169)).toEqual(['not_found', null, []]);
    expect(summary('9.0.0.0/8', 15169)).toEqual(['not_found', null, []]);
  });

  it('among overlapping ROAs, any one matching makes the route valid', () => {
    // 10.1.2.0/24 is covered by 10.0.0.0/8 (AS64500, max 16), 10.1.0.0/16 (AS64501 max 24, AS64502 max 16).
    expect(summary('10.1.2.0/24', 64501)).toEqual(['valid', null, ['10.1.0.0/16-24 AS64501']]);
    expect(check('10.1.2.0/24', 64501).vrps).toHaveLength(3);
    expect(summary('10.1.2.0/24', 64502)).toEqual(['invalid', 'max_length_exceeded', []]);
    expect(summary('10.1.0.0/16', 64500)).toEqual(['valid', null, ['10.0.0.0/8-16 AS64500']]);
    expect(summary('10.2.0.0/16', 64500)).toEqual(['valid', null, ['10.0.0.0/8-16 AS64500']]);
    expect(summary('10.2.3.0/24', 64500)).toEqual(['invalid', 'max_length_exceeded', []]);
    expect(summary('10.2.3.0/24', 64999)).toEqual(['invalid', 'origin_not_authorised', []]);
  });

  it('an AS0 ROA covers but never matches, even a route of origin 0', () => {
    expect(summary('192.0.2.0/24', 64500)).toEqual(['invalid', 'origin_not_authorised', []]);
    expect(summary('192.0.2.0/24', 0)).toEqual(['invalid', 'origin_not_authorised', []]);
    // Another ROA for the same prefix still validates its own AS.
    expect(summary('198.51.100.0/25', 64510)).toEqual(['valid', null, ['198.51.100.0/24-25 AS64510']]);
    expect(summary('198.51.100.0/26', 64510)).toEqual(['invalid', 'max_length_exceeded', []]);
  });

  it('IPv6 routes', () => {
    expect(summary('2001:4860:4860::/48', 15169)).toEqual(['valid', null, ['2001:4860::/32-48 AS15169']]);
    expect(summary('2001:4860:4860::/64', 15169)).toEqual(['invalid', 'max_length_exceeded', []]);
    expect(summary('2001:db8::/32', 64496)).toEqual(['valid', null, ['2001:db8::/32-32 AS64496']]);
    expect(summary('2001:db9::/32', 64496)).toEqual(['not_found', null, []]);
    // An IPv4 ROA never covers an IPv6 route.
    expect(summary('::/0', 15169)).toEqual(['not_found', null, []]);
  });

  it('without a dataset the answer is unknown', () => {
    expect(routeValidity(null, '8.8.8.0/24', 15169)).toMatchObject({ status: 'unknown', reason: 'no_dataset', vrps: [] });
  });
});

describe('the VRP export parser', () => {
  it('reads the export date of rpki-client and of Routinator', () => {
    expect(parseVrpJson(JSON.stringify(EXPORT)).generated).toBe('2026-11-29T12:00:00Z');
    expect(parseVrpJson(JSON.stringify({ metadata: { generated: 1_700_000_000 }, roas: [] })).generated).toBe('2023-11-14T22:13:20Z');
  });

  it.each([
    ['not JSON', '{"roas": [', /not JSON/],
    ['no roas', '{"vrps": []}', /no "roas" array/],
    ['host bits', '{"roas": [{"asn": 1, "prefix": "10.0.0.1/8"}]}', /roas\[0\]: "prefix" has host bits set/],
    ['maxLength below the prefix', '{"roas": [{"asn": 1, "prefix": "10.0.0.0/16", "maxLength": 8}]}', /"maxLength" must be a whole number from 16 to 32/],
    ['maxLength over the width', '{"roas": [{"asn": 1, "prefix": "2001:db8::/32", "maxLength": 129}]}', /from 32 to 128/],
    ['AS over 32 bits', '{"roas": [{"asn": 4294967296, "prefix": "10.0.0.0/8"}]}', /"asn" is not an AS number/],
    ['AS text', '{"roas": [{"asn": "ASX", "prefix": "10.0.0.0/8"}]}', /"asn" is not an AS number/],
    ['no prefix length', '{"roas": [{"asn": 1, "prefix": "10.0.0.0"}]}', /not an address\/length/],
  ])('refuses %s, naming the entry', (_name, text, message) => {
    expect(() => parseVrpJson(text)).toThrow(message);
  });
});

/** The covering payloads by scanning every one, as RFC 6811 §2 defines them. */
function naive(vrps: readonly Vrp[], route: string, origin: number): [string, string | null, number] {
  const key = routeKeyOf(route)!;
  const width = key.version === 4 ? 32 : 128;
  const covering = vrps.filter(
    (vrp) => vrp.version === key.version && vrp.length <= key.length && BigInt(key.start) >> BigInt(width - vrp.length) === BigInt(vrp.start) >> BigInt(width - vrp.length),
  );
  const distinct = new Set(covering.map((vrp) => `${vrp.start}/${vrp.length} ${vrp.asn} ${vrp.maxLength}`)).size;
  if (covering.length === 0) return ['not_found', null, 0];
  if (covering.some((vrp) => vrp.asn !== 0 && vrp.asn === origin && key.length <= vrp.maxLength)) return ['valid', null, distinct];
  return ['invalid', covering.some((vrp) => vrp.asn === origin && origin !== 0) ? 'max_length_exceeded' : 'origin_not_authorised', distinct];
}

describe('the compiled index against a naive scan', () => {
  // Few values per field, so that random prefixes nest, repeat and overlap.
  const v4Prefix = fc.tuple(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 0, max: 8 })).map(([top, length]) => {
    const start = length === 0 ? 0 : ((top << 28) >>> 0) & ~((2 ** (32 - length) - 1) >>> 0);
    return { version: 4 as const, start: start >>> 0, length: length === 0 ? 0 : length };
  });
  const v6Prefix = fc.tuple(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 0, max: 8 })).map(([top, length]) => {
    const start = (BigInt(top) << 124n) & ~((1n << BigInt(128 - length)) - 1n);
    return { version: 6 as const, start, length };
  });
  const vrp = fc
    .tuple(fc.oneof(v4Prefix, v6Prefix), fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 3 }), fc.constantFrom('arin', 'ripe', null))
    .map(([prefix, extra, asn, ta]) => ({ ...prefix, maxLength: Math.min(prefix.length + extra, prefix.version === 4 ? 32 : 128), asn, ta }) as Vrp);
  const route = fc.tuple(fc.oneof(v4Prefix, v6Prefix), fc.integer({ min: 0, max: 6 }), fc.integer({ min: 0, max: 0xffff })).map(([prefix, deeper, low]) => {
    const length = prefix.length + deeper;
    if (prefix.version === 4) {
      const start = (prefix.start | ((low << 16) >>> 0 & ((2 ** (32 - prefix.length) - 1) >>> 0))) >>> 0;
      const aligned = length === 0 ? 0 : (start & ~((2 ** (32 - length) - 1) >>> 0)) >>> 0;
      return `${[24, 16, 8, 0].map((shift) => (aligned >>> shift) & 0xff).join('.')}/${length}`;
    }
    const start = (prefix.start | ((BigInt(low) << 108n) & ((1n << BigInt(128 - prefix.length)) - 1n))) & ~((1n << BigInt(128 - length)) - 1n);
    const hex = start.toString(16).padStart(32, '0').match(/.{4}/g)!.join(':');
    return `${hex}/${length}`;
  });

  it('gives the same status, reason and covering payloads', () => {
    fc.assert(
      fc.property(fc.array(vrp, { maxLength: 40 }), fc.array(fc.tuple(route, fc.integer({ min: 0, max: 3 })), { minLength: 1, maxLength: 10 }), (vrps, routes) => {
        const compiled = indexOf(vrps);
        for (const [text, origin] of routes) {
          const answer = routeValidity(compiled, text, origin);
          const [status, reason, covering] = naive(vrps, text, origin);
          expect([answer.status, answer.reason, answer.vrps.length]).toEqual([status, reason, Math.min(covering, 32)]);
        }
      }),
      { numRuns: 300 },
    );
  });
});
