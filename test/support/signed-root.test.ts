import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext } from '../../src/engine/context.js';
import { validateRrset } from '../../src/engine/dns/dnssec/validate.js';
import { parseTrustAnchors } from '../../src/engine/dns/dnssec/trust-anchor.js';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { startDnsServer, type DnsTestServer } from './dns-server.js';
import dnsPacket from 'dns-packet';
import { rootAnswer, TEST_ROOT_ANCHOR_FILE, testRootAnchorText } from './signed-root.js';

const RECORDS = [{ name: 'www.example.com', type: 'A' as const, data: '192.0.2.1' }];

describe('the test root signed on the fly (signed-root.ts)', () => {
  let signing: DnsTestServer;
  let stripping: DnsTestServer;
  beforeAll(async () => {
    signing = await startDnsServer({ records: RECORDS, signedRoot: true });
    stripping = await startDnsServer({ records: RECORDS });
  });
  afterAll(async () => {
    await Promise.all([signing.close(), stripping.close()]);
  });

  const anchor = () => parseTrustAnchors(readFileSync(TEST_ROOT_ANCHOR_FILE, 'utf8'));
  const contextOf = (server: DnsTestServer) => createEngineContext({ resolvers: [parseResolverAddress(server.address)], timeoutMs: 2000, dnsRetries: 0 });

  it('is the key of the committed trust anchor file', () => {
    expect(readFileSync(TEST_ROOT_ANCHOR_FILE, 'utf8')).toContain(testRootAnchorText().trim());
  });

  it('makes a name of the zone validate as an unsigned delegation below a secure root', async () => {
    const ctx = contextOf(signing);
    const verdict = await validateRrset(ctx, 'www.example.com', 'A', { trustAnchors: anchor() });
    await ctx.close();
    expect(verdict.status).toBe('insecure');
    expect(verdict.error).toBeNull();
    expect(verdict.chain.map((link) => [link.zone, link.status])).toEqual([
      ['.', 'secure'],
      ['com.', 'insecure'],
    ]);
    expect(verdict.reason).toMatch(/com\. is an unsigned delegation/);
  });

  it('under another key is bogus at the root: the signatures are the test key\'s own', async () => {
    const ctx = contextOf(signing);
    const verdict = await validateRrset(ctx, 'www.example.com', 'A');
    await ctx.close();
    expect(verdict.status).toBe('bogus');
    expect(verdict.chain[0]).toMatchObject({ zone: '.', status: 'bogus' });
  });

  it('without it the server passes no DNSSEC records, and DNSSEC is not checked', async () => {
    const ctx = contextOf(stripping);
    const verdict = await validateRrset(ctx, 'www.example.com', 'A', { trustAnchors: anchor() });
    await ctx.close();
    expect(verdict.status).toBe('indeterminate');
    expect(verdict.error).toEqual({ code: 'upstream', message: expect.stringMatching(/gave no DNSKEY RRset for the trust anchor \.: it does not pass DNSSEC records on/) });
  });

  it('a resolver that drops the DO bit (the root DNSKEY RRset without its RRSIG) leaves DNSSEC unchecked too, not bogus', async () => {
    const server = await startDnsServer({
      records: RECORDS,
      signedRoot: true,
      script: (query) => {
        const question = query.questions![0]!;
        if (question.name !== '.' || question.type !== 'DNSKEY') return undefined;
        const unsigned = rootAnswer('.', 'DNSKEY', false)!;
        return [{ message: dnsPacket.encode({ type: 'response', id: query.id ?? 0, flags: dnsPacket.RECURSION_AVAILABLE, questions: [question], answers: unsigned.answers }) }];
      },
    });
    const ctx = contextOf(server);
    const verdict = await validateRrset(ctx, 'www.example.com', 'A', { trustAnchors: anchor() });
    await Promise.all([ctx.close(), server.close()]);
    expect(verdict.status).toBe('indeterminate');
    expect(verdict.error).toEqual({ code: 'upstream', message: expect.stringMatching(/gave the DNSKEY RRset of the trust anchor \. without its RRSIG/) });
    expect(verdict.chain).toEqual([expect.objectContaining({ zone: '.', status: 'indeterminate' })]);
  });
});
