/**
 * The pieces of denial of existence that the signed-zone tests reach only
 * indirectly: the NSEC3 hash against RFC 5155 Appendix A, base32hex, type
 * bit maps, and canonical name order (RFC 4034 §6.1).
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { base32hexDecode, nsec3Hash } from '../../../src/engine/dns/dnssec/denial.js';
import { readTypeBitmap } from '../../../src/engine/dns/dnssec/dnssec-records.js';
import { compareNames, parseName, presentName } from '../../../src/engine/dns/dnssec/wire.js';

describe('NSEC3 hashing (RFC 5155 Appendix A: salt aabbccdd, 12 iterations)', () => {
  it.each([
    ['example', '0p9mhaveqvm6t7vbl5lop2u3t2rp3tom'],
    ['a.example', '35mthgpgcu1qg68fab165klnsnk3dpvl'],
    ['ai.example', 'gjeqe526plbf1g8mklp59enfd789njgi'],
    ['*.w.example', 'r53bq7cc2uvmubfu5ocmm6pers9tk9en'],
  ])('%s hashes to %s', (name, hash) => {
    expect(nsec3Hash(parseName(name), Buffer.from('aabbccdd', 'hex'), 12)).toEqual(base32hexDecode(hash));
  });

  it('hashes names case-insensitively', () => {
    expect(nsec3Hash(parseName('A.EXAMPLE'), Buffer.from('aabbccdd', 'hex'), 12)).toEqual(base32hexDecode('35mthgpgcu1qg68fab165klnsnk3dpvl'));
  });
});

describe('type bit maps (RFC 4034 §4.1.2)', () => {
  it('reads the example of RFC 4034 §4.3: A MX RRSIG NSEC TYPE1234', () => {
    const bitmap = Buffer.from('0006400100000003041b000000000000000000000000000000000000000000000000000020', 'hex');
    expect([...readTypeBitmap(bitmap)]).toEqual([1, 15, 46, 47, 1234]);
  });

  it('refuses a window longer than 32 octets or cut short', () => {
    expect(() => readTypeBitmap(Buffer.from('0021', 'hex'))).toThrow();
    expect(() => readTypeBitmap(Buffer.from('000240', 'hex'))).toThrow();
  });
});

describe('canonical name order (RFC 4034 §6.1)', () => {
  it('sorts the example of the RFC', () => {
    const names = ['example', 'a.example', 'yljkjljk.a.example', 'Z.a.example', 'zABC.a.EXAMPLE', 'z.example', '\\001.z.example', '*.z.example', '\\200.z.example'];
    const shuffled = [...names].reverse().map(parseName);
    expect(shuffled.sort(compareNames).map(presentName)).toEqual(names.map((name) => presentName(parseName(name))));
  });

  it('is a total order that ignores ASCII case (property)', () => {
    const label = fc.uint8Array({ minLength: 1, maxLength: 6 }).map((bytes) => Buffer.from(bytes));
    const name = fc.array(label, { maxLength: 4 });
    fc.assert(
      fc.property(name, name, (a, b) => {
        expect(Math.sign(compareNames(a, b)) + Math.sign(compareNames(b, a))).toBe(0);
        const upper = a.map((l) => Buffer.from([...l].map((o) => (o >= 0x61 && o <= 0x7a ? o - 0x20 : o))));
        expect(compareNames(a, upper)).toBe(0);
      }),
    );
  });
});
