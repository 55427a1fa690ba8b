/**
 * ARC chain validation of `netintel headers` against hostile and malformed
 * input: a header section too large for mailauth's quadratic field split,
 * DKIM-Signatures whose keys ARC has no use for, a key name that is no
 * domain name; and a From domain that is no domain name. Messages sealed
 * by mailauth's sealer, the key served by a DNS server on 127.0.0.1.
 */
import { dkimSign } from 'mailauth/lib/dkim/sign.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext, type EngineContext } from '../../../../src/engine/context.js';
import { parseResolverAddress } from '../../../../src/engine/dns/resolver-address.js';
import { createMailDns } from '../../../../src/engine/mail/mail-dns.js';
import { analyzeHeaders } from '../../../../src/engine/mail/headers/analyze-headers.js';
import { MAX_ARC_HEADER_BYTES, MAX_ARC_HEADER_LINES, validateArc } from '../../../../src/engine/mail/headers/arc-chain.js';
import { readHeaderBlock } from '../../../../src/engine/mail/headers/header-block.js';
import { startDnsServer, type DnsTestServer } from '../../../support/dns-server.js';
import { listMessage, sealOnce } from '../arc-messages.js';
import { dkimTxt, rsaKey } from '../dkim-zone.js';

const key = rsaKey(2048);
const ARC_KEY = 'arc1._domainkey.sealer1.test';
let dns: DnsTestServer;
let ctx: EngineContext;

beforeAll(async () => {
  dns = await startDnsServer({ records: [dkimTxt(ARC_KEY, `v=DKIM1; k=rsa; p=${key.p}`)] });
  ctx = createEngineContext({ resolvers: [parseResolverAddress(dns.address)], timeoutMs: 2000, dnsRetries: 0 });
});
afterAll(async () => {
  await ctx?.close();
  await dns?.close();
});

const base = listMessage;
const sealed = (message: string, selector = 'arc1'): Promise<string> => sealOnce(message, key, 'sealer1.test', selector);

async function arcOf(message: string) {
  const buffer = Buffer.from(message, 'latin1');
  return validateArc(ctx, createMailDns(ctx), buffer, readHeaderBlock(buffer, 'test'), true);
}

describe('ARC validation of hostile and malformed messages', () => {
  it('passes a chain sealed once (the baseline the others break)', async () => {
    expect(await arcOf(await sealed(base()))).toMatchObject({ result: 'pass', instances: 1, reason: null });
  });

  it('does not validate a header section over the size cap, and says so', async () => {
    const filler = Array.from({ length: Math.ceil(MAX_ARC_HEADER_BYTES / 1000) + 1 }, (_, index) => `X-Filler-${index}: ${'a'.repeat(1000)}`);
    const message = await sealed(base(undefined, filler));
    const arc = await arcOf(message);
    expect(arc).toMatchObject({ result: 'not_checked', instances: 1 });
    expect(arc.reason).toMatch(/header section .* is too large for ARC validation/);
  });

  it('does not validate a header section of too many lines, however short they are', async () => {
    const folded = `X-Folded: a${'\r\n b'.repeat(MAX_ARC_HEADER_LINES)}`;
    const arc = await arcOf(await sealed(base(undefined, [folded])));
    expect(arc.result).toBe('not_checked');
    expect(arc.reason).toMatch(/too large for ARC validation/);
  });

  it('through analyzeHeaders too: a header section of 128 KiB of continuation lines leaves the chain not_checked', async () => {
    // 128 KiB of continuation lines: mailauth's field split takes seconds over it.
    const filler = [`X-Folded: a${'\r\n b'.repeat(32 * 1024)}`];
    // Added after sealing (nothing signs it): mailauth's sealer would take as long over it.
    const message = Buffer.from(`${filler.join('\r\n')}\r\n${await sealed(base())}`, 'latin1');
    const report = await analyzeHeaders(ctx, message, 'test');
    expect(report.authentication.arc.result).toBe('not_checked');
    expect(report.authentication.arc.reason).toMatch(/too large for ARC validation/);
  });

  it('looks up no key but the ARC keys, however many DKIM-Signatures the message carries', async () => {
    // Signed for real (the body hash right), so that a verifier gets as far as fetching each key.
    const content = await sealed(base());
    const { signatures } = await dkimSign(content, { canonicalization: 'relaxed/relaxed', signatureData: Array.from({ length: 30 }, (_, index) => ({ signingDomain: `signer${index}.test`, selector: 'sel', privateKey: key.pem })) } as unknown as Parameters<typeof dkimSign>[1]);
    const message = signatures + content;
    const before = dns.queries.length;
    const arc = await arcOf(message);
    const asked = dns.queries.slice(before).map((query) => query.name.toLowerCase());
    expect(asked.filter((name) => name !== ARC_KEY)).toEqual([]);
    expect(arc.result).toBe('pass');
  });

  it('fails, not temperror, a set whose key name is no domain name (a 64-octet selector)', async () => {
    const arc = await arcOf(await sealed(base(), 's'.repeat(64)));
    expect(arc.result).toBe('fail');
    expect(arc.reason).toMatch(/^a key name is not a domain name/);
  });
});

describe('a From domain that is no domain name', () => {
  it('leaves DMARC not_checked, not temperror', async () => {
    const report = await analyzeHeaders(ctx, Buffer.from(base('a@x..test')), 'test');
    expect(report.authentication.dmarc).toMatchObject({ result: 'not_checked', from_domain: 'x..test', reason: 'the From domain is not a domain name' });
    expect(report.findings.map((item) => item.id)).not.toContain('headers_dmarc_temperror');
  });
});
