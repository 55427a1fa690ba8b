/**
 * Hostile input for the RPKI dataset: any JSON (or not) given to the VRP
 * export parser is a parsed set or a `data_unavailable` refusal, never
 * another exception; any change to a compiled index (cut short, bytes
 * changed) is refused with `data_unavailable` when opened, verified or
 * searched, never a crash or a loop.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRpkiIndex } from '../../../src/engine/rpki/compile-rpki-index.js';
import { RpkiIndex } from '../../../src/engine/rpki/rpki-index.js';
import { routeValidity } from '../../../src/engine/rpki/route-validity.js';
import { parseVrpJson } from '../../../src/engine/rpki/vrp-json.js';
import { expectValueOrNetintelError, fuzz, hostileIp } from '../hostile-inputs.js';

const field = fc.oneof(
  fc.integer({ min: -2, max: 2 ** 33 }),
  fc.double(),
  fc.constantFrom('AS13335', 'as1', 'AS', 'AS-1', '13335', '1.1.1.0/24', '10.0.0.1/8', '::/0', '2001:db8::/129', '1.1.1.0/33', '', null, true, [], {}),
  hostileIp,
  fc.string({ maxLength: 12 }),
);
const entry = fc.oneof(
  fc.record({ asn: field, prefix: field, maxLength: field, ta: field }, { requiredKeys: [] }),
  fc.anything({ maxDepth: 2 }),
);
const exportText = fc.oneof(
  fc.record({ roas: fc.array(entry, { maxLength: 6 }), metadata: fc.anything({ maxDepth: 2 }) }, { requiredKeys: ['roas'] }).map((doc) => JSON.stringify(doc)),
  fc.anything({ maxDepth: 3 }).map((value) => JSON.stringify(value) ?? ''),
  fc.string({ maxLength: 60 }),
);

describe('the VRP export parser under hostile input', () => {
  it('parses or refuses with data_unavailable', () => {
    fc.assert(
      fc.property(exportText, (text) => expectValueOrNetintelError(() => parseVrpJson(text), ['data_unavailable'])),
      fuzz(1000),
    );
  });
});

const SET = parseVrpJson(
  JSON.stringify({
    roas: [
      { asn: 15169, prefix: '8.8.8.0/24', maxLength: 24, ta: 'arin' },
      { asn: 64500, prefix: '10.0.0.0/8', maxLength: 16, ta: 'ripe' },
      { asn: 64501, prefix: '10.1.0.0/16', maxLength: 24, ta: 'ripe' },
      { asn: 64502, prefix: '10.1.2.0/24', ta: 'ripe' },
      { asn: 0, prefix: '192.0.2.0/24', ta: 'iana' },
      { asn: 15169, prefix: '2001:4860::/32', maxLength: 48, ta: 'arin' },
      { asn: 64496, prefix: '2001:db8::/32', ta: 'ripe' },
    ],
  }),
).vrps;
const GOOD = compileRpkiIndex(SET, { builtAt: new Date(0), updated: null, source: null }).bytes;
const ROUTES: Array<[string, number]> = [['8.8.8.0/24', 15169], ['10.1.2.0/24', 64502], ['10.1.2.0/25', 64501], ['192.0.2.0/24', 1], ['2001:4860:4860::/48', 15169], ['2001:db8::/32', 1]];

describe('a damaged RPKI index', () => {
  it('opens, verifies and answers, or says data_unavailable', () => {
    const damaged = fc.oneof(
      fc.integer({ min: 0, max: GOOD.length - 1 }).map((length) => GOOD.subarray(0, length)),
      fc.array(fc.tuple(fc.integer({ min: 0, max: GOOD.length - 1 }), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }).map((changes) => {
        const bytes = Buffer.from(GOOD);
        for (const [at, value] of changes) bytes[at] = value;
        return bytes;
      }),
    );
    fc.assert(
      fc.property(damaged, (bytes) => {
        expectValueOrNetintelError(() => {
          const index = RpkiIndex.fromBytes('damaged.idx', bytes);
          for (const [route, origin] of ROUTES) routeValidity(index, route, origin);
          index.verify();
        }, ['data_unavailable']);
      }),
      fuzz(1000),
    );
  });

  it('answers as compiled when undamaged', () => {
    const index = RpkiIndex.fromBytes('good.idx', GOOD);
    index.verify();
    expect(ROUTES.map(([route, origin]) => routeValidity(index, route, origin).status)).toEqual(['valid', 'valid', 'invalid', 'invalid', 'valid', 'invalid']);
  });
});
