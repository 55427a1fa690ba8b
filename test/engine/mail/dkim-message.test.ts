/**
 * checkDkimMessage(): messages signed by the test with mailauth's signer
 * (RSA 2048 and Ed25519 keys made by the test), verified against keys
 * served by a real DNS server on 127.0.0.1, then tampered with.
 */
import fc from 'fast-check';
import { dkimSign } from 'mailauth/lib/dkim/sign.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext, type EngineContext } from '../../../src/engine/context.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import { checkDkimMessage } from '../../../src/engine/mail/dkim-message.js';
import { NetintelError } from '../../../src/errors.js';
import { startDnsServer, type DnsTestServer } from '../../support/dns-server.js';
import { readFileSync } from 'node:fs';
import { REPO_ROOT } from '../../support/cli.js';
import { FIXED_DKIM_ZONE, makeDkimZone, SIGNED_MESSAGE_FILE, type TestKey } from './dkim-zone.js';

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
  const result = await dkimSign(message, {
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
    expect(result.signatures[0]).toMatchObject({ domain: 'dkim.test', selector: 'rsa2048', algorithm: 'rsa-sha256', result: 'pass', reason: null, aligned: true, keyBits: 2048 });
    expect(result.signatures[0]!.signedHeaders.map((name) => name.toLowerCase())).toEqual(expect.arrayContaining(['from', 'subject', 'date']));
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
    const result = await dkimSign(MESSAGE, {
      signTime: new Date('2026-01-01T00:00:00Z'),
      expires: new Date('2026-01-02T00:00:00Z'),
      signatureData: [{ signingDomain: 'dkim.test', selector: 'rsa2048', privateKey: zone.keys.rsa2048.pem }],
    });
    const message = Buffer.from(result.signatures + MESSAGE);
    const before = createEngineContext({ resolvers: [parseResolverAddress(server.address)], timeoutMs: 1000, dnsRetries: 0, now: () => new Date('2026-01-01T12:00:00Z') });
    const after = createEngineContext({ resolvers: [parseResolverAddress(server.address)], timeoutMs: 1000, dnsRetries: 0, now: () => new Date('2026-03-01T00:00:00Z') });
    try {
      expect((await checkDkimMessage(before, message, 'm.eml')).signatures[0]).toMatchObject({ result: 'pass', expiresAt: '2026-01-02T00:00:00.000Z' });
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
    expect(result.status).toBe('fail');
    expect(result.signatures.map((item) => [item.selector, item.result, item.reason])).toEqual([
      ['absent', 'permerror', 'no key at absent._domainkey.dkim.test'],
      ['revoked', 'permerror', 'key revoked (empty p=)'],
      ['rsa512', 'policy', 'the key is too short (RSA under 1024 bits)'],
      ['broken', 'temperror', expect.stringMatching(/^the key lookup failed: upstream: /)],
    ]);
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
      expect(result.signatures.map((item) => [item.selector, item.result, item.signedAt])).toEqual([
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
        expect(['pass', 'fail', 'none']).toContain(result.status);
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
