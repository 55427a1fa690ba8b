/**
 * Property-based tests of the TLSA parsers and of matchTlsa: TLSA data
 * and certificate chains come from outside (DNS, the SMTP peer), so no
 * bytes may make them throw, and what they accept reads back the same.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { matchTlsa } from '../../../src/engine/smtp/dane.js';
import { parseTlsaRdata, parseTlsaText, presentTlsa, tlsaFromDecoded, tlsaRecord, type TlsaRecord } from '../../../src/engine/smtp/tlsa-record.js';
import { createCertificateAuthority, issueCertificate, type TestCertificate } from '../../support/smtp-servers.js';
import { fuzz } from '../hostile-inputs.js';

const bytes = fc.uint8Array({ minLength: 0, maxLength: 200 });
const byte = fc.integer({ min: 0, max: 255 });

describe('TLSA parsers on any input', () => {
  it('parseTlsaRdata returns a record or null, and a record keeps the bytes it was made of', () => {
    fc.assert(
      fc.property(bytes, (rdata) => {
        const record = parseTlsaRdata(rdata);
        if (rdata.length < 4) expect(record).toBeNull();
        else expect(record).toMatchObject({ usage: rdata[0], selector: rdata[1], matching_type: rdata[2], data: Buffer.from(rdata.subarray(3)).toString('hex') });
      }),
      fuzz(3000),
    );
  });

  it('parseTlsaText never throws on any text, and reads back its own presentation', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.tuple(byte, byte, byte, fc.uint8Array({ minLength: 1, maxLength: 80 })).map(([u, s, m, d]) => `${u} ${s}  ${m} ${Buffer.from(d).toString('hex')}`)), (text) => {
        const record = parseTlsaText(text);
        if (record) expect(parseTlsaText(presentTlsa(record))).toEqual(record);
      }),
      fuzz(3000),
    );
  });

  it('parseTlsaText takes data split by white space and refuses what is not the presentation format', () => {
    expect(parseTlsaText(' 3 1 1 AB cd\n ef ')).toMatchObject({ usage: 3, selector: 1, matching_type: 1, data: 'abcdef' });
    for (const bad of ['3 1 1', '3 1 1 abc', '3 1 1 zz', '256 1 1 ab', '3 1 x ab', '-3 1 1 ab', `3 1 1 ${' '.repeat(50_000)}x`]) expect(parseTlsaText(bad)).toBeNull();
  });

  it('tlsaFromDecoded accepts only well-typed fields, whatever it is given', () => {
    const field = fc.oneof(byte, fc.integer(), fc.double(), fc.string(), fc.constant(null), fc.constant(undefined));
    fc.assert(
      fc.property(fc.oneof(fc.anything(), bytes, fc.record({ usage: field, selector: field, matching_type: field, certificate: fc.oneof(bytes, fc.string()) })), (data) => {
        const record = tlsaFromDecoded(data);
        if (record) expect(record.data).toMatch(/^([0-9a-f]{2})+$/);
      }),
      fuzz(3000),
    );
  });

  it('a record is unusable unless DANE-TA or DANE-EE, a known selector and matching type, and a digest of the right length', () => {
    fc.assert(
      fc.property(byte, byte, byte, fc.uint8Array({ minLength: 1, maxLength: 70 }), (usage, selector, matching_type, data) => {
        const record = tlsaRecord({ usage, selector, matching_type, data });
        const digestOk = matching_type === 0 || (matching_type === 1 && data.length === 32) || (matching_type === 2 && data.length === 64);
        const usable = (usage === 2 || usage === 3) && selector <= 1 && matching_type <= 2 && digestOk;
        expect(record.unusable === null).toBe(usable);
      }),
      fuzz(3000),
    );
  });
});

describe('matchTlsa on any records and any chain', () => {
  let ca: TestCertificate;
  let leaf: TestCertificate;
  beforeAll(() => {
    ca = createCertificateAuthority();
    leaf = issueCertificate({ commonName: 'mx.example.test', issuer: ca });
  });

  const record = fc.tuple(byte, byte, byte, bytes).map(([usage, selector, matching_type, data]) => tlsaRecord({ usage, selector, matching_type, data }));

  it('random bytes for records and chain never throw, and never match', () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 5 }), fc.array(bytes, { maxLength: 4 }), fc.array(fc.string(), { maxLength: 2 }), (records, chain, names) => {
        const matches = matchTlsa(records, chain, names);
        expect(matches).toHaveLength(records.length);
        // Matching random bytes would mean a SHA-256 collision, or records made from those very bytes.
        for (const match of matches) if (match.matched) expect(match.record.matching_type === 0 && match.record.selector === 0).toBe(true);
      }),
      fuzz(1000),
    );
  });

  it('real certificates mixed with random bytes: a DANE-EE record of the leaf matches only when the leaf comes first', () => {
    const spkiDigest = createHash('sha256').update(leaf.x509.publicKey.export({ type: 'spki', format: 'der' })).digest();
    const eeRecord: TlsaRecord = tlsaRecord({ usage: 3, selector: 1, matching_type: 1, data: spkiDigest });
    const element = fc.oneof(bytes, fc.constant(Buffer.from(leaf.x509.raw)), fc.constant(Buffer.from(ca.x509.raw)));
    fc.assert(
      fc.property(fc.array(element, { maxLength: 4 }), (chain) => {
        const [match] = matchTlsa([eeRecord], chain);
        expect(match!.matched).toBe(chain.length > 0 && Buffer.from(chain[0]!).equals(Buffer.from(leaf.x509.raw)));
      }),
      fuzz(500),
    );
  });

  it('an anchor carried whole in a DANE-TA record (2 0 0, 2 1 0), intact, cut short or with a byte changed, never throws; intact, it anchors the leaf', () => {
    const whole = (selector: number) => (selector === 0 ? Buffer.from(ca.x509.raw) : ca.x509.publicKey.export({ type: 'spki', format: 'der' }));
    const damage = fc.oneof(
      fc.constant({ kind: 'intact' as const }),
      fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('flipped' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
    );
    // What follows the leaf: the CA or not, random bytes anywhere, in any order.
    const rest = fc.array(fc.oneof(bytes, fc.constant(Buffer.from(ca.x509.raw))), { maxLength: 3 });
    fc.assert(
      fc.property(fc.constantFrom(0, 1), damage, rest, (selector, change, after) => {
        const data = Buffer.from(whole(selector));
        const bytesOf = change.kind === 'cut' ? data.subarray(0, change.at % data.length) : data;
        if (change.kind === 'flipped') bytesOf[change.at % bytesOf.length]! ^= 1 << change.bit;
        const [match] = matchTlsa([tlsaRecord({ usage: 2, selector, matching_type: 0, data: bytesOf })], [Buffer.from(leaf.x509.raw), ...after], ['mx.example.test']);
        if (change.kind === 'intact') expect(match).toMatchObject({ matched: true, name_match: true });
        // Cut short, the bytes are no certificate or key, and no certificate of the chain either.
        if (change.kind === 'cut') expect(match!.matched).toBe(false);
      }),
      fuzz(400),
    );
  });
});
