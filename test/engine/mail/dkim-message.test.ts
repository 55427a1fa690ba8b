/**
 * checkDkimMessage(): messages signed by the test with mailauth's signer
 * (RSA 2048 and Ed25519 keys made by the test), verified against keys
 * served by a real DNS server on 127.0.0.1, then tampered with.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext, type EngineContext } from '../../../src/engine/context.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import { checkDkim } from '../../../src/engine/mail/check-dkim.js';
import { MAX_HEADER_BYTES, MAX_MESSAGE_BYTES } from '../../../src/engine/mail/dkim-message-reader.js';
import { checkDkimMessage, MAX_VERIFIED_SIGNATURES } from '../../../src/engine/mail/dkim-message.js';
import { NetintelError } from '../../../src/errors.js';
import { startDnsServer, type DnsTestServer } from '../../support/dns-server.js';
import { readFileSync } from 'node:fs';
import { REPO_ROOT } from '../../support/cli.js';
import { FIXED_DKIM_ZONE, makeDkimZone, SIGNED_MESSAGE_FILE, type TestKey, mailauthSign } from './dkim-zone.js';

let server: DnsTestServer;
let ctx: EngineContext;
const zone = makeDkimZone();

beforeAll(async () => {
  server = await startDnsServer({ records: zone.records, behaviours: { 'broken._domainkey.dkim.test': 'servfail' } });
  ctx = createEngineContext({ resolvers: [parseResolverAddress(server.address)], timeoutMs: 1000, dnsRetries: 0 });
});

afterAll(async () => {
  await ctx.close();
  await server.close();
});

const MESSAGE = [
  'From: Alice <alice@dkim.test>',
  'To: Bob <bob@example.test>',
  'Subject: Quarterly figures',
  'Date: Fri, 27 Nov 2026 10:00:00 +0000',
  'Message-ID: <figures-1@dkim.test>',
  'MIME-Version: 1.0',
  'Content-Type: text/plain; charset=utf-8',
  '',
  'The figures are attached.',
  '',
].join('\r\n');

async function signed(message: string, signatures: Array<{ selector: string; key: TestKey; algorithm?: string; domain?: string }>): Promise<Buffer> {
  const result = await mailauthSign(message, {
    canonicalization: 'relaxed/relaxed',
    signatureData: signatures.map((item) => ({ signingDomain: item.domain ?? 'dkim.test', selector: item.selector, privateKey: item.key.pem, ...(item.algorithm ? { algorithm: item.algorithm } : {}) })),
  });
  expect(result.errors).toEqual([]);
  return Buffer.from(result.signatures + message);
}

describe('checkDkimMessage', () => {
  it('verifies RSA and Ed25519 signatures with keys from the test DNS server', async () => {
    const message = await signed(MESSAGE, [
      { selector: 'rsa2048', key: zone.keys.rsa2048 },
      { selector: 'ed', key: zone.keys.ed25519, algorithm: 'ed25519-sha256' },
    ]);
    const before = server.queries.length;
    const result = await checkDkimMessage(ctx, message, 'signed.eml');
    expect(result).toMatchObject({ kind: 'dkim-message', source: 'signed.eml', from: ['alice@dkim.test'], status: 'pass' });
    expect(result.signatures).toHaveLength(2);
    expect(result.signatures[0]).toMatchObject({ domain: 'dkim.test', selector: 'rsa2048', algorithm: 'rsa-sha256', result: 'pass', reason: null, aligned: true, key_bits: 2048 });
    expect(result.signatures[0]!.signed_headers.map((name) => name.toLowerCase())).toEqual(expect.arrayContaining(['from', 'subject', 'date']));
    expect(result.signatures[1]).toMatchObject({ selector: 'ed', algorithm: 'ed25519-sha256', result: 'pass' });
    expect(result.findings.map((item) => item.id)).toEqual(['dkim_signature_pass', 'dkim_signature_pass']);
    // The keys came from the engine's resolver, not the machine's.
    const asked = server.queries.slice(before).map((query) => query.name.toLowerCase());
    expect(asked).toEqual(expect.arrayContaining(['rsa2048._domainkey.dkim.test', 'ed._domainkey.dkim.test']));
  });

  it('fails a message whose body was changed after signing', async () => {
    const message = (await signed(MESSAGE, [{ selector: 'rsa2048', key: zone.keys.rsa2048 }])).toString().replace('The figures are attached.', 'The figures are attached. Pay to IBAN XX00.');
    const result = await checkDkimMessage(ctx, Buffer.from(message), 'tampered.eml');
    expect(result.status).toBe('fail');
    expect(result.signatures[0]).toMatchObject({ result: 'fail', reason: 'body hash did not verify' });
    expect(result.findings[0]).toMatchObject({ id: 'dkim_signature_fail', severity: 'error' });
  });

  it('fails a message whose signed Subject was changed', async () => {
    const message = (await signed(MESSAGE, [{ selector: 'ed', key: zone.keys.ed25519, algorithm: 'ed25519-sha256' }])).toString().replace('Quarterly figures', 'Urgent: quarterly figures');
    const result = await checkDkimMessage(ctx, Buffer.from(message), 'tampered.eml');
    expect(result.signatures[0]).toMatchObject({ result: 'fail', reason: expect.stringContaining('signature did not verify') });
  });

  it('gives neutral for a signature past its x= expiry, judged by the context clock', async () => {
    const result = await mailauthSign(MESSAGE, {
      signTime: new Date('2026-01-01T00:00:00Z'),
      expires: new Date('2026-01-02T00:00:00Z'),
      signatureData: [{ signingDomain: 'dkim.test', selector: 'rsa2048', privateKey: zone.keys.rsa2048.pem }],
    });
    const message = Buffer.from(result.signatures + MESSAGE);
    const before = createEngineContext({ resolvers: [parseResolverAddress(server.address)], timeoutMs: 1000, dnsRetries: 0, now: () => new Date('2026-01-01T12:00:00Z') });
    const after = createEngineContext({ resolvers: [parseResolverAddress(server.address)], timeoutMs: 1000, dnsRetries: 0, now: () => new Date('2026-03-01T00:00:00Z') });
    try {
      expect((await checkDkimMessage(before, message, 'm.eml')).signatures[0]).toMatchObject({ result: 'pass', expires_at: '2026-01-02T00:00:00.000Z' });
      const late = await checkDkimMessage(after, message, 'm.eml');
      expect(late.signatures[0]).toMatchObject({ result: 'neutral', reason: expect.stringContaining('the signature expired') });
      expect(late.findings[0]).toMatchObject({ id: 'dkim_signature_neutral', severity: 'warning' });
      expect(late.status).toBe('fail');
    } finally {
      await before.close();
      await after.close();
    }
  });

  it('gives permerror for a missing or revoked key, policy for a weak one, temperror for a failed lookup', async () => {
    const message = await signed(MESSAGE, [
      { selector: 'absent', key: zone.keys.rsa2048 },
      { selector: 'revoked', key: zone.keys.rsa2048 },
      { selector: 'rsa512', key: zone.keys.rsa512 },
      { selector: 'broken', key: zone.keys.rsa2048 },
    ]);
    const result = await checkDkimMessage(ctx, message, 'm.eml');
    // No signature passes and one could not be checked: the message may pass once DNS answers, so it is not "fail".
    expect(result).toMatchObject({ status: 'temperror', checked: 'some', failure: { code: 'upstream', reason: 'DNS refused or gave no usable answer' } });
    expect(result.signatures.map((item) => [item.selector, item.result, item.reason])).toEqual([
      ['absent', 'permerror', 'no key at absent._domainkey.dkim.test'],
      ['revoked', 'permerror', 'key revoked (empty p=)'],
      ['rsa512', 'policy', 'the RSA key has 512 bits; keys under 1024 bits are not accepted'],
      ['broken', 'temperror', expect.stringMatching(/^the key lookup failed: upstream: /)],
    ]);
    const judged = await checkDkimMessage(ctx, await signed(MESSAGE, [{ selector: 'absent', key: zone.keys.rsa2048 }]), 'm.eml');
    expect(judged).toMatchObject({ status: 'fail', checked: 'all', failure: null });
  });

  it('says what it could not check: a pass beside a failed lookup passes, failed lookups alone are temperror with their cause', async () => {
    const both = await checkDkimMessage(ctx, await signed(MESSAGE, [{ selector: 'rsa2048', key: zone.keys.rsa2048 }, { selector: 'broken', key: zone.keys.rsa2048 }]), 'm.eml');
    expect(both).toMatchObject({ status: 'pass', checked: 'some', failure: { code: 'upstream' } });
    const message = await signed(MESSAGE, [{ selector: 'rsa2048', key: zone.keys.rsa2048 }]);
    const silent = await startDnsServer({ records: [], behaviours: { 'rsa2048._domainkey.dkim.test': 'silent' } });
    const quiet = createEngineContext({ resolvers: [parseResolverAddress(silent.address)], timeoutMs: 200, dnsRetries: 0 });
    try {
      const result = await checkDkimMessage(quiet, message, 'm.eml');
      expect(result).toMatchObject({ status: 'temperror', checked: 'none', failure: { code: 'timeout', reason: 'DNS did not answer', message: expect.stringContaining('rsa2048._domainkey.dkim.test') } });
      expect(result.signatures).toEqual([expect.objectContaining({ result: 'temperror' })]);
    } finally {
      await quiet.close();
      await silent.close();
    }
  });

  it('reports a signature it cannot read as permerror, an unsigned message, and unaligned signatures', async () => {
    const odd = `DKIM-Signature: v=1; a=rsa-md5; d=dkim.test; s=rsa2048; h=from; bh=AAAA; b=AAAA\r\n${MESSAGE}`;
    const unreadable = await checkDkimMessage(ctx, Buffer.from(odd), 'odd.eml');
    expect(unreadable.signatures).toEqual([expect.objectContaining({ algorithm: 'rsa-md5', result: 'permerror', reason: expect.stringContaining('unsupported algorithm') })]);

    const unsigned = await checkDkimMessage(ctx, Buffer.from(MESSAGE), 'plain.eml');
    expect(unsigned).toMatchObject({ status: 'none', signatures: [] });
    expect(unsigned.findings).toEqual([expect.objectContaining({ id: 'dkim_message_unsigned', severity: 'warning' })]);

    const third = await signed(MESSAGE, [{ selector: 's1', key: zone.keys.esp, domain: 'esp.test' }]);
    const result = await checkDkimMessage(ctx, third, 'esp.eml');
    expect(result.signatures[0]).toMatchObject({ domain: 'esp.test', result: 'pass', aligned: false });
    expect(result.findings.map((item) => item.id)).toEqual(['dkim_signature_pass', 'dkim_signature_not_aligned']);
  });

  it('verifies the kept fixture message against the kept keys (the end-to-end goldens use both)', async () => {
    const fixed = await startDnsServer({ records: [...FIXED_DKIM_ZONE] });
    const fixedCtx = createEngineContext({ resolvers: [parseResolverAddress(fixed.address)], timeoutMs: 1000, dnsRetries: 0 });
    try {
      const result = await checkDkimMessage(fixedCtx, readFileSync(`${REPO_ROOT}${SIGNED_MESSAGE_FILE}`), 'fixture');
      expect(result.signatures.map((item) => [item.selector, item.result, item.signed_at])).toEqual([
        ['rsa2048', 'pass', '2026-01-01T10:00:05.000Z'],
        ['ed', 'pass', '2026-01-01T10:00:05.000Z'],
      ]);
    } finally {
      await fixedCtx.close();
      await fixed.close();
    }
  });

  it('property: any DKIM-Signature value or any input gives a result or invalid_input, never another exception', async () => {
    const tag = fc.tuple(fc.constantFrom('v', 'a', 'b', 'bh', 'c', 'd', 'h', 'i', 'l', 'q', 's', 't', 'x', 'z', 'A', ''), fc.string({ maxLength: 30 })).map(([name, value]) => `${name}=${value}`);
    const header = fc.oneof(
      fc.array(tag, { maxLength: 10 }).map((tags) => tags.join('; ')),
      fc.string({ unit: 'binary', maxLength: 200 }),
    );
    await fc.assert(
      fc.asyncProperty(header, fc.boolean(), async (value, folded) => {
        const line = `DKIM-Signature: ${folded ? value.replace(/; /g, ';\r\n ') : value}`.replace(/\r?\n(?![ \t])/g, ' ');
        const result = await checkDkimMessage(ctx, Buffer.from(`${line}\r\n${MESSAGE}`), 'fuzz.eml');
        for (const signature of result.signatures) expect(['pass', 'fail', 'neutral', 'policy', 'temperror', 'permerror']).toContain(signature.result);
        const results = result.signatures.map((signature) => signature.result);
        const unchecked = results.filter((item) => item === 'temperror').length;
        const expected = results.length === 0 ? 'none' : results.includes('pass') ? 'pass' : unchecked > 0 ? 'temperror' : 'fail';
        expect(result.status).toBe(expected);
        expect(result.checked).toBe(unchecked === 0 ? 'all' : unchecked === results.length ? 'none' : 'some');
        expect(result.failure === null).toBe(unchecked === 0);
      }),
      { numRuns: 300 },
    );
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), async (bytes) => {
        try {
          await checkDkimMessage(ctx, Buffer.from(bytes), 'bytes');
        } catch (error) {
          expect(error).toBeInstanceOf(NetintelError);
          expect((error as NetintelError).code).toBe('invalid_input');
        }
      }),
      { numRuns: 300 },
    );
  });

  it('refuses input that is not a message', async () => {
    await expect(checkDkimMessage(ctx, Buffer.from('\x89PNG\r\n'), 'logo.png')).rejects.toMatchObject({ code: 'invalid_input' });
  });
});

describe('checkDkimMessage: the key record judged as the key check judges it', () => {
  const cases: Array<[selector: string, key: keyof typeof zone.keys, result: string, reason: RegExp, keyCheckError: string]> = [
    ['dup', 'rsa2048', 'permerror', /^the key record is invalid: p= appears more than once/, 'dkim_duplicate_tag'],
    ['syntax', 'rsa2048', 'permerror', /^the key record is invalid: "k rsa" is not a tag=value pair$/, 'dkim_syntax_error'],
    ['noemail', 'rsa2048', 'permerror', /^the key record is invalid: s=xmpp does not include "email" or "\*"/, 'dkim_not_for_email'],
    ['sha1', 'rsa2048', 'permerror', /^the key record's h=sha1 does not allow sha256 \(inappropriate hash algorithm\)$/, 'dkim_sha1_only'],
    ['late-v', 'rsa2048', 'permerror', /^the key record is invalid: v=DKIM1 must be the first tag/, 'dkim_bad_version'],
  ];
  it.each(cases)('a signature under selector %s does not pass, and the key check reports an error there', async (selector, key, result, reason, id) => {
    const message = await signed(MESSAGE, [{ selector, key: zone.keys[key] }]);
    const verified = await checkDkimMessage(ctx, message, 'm.eml');
    expect(verified.signatures[0]).toMatchObject({ selector, result, reason: expect.stringMatching(reason) });
    const checked = await checkDkim(ctx, 'dkim.test', { selectors: [selector] });
    expect(checked.selectors[0]!.findings.find((item) => item.id === id)).toMatchObject({ severity: 'error' });
    expect(checked.status).toBe('invalid');
  });

  it('verifies with a bare PKCS#1 RSAPublicKey, the form RFC 6376 §3.6.1 names, as the key check reads it', async () => {
    const verified = await checkDkimMessage(ctx, await signed(MESSAGE, [{ selector: 'pkcs1', key: zone.keys.esp }]), 'm.eml');
    expect(verified.signatures[0]).toMatchObject({ result: 'pass', key_bits: 2048 });
    const checked = await checkDkim(ctx, 'dkim.test', { selectors: ['pkcs1'] });
    expect(checked).toMatchObject({ status: 'valid', selectors: [{ key: { type: 'rsa', bits: 2048, encoding: 'pkcs1' } }] });
  });

  it('verifies Ed25519 from the 32 raw octets, and from a SubjectPublicKeyInfo with only a warning from the key check', async () => {
    for (const selector of ['ed', 'ed-spki']) {
      const verified = await checkDkimMessage(ctx, await signed(MESSAGE, [{ selector, key: zone.keys.ed25519, algorithm: 'ed25519-sha256' }]), 'm.eml');
      expect(verified.signatures[0]).toMatchObject({ selector, result: 'pass', key_bits: null });
    }
    const checked = await checkDkim(ctx, 'dkim.test', { selectors: ['ed-spki'] });
    expect(checked.status).toBe('valid');
    expect(checked.selectors[0]!.findings.find((item) => item.id === 'dkim_key_encoding')).toMatchObject({ severity: 'warning', rfc: 'RFC 8463 §4.2' });
  });

  it('reads s= as a list (email among others passes) and refuses a key whose k= does not suit a=', async () => {
    expect((await checkDkimMessage(ctx, await signed(MESSAGE, [{ selector: 'slist', key: zone.keys.rsa2048 }]), 'm.eml')).signatures[0]).toMatchObject({ result: 'pass' });
    const mismatch = await checkDkimMessage(ctx, await signed(MESSAGE, [{ selector: 'rsa2048', key: zone.keys.ed25519, algorithm: 'ed25519-sha256' }]), 'm.eml');
    expect(mismatch.signatures[0]).toMatchObject({ result: 'permerror', reason: 'a= needs an Ed25519 key, but the key record has k=rsa' });
  });

  it('refuses an i= below d= under a key with t=s', async () => {
    const message = (await signed(MESSAGE, [{ selector: 'strict', key: zone.keys.rsa2048 }])).toString('latin1').replace('d=dkim.test;', 'd=dkim.test; i=@news.dkim.test;');
    const verified = await checkDkimMessage(ctx, Buffer.from(message, 'latin1'), 'm.eml');
    expect(verified.signatures[0]).toMatchObject({ result: 'permerror', reason: "the key record's t=s forbids an i= domain (news.dkim.test) below d= (dkim.test)" });
  });
});

describe('checkDkimMessage: signatures RFC 6376 §3.5 and RFC 8301 refuse', () => {
  const at = (iso: string) => String(Date.parse(iso) / 1000);
  const header = (tags: string) => `DKIM-Signature: v=1; a=rsa-sha256; d=dkim.test; s=rsa2048; h=from:subject; ${tags}; bh=AAAA; b=AAAA\r\n${MESSAGE}`;
  const clock = (iso: string) => createEngineContext({ resolvers: [parseResolverAddress(server.address)], timeoutMs: 1000, dnsRetries: 0, now: () => new Date(iso) });

  it('refuses rsa-sha1 even when the signature is good, and still warns about it', async () => {
    const message = await signed(MESSAGE, [{ selector: 'rsa2048', key: zone.keys.rsa2048, algorithm: 'rsa-sha1' }]);
    const result = await checkDkimMessage(ctx, message, 'm.eml');
    expect(result.signatures[0]).toMatchObject({ algorithm: 'rsa-sha1', result: 'permerror', reason: 'a=rsa-sha1 is not accepted: RFC 8301 §3.1 forbids verifying with SHA-1' });
    expect(result.findings.map((item) => item.id)).toEqual(['dkim_signature_permerror', 'dkim_signature_sha1']);
  });

  it('says x= is earlier than t= when it is, not that the signature expired, though x= is still ahead', async () => {
    const now = clock('2026-01-01T00:00:00Z');
    try {
      const result = await checkDkimMessage(now, Buffer.from(header(`t=${at('2026-03-01T00:00:00Z')}; x=${at('2026-02-01T00:00:00Z')}`)), 'm.eml');
      expect(result.signatures[0]).toMatchObject({
        result: 'permerror',
        reason: 'x= (2026-02-01T00:00:00.000Z) is earlier than t= (2026-03-01T00:00:00.000Z), so the signature is invalid: x= must be later than t=',
        signed_at: '2026-03-01T00:00:00.000Z',
        expires_at: '2026-02-01T00:00:00.000Z',
      });
      const same = await checkDkimMessage(now, Buffer.from(header(`t=${at('2026-01-01T00:00:00Z')}; x=${at('2026-01-01T00:00:00Z')}`)), 'm.eml');
      expect(same.signatures[0]!.reason).toContain('is the same time as t=');
    } finally {
      await now.close();
    }
  });

  it('ignores a signature whose t= is more than 10 hours ahead of the clock (neutral), and not one an hour ahead', async () => {
    const message = await mailauthSign(MESSAGE, { signTime: new Date('2026-01-01T11:00:00Z'), signatureData: [{ signingDomain: 'dkim.test', selector: 'rsa2048', privateKey: zone.keys.rsa2048.pem }] });
    const bytes = Buffer.from(message.signatures + MESSAGE);
    const early = clock('2025-12-31T12:00:00Z');
    const close = clock('2026-01-01T10:00:00Z');
    try {
      expect((await checkDkimMessage(early, bytes, 'm.eml')).signatures[0]).toMatchObject({ result: 'neutral', reason: 't= (2026-01-01T11:00:00.000Z) is in the future: the signature is ignored until then' });
      expect((await checkDkimMessage(close, bytes, 'm.eml')).signatures[0]).toMatchObject({ result: 'pass' });
    } finally {
      await early.close();
      await close.close();
    }
  });

  it('gives permerror, never an exception, for t= and x= of more than 12 digits', async () => {
    for (const tag of ['t=99999999999999999', 'x=99999999999999999', 't=8640000000001', 'x=8640000000001', 'x=-5', 't=1e9']) {
      const result = await checkDkimMessage(ctx, Buffer.from(header(tag)), 'm.eml');
      expect(result.signatures[0]).toMatchObject({ result: 'permerror', reason: `${tag} is not a time (1 to 12 digits of seconds since 1970)`, signed_at: null, expires_at: null });
    }
    expect((await checkDkimMessage(ctx, Buffer.from(header('x=999999999999')), 'm.eml')).signatures[0]!.expires_at).toBe('+033658-09-27T01:46:39.000Z');
  });

  it('refuses a signature that breaks §3.5 or §6.1.1, each with its reason', async () => {
    const reasons = async (value: string) => (await checkDkimMessage(ctx, Buffer.from(`DKIM-Signature: ${value}\r\n${MESSAGE}`), 'm.eml')).signatures[0]!.reason;
    const good = 'a=rsa-sha256; d=dkim.test; s=rsa2048; h=from; bh=AAAA; b=AAAA';
    expect(await reasons(`v=1; ${good}; s=other`)).toBe('signature syntax error: s= appears more than once, which makes the whole tag list invalid');
    expect(await reasons(`v=1; ${good};; x=1`)).toBe('signature syntax error: an empty tag between two ";" (tag 8)');
    expect(await reasons(good)).toBe('the signature lacks required tag v=');
    expect(await reasons(`v=2; ${good}`)).toBe('v=2 is not 1 (incompatible version)');
    expect(await reasons(`v=1; ${good.replace('h=from', 'h=subject:to')}`)).toBe('h= does not include From (From field not signed)');
    expect(await reasons(`v=1; ${good}; i=@other.test`)).toBe('i=@other.test is not in d=dkim.test or below it (domain mismatch)');
    expect(await reasons(`v=1; ${good}; c=relaxed/fancy`)).toBe('unsupported canonicalization c=relaxed/fancy');
    expect(await reasons(`v=1; ${good}; q=https`)).toBe('q=https names no key query method netintel knows (dns/txt)');
    expect(await reasons(`v=1; ${good}; l=ten`)).toBe('l=ten is not a body length (1 to 76 digits)');
    expect(await reasons(`v=1; ${good.replace('b=AAAA', 'b=A!A')}`)).toBe('b= is not base64');
  });
});

describe('checkDkimMessage: reading the message in one pass, within limits', () => {
  it('verifies a signature whose field is folded 200,000 times (about 600 KB) in one pass', async () => {
    const message = (await signed(MESSAGE, [{ selector: 'rsa2048', key: zone.keys.rsa2048 }])).toString('latin1');
    // Empty continuation lines inside b= are folding whitespace, removed with the rest of b= (RFC 6376 §3.7).
    const at = message.search(/[;\s]b=/) + 4;
    const folded = `${message.slice(0, at)}${'\r\n '.repeat(200_000)}${message.slice(at)}`;
    expect(folded.length).toBeGreaterThan(600_000);
    const result = await checkDkimMessage(ctx, Buffer.from(folded, 'latin1'), 'folded.eml');
    expect(result.signatures[0]).toMatchObject({ result: 'pass' });
  });

  it('reads a message saved with LF line ends, or behind an mbox From line, as the signer sent it', async () => {
    const message = (await signed(MESSAGE, [{ selector: 'rsa2048', key: zone.keys.rsa2048 }])).toString('latin1');
    for (const text of [message.replace(/\r\n/g, '\n'), `From alice@dkim.test Fri Nov 27 10:00:00 2026\n${message}`]) {
      expect((await checkDkimMessage(ctx, Buffer.from(text, 'latin1'), 'saved.eml')).signatures[0]).toMatchObject({ result: 'pass' });
    }
  });

  it('refuses a header section over 1 MiB and a message over 64 MiB as invalid input naming the limit', async () => {
    const big = Buffer.from(`X-Big: ${'a'.repeat(MAX_HEADER_BYTES)}\r\n${MESSAGE}`);
    await expect(checkDkimMessage(ctx, big, 'big.eml')).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringContaining('the header section is over 1 MiB') });
    const huge = Buffer.alloc(MAX_MESSAGE_BYTES + 1, 0x61);
    huge.write(MESSAGE);
    await expect(checkDkimMessage(ctx, huge, 'huge.eml')).rejects.toMatchObject({ code: 'invalid_input', message: `huge.eml has ${MAX_MESSAGE_BYTES + 1} octets; messages over 64 MiB are not read (give one saved message)` });
  });

  it('verifies the first 20 signatures of a message and reports the others as not verified', async () => {
    const one = (await signed(MESSAGE, [{ selector: 'rsa2048', key: zone.keys.rsa2048 }])).toString('latin1');
    const field = one.slice(0, one.indexOf('\r\nFrom:') + 2);
    const result = await checkDkimMessage(ctx, Buffer.from(field.repeat(MAX_VERIFIED_SIGNATURES + 1) + MESSAGE, 'latin1'), 'many.eml');
    expect(result.signatures.slice(0, MAX_VERIFIED_SIGNATURES).every((item) => item.result === 'pass')).toBe(true);
    expect(result.signatures[MAX_VERIFIED_SIGNATURES]).toMatchObject({ result: 'neutral', reason: expect.stringContaining('not verified: netintel verifies the first 20 signatures') });
  });
});
