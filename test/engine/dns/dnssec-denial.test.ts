/**
 * The pieces of denial of existence that the signed-zone tests reach only
 * indirectly: the NSEC3 hash against RFC 5155 Appendix A, base32hex, type
 * bit maps, canonical name order (RFC 4034 §6.1), and the NSEC3 rules for
 * opt-out spans and iteration counts on a hand-built chain.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { base32hexDecode, nsec3Hash, proveDenial, proveExpansion } from '../../../src/engine/dns/dnssec/denial.js';
import type { SignedRrset } from '../../../src/engine/dns/dnssec/rrset.js';
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

describe('NSEC3 proofs of a wildcard answer and of NXDOMAIN (RFC 5155 §8.4, §8.8, §9.2; RFC 9276 §3.2)', () => {
  // A zone with the apex, *.wild and real.wild; x.wild.z. is answered from the wildcard, nx.z. does not exist.
  const zone = parseName('z.');
  const names = ['z.', 'wild.z.', '*.wild.z.', 'real.wild.z.'].map(parseName);

  function chain(flags: number, iterations: number): SignedRrset[] {
    const salt = Buffer.from('ab', 'hex');
    const hashes = names.map((name) => nsec3Hash(name, salt, iterations)).sort(Buffer.compare);
    return hashes.map((hash, i) => {
      const next = hashes[(i + 1) % hashes.length]!;
      const rdata = Buffer.concat([Buffer.from([1, flags, iterations >> 8, iterations & 0xff, salt.length]), salt, Buffer.from([next.length]), next, Buffer.from('000140', 'hex')]);
      const owner = [Buffer.from(base32hex(hash)), ...zone];
      return { owner, type: 50, records: [{ owner, type: 50, klass: 1, ttl: 300, rdata }], signatures: [] };
    });
  }

  it('proves the next closer name of a wildcard answer absent, unless its span is opt-out or the iterations are above 150', () => {
    const nextCloser = parseName('x.wild.z.');
    expect(proveExpansion(chain(0, 0), nextCloser)).toEqual({ kind: 'absent' });
    expect(proveExpansion(chain(1, 0), nextCloser)).toEqual({ kind: 'opt-out', nextCloser });
    expect(proveExpansion(chain(0, 200), nextCloser)).toEqual({ kind: 'too-many-iterations', iterations: 200 });
    expect(proveExpansion(chain(0, 150), nextCloser)).toEqual({ kind: 'absent' });
  });

  it('proves NXDOMAIN, and only an opt-out span (not a proof) when the next closer name lies in one', () => {
    expect(proveDenial(chain(0, 0), parseName('x.real.wild.z.'), 1, true)).toEqual({ kind: 'nxdomain' });
    expect(proveDenial(chain(1, 0), parseName('x.real.wild.z.'), 1, true)).toEqual({ kind: 'opt-out', nextCloser: parseName('x.real.wild.z.') });
    expect(proveDenial(chain(1, 0), parseName('real.wild.z.'), 28, false)).toEqual({ kind: 'nodata' });
  });
});

function base32hex(bytes: Buffer): string {
  const alphabet = '0123456789abcdefghijklmnopqrstuv';
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += alphabet[(buffer >> bits) & 31];
    }
  }
  return bits > 0 ? out + alphabet[(buffer << (5 - bits)) & 31] : out;
}
