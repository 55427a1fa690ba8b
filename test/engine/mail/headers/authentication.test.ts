/**
 * The authentication verdicts of `netintel headers`, recomputed against a
 * DNS server on 127.0.0.1 that serves the sender's SPF, DKIM and DMARC
 * records; messages signed by mailauth's signer (a verifier other than the
 * one under test).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext, type EngineContext } from '../../../../src/engine/context.js';
import { parseResolverAddress } from '../../../../src/engine/dns/resolver-address.js';
import { analyzeHeaders } from '../../../../src/engine/mail/headers/analyze-headers.js';
import { readAuthResults } from '../../../../src/engine/mail/headers/auth-results.js';
import { receivingHop } from '../../../../src/engine/mail/headers/authentication.js';
import type { Hop } from '../../../../src/engine/mail/headers/hops.js';
import { startDnsServer, type DnsTestServer } from '../../../support/dns-server.js';
import { dkimTxt, mailauthSign, rsaKey } from '../dkim-zone.js';

const key = rsaKey(2048);
let dns: DnsTestServer;
let ctx: EngineContext;

beforeAll(async () => {
  dns = await startDnsServer({
    records: [
      { name: 'auth.test', type: 'TXT', data: 'v=spf1 ip4:8.8.8.0/24 -all' },
      dkimTxt('s1._domainkey.auth.test', `v=DKIM1; k=rsa; p=${key.p}`),
      { name: '_dmarc.auth.test', type: 'TXT', data: 'v=DMARC1; p=reject' },
      { name: 'open.test', type: 'TXT', data: 'v=spf1 -all' },
    ],
    behaviours: { 'broken.test': 'servfail', '_dmarc.broken.test': 'servfail', 's1._domainkey.broken.test': 'servfail' },
  });
  ctx = createEngineContext({ resolvers: [parseResolverAddress(dns.address)], timeoutMs: 2000, dnsRetries: 0 });
});
afterAll(async () => {
  await ctx?.close();
  await dns?.close();
});

interface Made {
  ip?: string;
  domain?: string;
  stated?: string;
  sign?: boolean;
}

/** A message from DOMAIN through one relay at IP to mx.receiver.test, signed by s1 of auth.test. */
async function message({ ip = '8.8.8.8', domain = 'auth.test', stated, sign = true }: Made = {}): Promise<string> {
  const content = [
    `From: Alice <alice@${domain}>`,
    'To: bob@receiver.test',
    'Subject: figures',
    'Date: Tue, 1 Jul 2025 10:00:00 +0000',
    `Message-ID: <1@${domain}>`,
    '',
    'The figures are attached.',
    '',
  ].join('\r\n');
  const signed = sign ? (await mailauthSign(content, { canonicalization: 'relaxed/relaxed', signatureData: [{ signingDomain: domain, selector: 's1', privateKey: key.pem }] })).signatures : '';
  const trace = [
    `Return-Path: <bounce@${domain}>`,
    ...(stated === undefined ? [] : [`Authentication-Results: mx.receiver.test;\r\n ${stated}`]),
    `Received: from mail.${domain} (mail.${domain} [${ip}])\r\n\tby mx.receiver.test (Postfix) with ESMTPS id 4Q1abc\r\n\tfor <bob@receiver.test>; Tue,  1 Jul 2025 10:00:05 +0000 (UTC)`,
  ].join('\r\n');
  return `${trace}\r\n${signed}${content}`;
}

const analyze = (text: string) => analyzeHeaders(ctx, Buffer.from(text), 'test');
const ids = (report: { findings: Array<{ id: string }> }) => report.findings.map((item) => item.id).filter((id) => id.startsWith('headers_') && !['headers_delay_large'].includes(id));

describe('the authentication of a message, recomputed', () => {
  it('passes SPF, DKIM and DMARC, agreeing with the stated results', async () => {
    const report = await analyze(await message({ stated: 'spf=pass smtp.mailfrom=auth.test;\r\n dkim=pass header.d=auth.test;\r\n dmarc=pass header.from=auth.test' }));
    expect(report.authentication.spf).toMatchObject({ result: 'pass', hop: 1, ip: '8.8.8.8', helo: 'mail.auth.test', sender: 'bounce@auth.test', domain: 'auth.test' });
    expect(report.authentication.dkim).toMatchObject({ result: 'pass', signatures: [{ domain: 'auth.test', selector: 's1', result: 'pass', aligned: true }] });
    expect(report.authentication.dmarc).toMatchObject({ result: 'pass', from_domain: 'auth.test', policy: 'reject', spf_aligned: true, dkim_aligned: true });
    expect(report.authentication.stated.map((item) => [item.authserv_id, item.method, item.result])).toEqual([
      ['mx.receiver.test', 'spf', 'pass'],
      ['mx.receiver.test', 'dkim', 'pass'],
      ['mx.receiver.test', 'dmarc', 'pass'],
    ]);
    expect(ids(report)).toEqual([]);
  });

  it('fails DKIM for a body changed after signing, and says the stated dkim=pass disagrees; DMARC still passes on SPF', async () => {
    const text = (await message({ stated: 'spf=pass smtp.mailfrom=auth.test; dkim=pass header.d=auth.test' })).replace('attached.', 'attached. New bank details below.');
    const report = await analyze(text);
    expect(report.authentication.dkim.result).toBe('fail');
    expect(report.authentication.dmarc).toMatchObject({ result: 'pass', spf_aligned: true, dkim_aligned: false });
    expect(ids(report)).toEqual(['headers_dkim_fail', 'headers_auth_results_disagree']);
    expect(report.findings.find((item) => item.id === 'headers_auth_results_disagree')?.evidence).toMatchObject({ method: 'dkim', stated: ['pass'], recomputed: 'fail' });
  });

  it('fails SPF for an address the policy does not list, and DMARC under p=reject as an error', async () => {
    const text = (await message({ ip: '9.9.9.9' })).replace('attached.', 'attached!');
    const report = await analyze(text);
    expect(report.authentication.spf).toMatchObject({ result: 'fail', ip: '9.9.9.9' });
    expect(report.authentication.dmarc).toMatchObject({ result: 'fail', policy: 'reject' });
    expect(report.findings.filter((item) => item.id.startsWith('headers_')).map((item) => [item.id, item.severity])).toEqual([
      ['headers_spf_fail', 'error'],
      ['headers_dkim_fail', 'error'],
      ['headers_dmarc_fail', 'error'],
    ]);
  });

  it('says temperror, never pass or fail, when DNS does not answer, and states no disagreement then', async () => {
    const report = await analyze(await message({ domain: 'broken.test', stated: 'spf=fail smtp.mailfrom=broken.test; dkim=fail; dmarc=fail' }));
    expect(report.authentication.spf.result).toBe('temperror');
    expect(report.authentication.dkim.result).toBe('temperror');
    expect(report.authentication.dmarc.result).toBe('temperror');
    expect(report.findings.filter((item) => item.id.startsWith('headers_')).map((item) => [item.id, item.severity])).toEqual([
      ['headers_spf_temperror', 'unknown'],
      ['headers_dkim_temperror', 'unknown'],
      ['headers_dmarc_temperror', 'unknown'],
    ]);
  });

  it('cannot verify a signature without the body: not_checked, not fail', async () => {
    const text = await message();
    const report = await analyze(text.slice(0, text.indexOf('\r\n\r\n') + 2));
    expect(report.authentication.dkim.result).toBe('not_checked');
    expect(report.authentication.dkim.signatures[0]).toMatchObject({ result: 'not_checked' });
    expect(report.authentication.dmarc.result).toBe('pass');
    // A header block pasted with the empty line after it and nothing more is the same.
    const withBlankLine = await analyze(`${text.slice(0, text.indexOf('\r\n\r\n'))}\r\n\r\n`);
    expect(withBlankLine.authentication.dkim.result).toBe('not_checked');
  });

  it('checks SPF for the hop into the receiving organisation, past private and internal relays', async () => {
    const text = (await message()).replace(
      'Received:',
      'Received: from mx.receiver.test (mx.receiver.test [10.0.0.5]) by imap.receiver.test with LMTP id 9; Tue, 1 Jul 2025 10:00:06 +0000\r\nReceived: from edge.receiver.test (edge.receiver.test [1.1.1.1]) by mx2.receiver.test with ESMTP id 8; Tue, 1 Jul 2025 10:00:06 +0000\r\nReceived:',
    );
    const report = await analyze(text);
    expect(report.authentication.spf).toMatchObject({ result: 'pass', hop: 1, ip: '8.8.8.8' });
  });
});

describe('the hop SPF is checked for', () => {
  const hop = (index: number, from: string, ip: string, by: string, protocol: string) =>
    ({ hop: index, parsed: true, from_helo: from, from_rdns: from, from_ip: ip, by_host: by, protocol }) as unknown as Hop;

  it('is the newest public hop between organisations, past internal relays with public addresses', async () => {
    const hops = [
      hop(1, 'laptop.example.net', '9.9.9.9', 'smtp.example.com', 'ESMTPSA'),
      hop(2, 'out.example.com', '8.8.8.8', 'mx.protection.outlook.com', 'ESMTPS'),
      hop(3, 'AM6PR04.prod.outlook.com', '2603:10a6:20b:ac::12', 'DB9PR04.prod.outlook.com', 'Microsoft SMTP Server'),
    ];
    expect((await receivingHop(hops))?.hop).toBe(2);
  });

  it('is the provider\'s own hop when the message never left it, never the authenticated submission', async () => {
    const hops = [hop(1, 'laptop', '9.9.9.9', 'smtp.gmail.com', 'ESMTPSA'), hop(2, 'mail-sor-f41.google.com', '209.85.220.41', 'mx.google.com', 'SMTPS')];
    expect((await receivingHop(hops))?.hop).toBe(2);
  });

  it('is none when every hop is private or an authenticated submission', async () => {
    expect(await receivingHop([hop(1, 'laptop', '9.9.9.9', 'smtp.example.com', 'ESMTPSA'), hop(2, 'smtp.example.com', '10.0.0.1', 'mx.example.org', 'ESMTP')])).toBeNull();
  });
});

describe('Authentication-Results (RFC 8601 §2.2)', () => {
  it('reads the results, reasons and properties, comments and quoted strings as the RFC writes them', () => {
    const value = 'mx.example.org 1; (a comment) spf=pass (sender SPF authorized) smtp.mailfrom=example.com;\r\n dkim=fail reason="body hash did not verify" header.d=example.com header.s=sel header.b=AbCd;\r\n dmarc=pass (p=reject dis=none) header.from=example.com; arc=none';
    expect(readAuthResults(value, 1)).toEqual([
      { field: 1, authserv_id: 'mx.example.org', method: 'spf', result: 'pass', reason: null, properties: { 'smtp.mailfrom': 'example.com' } },
      { field: 1, authserv_id: 'mx.example.org', method: 'dkim', result: 'fail', reason: 'body hash did not verify', properties: { 'header.d': 'example.com', 'header.s': 'sel', 'header.b': 'AbCd' } },
      { field: 1, authserv_id: 'mx.example.org', method: 'dmarc', result: 'pass', reason: null, properties: { 'header.from': 'example.com' } },
      { field: 1, authserv_id: 'mx.example.org', method: 'arc', result: 'none', reason: null, properties: {} },
    ]);
  });

  it('gives nothing for "none" and for a field without an authserv-id', () => {
    expect(readAuthResults('mx.example.org; none', 1)).toEqual([]);
    expect(readAuthResults('spf=pass smtp.mailfrom=example.com', 1)).toEqual([]);
  });

  it('takes any text without throwing, every result a method and a result of word characters', () => {
    const piece = fc.constantFrom('\f', '\u00a0', '\x00', 'mx.example.org', ';', ' ', '(', ')', '"', '\\', '=', 'spf=pass', 'dkim=fail', 'reason=', 'header.d=x', '/1', '\r\n ');
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 200 }), fc.array(piece, { maxLength: 50 }).map((parts) => parts.join(''))), (text) => {
        for (const result of readAuthResults(text, 1)) {
          expect(result.method).toMatch(/^[a-z0-9_-]+$/);
          expect(result.result).toMatch(/^[a-z0-9_-]+$/);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('Authentication-Results of hostile length', () => {
  it('reads a long run of blanks without "=" in linear time', () => {
    const started = process.hrtime.bigint();
    expect(readAuthResults(`mx.example.org; spf=pass x${' '.repeat(16_000)}y`, 1)).toHaveLength(1);
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(200);
  });
});
