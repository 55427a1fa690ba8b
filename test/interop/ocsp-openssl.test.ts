/**
 * Stapled OCSP responses against OpenSSL: responses made by `openssl ocsp`
 * as a responder (good, revoked, unknown; signed by the issuer, by a
 * delegated responder with and without id-kp-OCSPSigning or past its
 * validity, by another CA;
 * with and without the signer's certificate; CertIDs hashed with SHA-1 and
 * SHA-256) are judged by judgeStapledOcsp and by `openssl ocsp -respin`,
 * which must agree. Bytes that are no response, or a response with bytes
 * changed, are invalid, never an exception.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BasicOCSPResponse, OCSPResponse } from '@peculiar/asn1-ocsp';
import { AsnConvert } from '@peculiar/asn1-schema';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { judgeStapledOcsp } from '../../src/engine/tls/stapled-ocsp.js';
import { fuzz } from '../engine/hostile-inputs.js';

const OPENSSL = spawnSync('openssl', ['version'], { encoding: 'utf8' }).status === 0;
if (!OPENSSL) console.warn('SKIPPING test/interop/ocsp-openssl.test.ts: openssl (Debian package openssl) not found');

const DAY_MS = 86_400_000;

describe.skipIf(!OPENSSL)('stapled OCSP verdicts agree with OpenSSL', () => {
  const dir = OPENSSL ? mkdtempSync(join(tmpdir(), 'netintel-ocsp-')) : '';
  const at = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] }).toString();

  /** A P-256 key and a certificate: self-signed when `issuer` is null. */
  function certificate(name: string, subject: string, issuer: string | null, extensions: string[], days = 100): void {
    writeFileSync(at(`${name}.ext`), `${extensions.join('\n')}\n`);
    openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', at(`${name}.key`));
    openssl('req', '-new', '-key', at(`${name}.key`), '-subj', subject, '-out', at(`${name}.csr`));
    const signer = issuer === null ? ['-signkey', at(`${name}.key`)] : ['-CA', at(`${issuer}.pem`), '-CAkey', at(`${issuer}.key`)];
    openssl('x509', '-req', '-in', at(`${name}.csr`), ...signer, '-set_serial', name === 'leaf' ? '0x1234' : String(Math.floor(Math.random() * 1e9)), '-days', String(days), '-extfile', at(`${name}.ext`), '-out', at(`${name}.pem`));
  }

  const CA = ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,cRLSign'];
  const INDEX: Record<string, string> = {
    good: 'V\t301231235959Z\t\t1234\tunknown\t/CN=ocsp.test\n',
    revoked: 'R\t301231235959Z\t251101000000Z,keyCompromise\t1234\tunknown\t/CN=ocsp.test\n',
    unknown: 'V\t301231235959Z\t\t9999\tunknown\t/CN=other.test\n',
  };

  /** Each response: its index (the status), its signer, and openssl ocsp's other options. */
  const RESPONSES: Record<string, { index: string; signer: string; options?: string[] }> = {
    good: { index: 'good', signer: 'ca' },
    revoked: { index: 'revoked', signer: 'ca' },
    unknown: { index: 'unknown', signer: 'ca' },
    delegated: { index: 'revoked', signer: 'responder' },
    delegatedWithoutPurpose: { index: 'good', signer: 'plainResponder' },
    delegatedWithoutItsCertificate: { index: 'good', signer: 'responder', options: ['-resp_no_certs'] },
    lapsedDelegate: { index: 'good', signer: 'lapsedResponder' },
    otherCa: { index: 'good', signer: 'otherCa' },
    sha256CertId: { index: 'revoked', signer: 'ca', options: ['-sha256'] },
    byKeyId: { index: 'good', signer: 'responder', options: ['-resp_key_id'] },
  };

  let leaf: X509Certificate;
  let issuer: X509Certificate;
  const der: Record<string, Buffer> = {};

  beforeAll(() => {
    certificate('ca', '/CN=ocsp ca', null, CA);
    certificate('otherCa', '/CN=another ca', null, CA);
    certificate('leaf', '/CN=ocsp.test', 'ca', ['subjectAltName=DNS:ocsp.test', 'extendedKeyUsage=serverAuth']);
    certificate('responder', '/CN=ocsp responder', 'ca', ['extendedKeyUsage=OCSPSigning']);
    certificate('plainResponder', '/CN=plain responder', 'ca', ['extendedKeyUsage=serverAuth']);
    certificate('lapsedResponder', '/CN=lapsed responder', 'ca', ['extendedKeyUsage=OCSPSigning'], -1);
    for (const [name, text] of Object.entries(INDEX)) writeFileSync(at(`${name}.txt`), text);
    for (const [name, made] of Object.entries(RESPONSES)) {
      openssl('ocsp', '-index', at(`${made.index}.txt`), '-rsigner', at(`${made.signer}.pem`), '-rkey', at(`${made.signer}.key`), '-CA', at('ca.pem'), ...(made.options ?? []), '-issuer', at('ca.pem'), '-cert', at('leaf.pem'), '-respout', at(`${name}.der`), '-ndays', '1');
      der[name] = readFileSync(at(`${name}.der`));
    }
    leaf = new X509Certificate(readFileSync(at('leaf.pem')));
    issuer = new X509Certificate(readFileSync(at('ca.pem')));
  }, 60_000);

  /** OpenSSL's verdict: the status it reads, or invalid when the response does not verify. */
  function theirs(name: string): string {
    const digest = RESPONSES[name]?.options?.includes('-sha256') ? ['-sha256'] : [];
    const run = spawnSync('openssl', ['ocsp', '-respin', at(`${name}.der`), ...digest, '-issuer', at('ca.pem'), '-cert', at('leaf.pem'), '-CAfile', at('ca.pem'), '-no_nonce'], { encoding: 'utf8' });
    const output = `${run.stdout}${run.stderr}`;
    if (!/Response verify OK/.test(output)) return 'invalid';
    return /leaf\.pem: (good|revoked|unknown)/.exec(output)?.[1] ?? 'invalid';
  }

  const expected: Record<string, string> = {
    good: 'good',
    revoked: 'revoked',
    unknown: 'unknown',
    delegated: 'revoked',
    delegatedWithoutPurpose: 'invalid',
    delegatedWithoutItsCertificate: 'invalid',
    lapsedDelegate: 'invalid',
    otherCa: 'invalid',
    sha256CertId: 'revoked',
    byKeyId: 'good',
  };
  for (const [name, status] of Object.entries(expected)) {
    it(`${name}: ${status}, as OpenSSL says`, () => {
      const ours = judgeStapledOcsp(der[name]!, leaf, issuer, new Date());
      expect({ netintel: ours.status, openssl: theirs(name) }, ours.reason ?? '').toEqual({ netintel: status, openssl: status });
    });
  }

  it('reads the revocation and the update times', () => {
    const ours = judgeStapledOcsp(der.revoked!, leaf, issuer, new Date());
    expect(ours).toMatchObject({ status: 'revoked', revoked_at: '2025-11-01T00:00:00.000Z', revocation_reason: 'keyCompromise', reason: null });
    expect(Date.parse(ours.next_update!) - Date.parse(ours.this_update!)).toBe(DAY_MS);
  });

  it('calls a response past its nextUpdate, or before its thisUpdate, invalid (RFC 6960 §3.2), with five minutes of clock skew', () => {
    const { this_update: thisUpdate, next_update: nextUpdate } = judgeStapledOcsp(der.good!, leaf, issuer, new Date());
    const atTime = (ms: number) => judgeStapledOcsp(der.good!, leaf, issuer, new Date(ms));
    expect(atTime(Date.parse(nextUpdate!) + 4 * 60_000).status).toBe('good');
    expect(atTime(Date.parse(nextUpdate!) + 6 * 60_000)).toMatchObject({ status: 'invalid', reason: expect.stringMatching(/expired/) });
    expect(atTime(Date.parse(thisUpdate!) - 6 * 60_000)).toMatchObject({ status: 'invalid', reason: expect.stringMatching(/not valid before/) });
  });

  it('cannot check a response without the issuer, and says so', () => {
    expect(judgeStapledOcsp(der.good!, leaf, null, new Date())).toMatchObject({ status: 'unchecked', reason: expect.stringMatching(/issuer/) });
  });

  it('finds no status for another certificate in the response', () => {
    const other = new X509Certificate(readFileSync(at('responder.pem')));
    expect(judgeStapledOcsp(der.good!, other, issuer, new Date())).toMatchObject({ status: 'invalid', reason: expect.stringMatching(/no status for this certificate/) });
  });

  it('never throws on any bytes or a response with bytes changed; a change to what the responder signed, or to its signature, is never read as a status', () => {
    const original = der.good!;
    const basic = AsnConvert.parse(AsnConvert.parse(original, OCSPResponse).responseBytes!.response.buffer, BasicOCSPResponse);
    const signedFrom = original.indexOf(Buffer.from(basic.tbsResponseDataRaw!));
    const signatureEnd = original.indexOf(Buffer.from(basic.signature)) + basic.signature.byteLength;
    expect(signedFrom).toBeGreaterThan(0);
    const changed = (from: number, to: number) =>
      fc.array(fc.tuple(fc.integer({ min: from, max: to - 1 }), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 4 }).map((changes) => {
        const copy = Buffer.from(original);
        for (const [position, flip] of changes) copy[position]! ^= flip;
        return copy;
      });
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 400 }), changed(0, original.length)), (bytes) => {
        expect(['good', 'revoked', 'unknown', 'invalid']).toContain(judgeStapledOcsp(bytes, leaf, issuer, new Date()).status);
      }),
      fuzz(500),
    );
    fc.assert(
      fc.property(changed(signedFrom, signatureEnd), (bytes) => {
        expect(judgeStapledOcsp(bytes, leaf, issuer, new Date()).status).toBe('invalid');
      }),
      fuzz(500),
    );
  });
});
