/**
 * Property-based tests of what `netintel tls` reads from outside: the
 * targets a user or an API caller gives, the LDAP server's answer to
 * StartTLS, and the certificates a server presents (their signature
 * algorithm, embedded SCT list and constraints on their use) and the OCSP
 * response it staples (test/interop/ocsp-openssl.test.ts changes real ones). No input may make them throw anything
 * but the errors they declare, and what they accept reads back.
 */
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NetintelError } from '../../../src/errors.js';
import { certificateConstraints, certificateFields, countEmbeddedScts } from '../../../src/engine/tls/certificate-details.js';
import { PreambleError, readLdapExtendedResult } from '../../../src/engine/tls/starttls.js';
import { judgeStapledOcsp } from '../../../src/engine/tls/stapled-ocsp.js';
import { parseTlsTarget } from '../../../src/engine/tls/tls-target.js';
import { createCertificateAuthority, issueCertificate } from '../../support/smtp-servers.js';
import { fuzz } from '../hostile-inputs.js';

const bytes = fc.uint8Array({ minLength: 0, maxLength: 300 });

/** Any bytes, or the certificate `der` with up to 8 of its bytes changed. */
function bytesOrChanged(der: Buffer): fc.Arbitrary<Uint8Array> {
  const changed = fc.array(fc.tuple(fc.nat({ max: der.length - 1 }), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }).map((changes) => {
    const copy = Buffer.from(der);
    for (const [at, value] of changes) copy[at] = value;
    return copy;
  });
  return fc.oneof(bytes, changed);
}

describe('parseTlsTarget', () => {
  it('returns a host and a port in range, or throws invalid_input, for any text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.tuple(fc.domain(), fc.integer({ min: -5, max: 70000 })).map(([host, port]) => `${host}:${port}`)), (text) => {
        try {
          const target = parseTlsTarget(text, 443);
          expect(target.port).toBeGreaterThanOrEqual(1);
          expect(target.port).toBeLessThanOrEqual(65535);
          expect(target.host).not.toMatch(/[\s<>'"&/\u0000-\u001f]/);
        } catch (error) {
          expect(error).toBeInstanceOf(NetintelError);
          expect((error as NetintelError).code).toBe('invalid_input');
        }
      }),
      fuzz(3000),
    );
  });

  it('reads host:port, [v6]:port and a bare IPv6 address', () => {
    fc.assert(
      fc.property(fc.domain(), fc.integer({ min: 1, max: 65535 }), (host, port) => {
        expect(parseTlsTarget(`${host}:${port}`, 443)).toEqual({ host, isIp: false, port });
      }),
      fuzz(500),
    );
    expect(parseTlsTarget('[2001:db8::1]:8443', 443)).toEqual({ host: '2001:db8::1', isIp: true, port: 8443 });
    expect(parseTlsTarget('2001:db8::1', 993)).toEqual({ host: '2001:db8::1', isIp: true, port: 993 });
    expect(parseTlsTarget('192.0.2.1', 25)).toEqual({ host: '192.0.2.1', isIp: true, port: 25 });
  });
});

describe('readLdapExtendedResult', () => {
  it('needs more bytes, returns a code and the bytes used, or throws a PreambleError, for any bytes', () => {
    fc.assert(
      fc.property(bytes, (input) => {
        try {
          const read = readLdapExtendedResult(input);
          if (read !== null) {
            expect(read.used).toBeGreaterThan(0);
            expect(read.used).toBeLessThanOrEqual(input.length);
            expect(read.value).toBeGreaterThanOrEqual(0);
          }
        } catch (error) {
          expect(error).toBeInstanceOf(PreambleError);
        }
      }),
      fuzz(5000),
    );
  });

  it('reads the resultCode of an ExtendedResponse however it is cut, and waits for the rest', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 1, max: 127 }), fc.uint8Array({ maxLength: 20 }), (code, id, trailing) => {
        const message = Buffer.from([0x30, 0x0c, 0x02, 0x01, id, 0x78, 0x07, 0x0a, 0x01, code, 0x04, 0x00, 0x04, 0x00]);
        for (let cut = 0; cut < message.length; cut++) expect(readLdapExtendedResult(message.subarray(0, cut))).toBeNull();
        expect(readLdapExtendedResult(Buffer.concat([message, trailing]))).toEqual({ value: code, used: message.length });
      }),
      fuzz(500),
    );
  });
});

describe('certificate fields', () => {
  it('countEmbeddedScts counts a well-formed list and gives 0 for anything else', () => {
    const sct = fc.uint8Array({ minLength: 1, maxLength: 60 });
    fc.assert(
      fc.property(fc.array(sct, { maxLength: 6 }), (scts) => {
        const entries = Buffer.concat(scts.map((each) => Buffer.concat([Buffer.from([each.length >> 8, each.length & 0xff]), each])));
        const list = Buffer.concat([Buffer.from([entries.length >> 8, entries.length & 0xff]), entries]);
        const value = Buffer.from(AsnConvert.serialize(new OctetString(list)));
        expect(countEmbeddedScts(value)).toBe(scts.length);
      }),
      fuzz(500),
    );
    fc.assert(
      fc.property(bytes, (input) => {
        expect(countEmbeddedScts(input)).toBeGreaterThanOrEqual(0);
      }),
      fuzz(3000),
    );
  });

  it('certificateFields never throws on any bytes, a certificate with some of its bytes changed included', () => {
    const der = Buffer.from(issueCertificate({ commonName: 'fuzz.example', issuer: createCertificateAuthority() }).x509.raw);
    expect(certificateFields(der)).toEqual({ signatureAlgorithm: 'ecdsa-with-SHA256', embeddedScts: 0 });
    fc.assert(
      fc.property(bytesOrChanged(der), (input) => {
        const fields = certificateFields(input);
        expect(typeof fields.signatureAlgorithm).toBe('string');
        expect(fields.embeddedScts).toBeGreaterThanOrEqual(0);
      }),
      fuzz(2000),
    );
  });

  it('certificateConstraints reads a CA and a server certificate, and never throws on any bytes or a changed certificate', () => {
    const ca = createCertificateAuthority();
    const der = Buffer.from(issueCertificate({ commonName: 'fuzz.example', issuer: ca }).x509.raw);
    // KeyUsageFlags: keyCertSign 32 | cRLSign 64; serverAuth (RFC 5280 §4.2.1.12).
    expect(certificateConstraints(ca.x509.raw)).toEqual({ v1: false, basicConstraints: { ca: true, pathLength: null }, keyUsage: 96, extendedKeyUsage: null });
    expect(certificateConstraints(der)).toEqual({ v1: false, basicConstraints: { ca: false, pathLength: null }, keyUsage: null, extendedKeyUsage: ['1.3.6.1.5.5.7.3.1'] });
    fc.assert(
      fc.property(bytesOrChanged(der), (input) => {
        const constraints = certificateConstraints(input);
        if (constraints === null) return;
        expect(constraints.keyUsage === null || Number.isInteger(constraints.keyUsage)).toBe(true);
        expect(constraints.extendedKeyUsage === null || constraints.extendedKeyUsage.every((oid) => typeof oid === 'string')).toBe(true);
      }),
      fuzz(2000),
    );
  });

  it('judgeStapledOcsp reads any bytes as an invalid response, never an exception', () => {
    const ca = createCertificateAuthority();
    const leaf = issueCertificate({ commonName: 'ocsp.example', issuer: ca }).x509;
    fc.assert(
      fc.property(bytes, fc.boolean(), (input, withIssuer) => {
        const verdict = judgeStapledOcsp(input, leaf, withIssuer ? ca.x509 : null, new Date());
        expect(verdict.status).toBe('invalid');
        expect(typeof verdict.reason).toBe('string');
      }),
      fuzz(2000),
    );
  });
});
