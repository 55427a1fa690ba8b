import fc from 'fast-check';
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readDkimKey } from '../../../src/engine/mail/dkim-key.js';
import { dkimKeyRefusesSignature, looksLikeDkimRecord, parseDkimRecord, readDkimKeyRecord } from '../../../src/engine/mail/dkim-record.js';

describe('DKIM key record parsing (RFC 6376 §3.2, §3.6.1)', () => {
  it('reads every tag, with the defaults for those left out', () => {
    const parsed = parseDkimRecord('v=DKIM1; k=ed25519; h=sha256; s=email; t=y:s; n=rotated 2024; p=MCowBQ==');
    expect(parsed.problems).toEqual([]);
    expect(parsed.record).toEqual({
      tags: [
        { name: 'v', value: 'DKIM1' },
        { name: 'k', value: 'ed25519' },
        { name: 'h', value: 'sha256' },
        { name: 's', value: 'email' },
        { name: 't', value: 'y:s' },
        { name: 'n', value: 'rotated 2024' },
        { name: 'p', value: 'MCowBQ==' },
      ],
      version: 'DKIM1',
      key_type: 'ed25519',
      public_key: 'MCowBQ==',
      hash_algorithms: ['sha256'],
      service_types: ['email'],
      flags: ['y', 's'],
      testing: true,
      strict_subdomains: true,
      notes: 'rotated 2024',
    });
    const bare = parseDkimRecord('p=MCowBQ==');
    expect(bare.problems).toEqual([]);
    expect(bare.record).toMatchObject({ version: null, key_type: 'rsa', hash_algorithms: null, service_types: ['*'], flags: [], testing: false });
  });

  it('tolerates folding whitespace around tags, inside p= and a trailing ";"', () => {
    const parsed = parseDkimRecord(' v=DKIM1 ;\r\n\tk = rsa;p=MCow\r\n BQ== ; ');
    expect(parsed.problems).toEqual([]);
    expect(parsed.record?.public_key).toBe('MCowBQ==');
    expect(parsed.record?.key_type).toBe('rsa');
  });

  it('reads an empty p= as a revoked key and a missing p= as an error', () => {
    expect(parseDkimRecord('v=DKIM1; p=').record?.public_key).toBe('');
    expect(parseDkimRecord('v=DKIM1; p=').problems).toEqual([]);
    expect(parseDkimRecord('v=DKIM1; k=rsa').problems.map((item) => item.code)).toEqual(['no_public_key']);
  });

  it('names each problem', () => {
    const codes = (text: string) => parseDkimRecord(text).problems.map((item) => item.code);
    expect(codes('v=DKIM2; p=')).toEqual(['bad_version']);
    expect(codes('p=; v=DKIM1')).toEqual(['bad_version']);
    expect(codes('v=DKIM1; p=; p=')).toEqual(['duplicate_tag']);
    expect(codes('v=DKIM1;; p=')).toEqual(['syntax']);
    expect(codes('v=DKIM1; 1x=2; p=')).toEqual(['syntax']);
    expect(codes('v=DKIM1; p=abc\x01')).toEqual(['syntax', 'no_public_key']);
    expect(codes('v=DKIM1; p=abc!')).toEqual(['bad_base64']);
    expect(codes('v=DKIM1; p=abc')).toEqual(['bad_base64']);
    expect(codes('v=DKIM1; k=dsa; p=')).toEqual(['unknown_key_type']);
    expect(codes('v=DKIM1; h=sha1; p=')).toEqual(['sha1_only']);
    expect(codes('v=DKIM1; h=sha256:sha512; p=')).toEqual(['unknown_hash']);
    expect(codes('v=DKIM1; s=xmpp; p=')).toEqual(['not_for_email']);
    // Tag names are case-sensitive: P= is an unknown tag, so the key is missing.
    expect(codes('v=DKIM1; P=MCowBQ==')).toEqual(['no_public_key']);
    expect(parseDkimRecord('just text').record).toBeNull();
  });

  it('tells key records from other TXT records', () => {
    expect(looksLikeDkimRecord('v=DKIM1; p=abc')).toBe(true);
    expect(looksLikeDkimRecord('k=rsa; p=abc')).toBe(true);
    expect(looksLikeDkimRecord('p=')).toBe(true);
    expect(looksLikeDkimRecord('google-site-verification=abc')).toBe(false);
    expect(looksLikeDkimRecord('v=spf1 -all')).toBe(false);
  });

  it('property: any string gives a parse result or a list of problems, never an exception', () => {
    const tagish = fc.oneof(
      fc.string(),
      fc.array(fc.tuple(fc.constantFrom('v', 'k', 'p', 'h', 's', 't', 'n', 'x', 'P', '', ' '), fc.string()), { maxLength: 8 }).map((pairs) => pairs.map(([name, value]) => `${name}=${value}`).join(';')),
      fc.string({ unit: 'binary' }),
    );
    fc.assert(
      fc.property(tagish, (text) => {
        const parsed = parseDkimRecord(text);
        expect(Array.isArray(parsed.problems)).toBe(true);
        if (parsed.record === null) expect(parsed.problems.length).toBeGreaterThan(0);
        else {
          expect(KNOWN_SHAPE(parsed.record)).toBe(true);
          if (parsed.record.public_key !== null) expect(() => readDkimKey(parsed.record!.key_type, parsed.record!.public_key!)).not.toThrow();
        }
        for (const problem of parsed.problems) expect(['error', 'warning', 'info']).toContain(problem.severity);
      }),
      { numRuns: 2000 },
    );
  });
});

function KNOWN_SHAPE(record: NonNullable<ReturnType<typeof parseDkimRecord>['record']>): boolean {
  return typeof record.key_type === 'string' && Array.isArray(record.flags) && Array.isArray(record.service_types) && record.testing === record.flags.includes('y');
}

describe('reading the key (node:crypto)', () => {
  it('reads RSA sizes from SPKI and PKCS#1, and Ed25519 from its 32 raw octets', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;
    expect(readDkimKey('rsa', rsa.export({ format: 'der', type: 'spki' }).toString('base64'))).toEqual({ type: 'rsa', bits: 1024, encoding: 'spki' });
    expect(readDkimKey('rsa', rsa.export({ format: 'der', type: 'pkcs1' }).toString('base64'))).toEqual({ type: 'rsa', bits: 1024, encoding: 'pkcs1' });
    const ed = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' });
    expect(readDkimKey('ed25519', ed.subarray(12).toString('base64'))).toEqual({ type: 'ed25519', bits: 256, encoding: 'raw' });
    expect(readDkimKey('ed25519', ed.toString('base64'))).toEqual({ type: 'ed25519', bits: 256, encoding: 'spki-ed25519' });
  });

  it('refuses a key of the wrong type or no key at all', () => {
    const ed = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    expect(readDkimKey('rsa', ed)).toMatchObject({ message: expect.stringContaining('k= says rsa') });
    expect(readDkimKey('ed25519', 'AAAA')).toMatchObject({ message: expect.stringContaining('32 octets of the key') });
    expect(readDkimKey('rsa', 'bm90IGEga2V5')).toHaveProperty('message');
  });
});

describe('a key record judged once for the key check and the verifier (readDkimKeyRecord)', () => {
  const rsa2048 = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
  const spki = rsa2048.export({ format: 'der', type: 'spki' }).toString('base64');
  const pkcs1 = rsa2048.export({ format: 'der', type: 'pkcs1' }).toString('base64');
  const short = generateKeyPairSync('rsa', { modulusLength: 512 }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
  const ed = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' });

  it('refuses, with the reason a verifier reports, every record no signature can verify with', () => {
    const refusal = (text: string) => readDkimKeyRecord(text).refusal;
    expect(refusal(`v=DKIM1; p=${spki}; p=${spki}`)).toEqual({ result: 'permerror', reason: 'the key record is invalid: p= appears more than once, which makes the whole tag list invalid' });
    expect(refusal(`v=DKIM1; k rsa; p=${spki}`)).toEqual({ result: 'permerror', reason: 'the key record is invalid: "k rsa" is not a tag=value pair' });
    expect(refusal(`v=DKIM1; s=xmpp; p=${spki}`)?.reason).toMatch(/^the key record is invalid: s=xmpp does not include "email" or "\*"/);
    expect(refusal('v=DKIM1; p=')).toEqual({ result: 'permerror', reason: 'key revoked (empty p=)' });
    expect(refusal('v=DKIM1; p=bm90IGEga2V5')?.reason).toMatch(/^the key cannot be used: p= does not decode to an RSA public key/);
    expect(refusal(`v=DKIM1; p=${short}`)).toEqual({ result: 'policy', reason: 'the RSA key has 512 bits; keys under 1024 bits are not accepted' });
    expect(refusal('just text')).toEqual({ result: 'permerror', reason: 'the key record is invalid: "just text" is not a tag=value pair' });
  });

  it('reads both RSA encodings and both Ed25519 ones, and leaves h=, k= and t=s to each signature', () => {
    for (const text of [`p=${spki}`, `v=DKIM1; p=${pkcs1}`, `v=DKIM1; k=ed25519; p=${ed.subarray(12).toString('base64')}`, `k=ed25519; p=${ed.toString('base64')}`]) {
      const reading = readDkimKeyRecord(text);
      expect(reading.refusal).toBeNull();
      expect(reading.keyObject).not.toBeNull();
    }
    const sha1 = readDkimKeyRecord(`v=DKIM1; h=sha1; t=s; p=${spki}`);
    expect(sha1.refusal).toBeNull();
    const needs = { key_type: 'rsa' as const, hash: 'sha256' as const, domain: 'a.test', identityDomain: 'a.test' };
    expect(dkimKeyRefusesSignature(sha1.record!, needs)).toBe("the key record's h=sha1 does not allow sha256 (inappropriate hash algorithm)");
    expect(dkimKeyRefusesSignature(sha1.record!, { ...needs, hash: 'sha1' })).toBeNull();
    expect(dkimKeyRefusesSignature(sha1.record!, { ...needs, hash: 'sha1', identityDomain: 'news.a.test' })).toBe("the key record's t=s forbids an i= domain (news.a.test) below d= (a.test)");
    expect(dkimKeyRefusesSignature(sha1.record!, { ...needs, key_type: 'ed25519' })).toBe('a= needs an Ed25519 key, but the key record has k=rsa');
  });
});
