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
import { compareNames, nameWire, parseName, presentName } from '../../../src/engine/dns/dnssec/wire.js';

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

/**
 * Records of a parent zone replayed as the denial of names in its signed
 * child: the parent's NSEC or NSEC3 at the delegation (NS and DS, no SOA)
 * must deny nothing there but the DS, and nothing below it (RFC 6840 §4.1,
 * RFC 5155 §8.3); likewise nothing below a DNAME.
 */
describe('ancestor delegations and DNAMEs in denial proofs (RFC 6840 §4.1, RFC 5155 §8.3)', () => {
  const A = 1, NS = 2, SOA = 6, MX = 15, DNAME = 39, DS = 43, RRSIG = 46, NSEC = 47, DNSKEY = 48;
  // The parent q. (or p.): a signed child c., an unsigned child u., a DNAME at d., data at www.
  const parentTypes = (zone: string): Array<[string, number[]]> => [
    [zone, [NS, SOA, RRSIG, NSEC, DNSKEY]],
    [`c.${zone}`, [NS, DS, RRSIG, NSEC]],
    [`d.${zone}`, [DNAME, RRSIG, NSEC]],
    [`u.${zone}`, [NS, RRSIG, NSEC]],
    [`www.${zone}`, [A, RRSIG, NSEC]],
  ];

  function nsecChain(names: Array<[string, number[]]>): SignedRrset[] {
    const owners = names.map(([name]) => parseName(name)).sort(compareNames);
    return owners.map((owner, i) => {
      const types = names.find(([name]) => compareNames(parseName(name), owner) === 0)![1];
      const next = owners[(i + 1) % owners.length]!;
      return rrset(owner, NSEC, Buffer.concat([nameWire(next), typeBitmap(types)]));
    });
  }

  function nsec3Chain(zone: string, names: Array<[string, number[]]>): SignedRrset[] {
    const salt = Buffer.alloc(0);
    const hashed = names.map(([name, types]) => ({ hash: nsec3Hash(parseName(name), salt, 0), types })).sort((a, b) => Buffer.compare(a.hash, b.hash));
    return hashed.map(({ hash, types }, i) => {
      const next = hashed[(i + 1) % hashed.length]!.hash;
      const rdata = Buffer.concat([Buffer.from([1, 0, 0, 0, 0, next.length]), next, typeBitmap(types)]);
      return rrset([Buffer.from(base32hex(hash)), ...parseName(zone)], 50, rdata);
    });
  }

  const nsecParent = nsecChain(parentTypes('q.'));
  const nsec3Parent = nsec3Chain('p.', parentTypes('p.'));

  it.each([
    ['NSEC', nsecParent, 'c.q.'],
    ['NSEC3', nsec3Parent, 'c.p.'],
  ])('%s: the parent record at a signed delegation denies no type at the child apex but DS', (_, sets, child) => {
    for (const qtype of [MX, SOA, DNSKEY, A]) {
      expect(proveDenial(sets, parseName(child), qtype, false)).toEqual({ kind: 'none', reason: expect.stringMatching(/is the parent side of a delegation, RFC 6840 §4\.1\)$/) });
    }
    expect(proveDenial(sets, parseName(child), DS, false)).toEqual({ kind: 'none', reason: expect.stringMatching(/lists the type/) });
  });

  it.each([
    ['NSEC', nsecParent, 'q.'],
    ['NSEC3', nsec3Parent, 'p.'],
  ])('%s: the parent record at a delegation denies no name below it', (_, sets, zone) => {
    expect(proveDenial(sets, parseName(`www.c.${zone}`), A, true)).toMatchObject({ kind: 'none' });
    expect(proveDenial(sets, parseName(`www.c.${zone}`), A, false)).toMatchObject({ kind: 'none' });
    expect(proveDenial(sets, parseName(`x.www.u.${zone}`), A, true)).toMatchObject({ kind: 'none' });
  });

  it('NSEC3: a closest encloser at a delegation or a DNAME proves nothing below it', () => {
    expect(proveDenial(nsec3Parent, parseName('www.c.p.'), A, true)).toEqual({
      kind: 'none',
      reason: 'denial not proven (the closest encloser c.p. is a delegation: the names below it are in the child zone, RFC 6840 §4.1)',
    });
    expect(proveDenial(nsec3Parent, parseName('x.d.p.'), A, true)).toEqual({
      kind: 'none',
      reason: 'denial not proven (the closest encloser d.p. is a DNAME: the names below it are redirected, RFC 6840 §4.1)',
    });
  });

  it('NSEC: a DNAME denies no name below it', () => {
    expect(proveDenial(nsecParent, parseName('x.d.q.'), A, true)).toMatchObject({ kind: 'none' });
  });

  it.each([
    ['NSEC', nsecParent, 'q.'],
    ['NSEC3', nsec3Parent, 'p.'],
  ])('%s: still proves the DS absent at an unsigned delegation, NODATA at the DNAME owner and at data, and NXDOMAIN beside them', (_, sets, zone) => {
    expect(proveDenial(sets, parseName(`u.${zone}`), DS, false)).toEqual({ kind: 'insecure-delegation' });
    expect(proveDenial(sets, parseName(`www.${zone}`), DS, false)).toEqual({ kind: 'nodata' });
    expect(proveDenial(sets, parseName(`www.${zone}`), MX, false)).toEqual({ kind: 'nodata' });
    expect(proveDenial(sets, parseName(`d.${zone}`), MX, false)).toEqual({ kind: 'nodata' });
    expect(proveDenial(sets, parseName(`nx.${zone}`), A, true)).toEqual({ kind: 'nxdomain' });
  });

  it.each([
    ['NSEC', nsecChain([['c.q.', [NS, SOA, RRSIG, NSEC, DNSKEY]], ['www.c.q.', [A, RRSIG, NSEC]]])],
    ['NSEC3', nsec3Chain('c.p.', [['c.p.', [NS, SOA, RRSIG, NSEC, DNSKEY]], ['www.c.p.', [A, RRSIG, NSEC]]])],
  ])('%s: the child apex record cannot deny the DS, which lives in the parent (RFC 4035 §3.1.4.1); the root has no parent', (kind, sets) => {
    const apex = kind === 'NSEC' ? 'c.q.' : 'c.p.';
    expect(proveDenial(sets, parseName(apex), DS, false)).toEqual({ kind: 'none', reason: expect.stringMatching(/is the child side of a delegation, which cannot deny its DS/) });
    expect(proveDenial(nsecChain([['.', [NS, SOA, RRSIG, NSEC, DNSKEY]], ['q.', [NS, DS, RRSIG, NSEC]]]), [], DS, false)).toEqual({ kind: 'nodata' });
  });

  function rrset(owner: Buffer[], type: number, rdata: Buffer): SignedRrset {
    return { owner, type, records: [{ owner, type, klass: 1, ttl: 300, rdata }], signatures: [] };
  }
});

/** A type bit map (RFC 4034 §4.1.2) of types below 256. */
function typeBitmap(types: readonly number[]): Buffer {
  const bits = Buffer.alloc(32);
  for (const type of types) bits[type >> 3]! |= 0x80 >> (type & 7);
  let length = 32;
  while (length > 0 && bits[length - 1] === 0) length--;
  return Buffer.concat([Buffer.from([0, length]), bits.subarray(0, length)]);
}
