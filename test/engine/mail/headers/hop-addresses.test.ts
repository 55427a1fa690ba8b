/**
 * The hop addresses of `netintel headers`: public ones described by the IP
 * engine, special-purpose ones said as such and not looked up, and with
 * the blacklist option each public one asked of DNS blocklists served by a
 * DNS server on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeHeaders } from '../../../../src/engine/mail/headers/analyze-headers.js';
import type { EngineContext } from '../../../../src/engine/context.js';
import { startDnsServer, type DnsTestServer } from '../../../support/dns-server.js';
import { contextFor, zoneRecords } from '../../blacklist/dnsbl-fixtures.js';

const MESSAGE = [
  'Received: from mx.example.org (mx.example.org [10.1.2.3]) by imap.example.org with LMTP id 3; Tue, 1 Jul 2025 10:00:03 +0000',
  'Received: from relay.example.net (relay.example.net [9.9.9.9]) by mx.example.org with ESMTP id 2; Tue, 1 Jul 2025 10:00:02 +0000',
  'Received: from mail.example.com (mail.example.com [8.8.8.8]) by relay.example.net with ESMTP id 1; Tue, 1 Jul 2025 10:00:01 +0000',
  'Subject: hops',
  '',
].join('\r\n');

let dns: DnsTestServer;
let ctx: EngineContext;
beforeAll(async () => {
  dns = await startDnsServer({
    records: [...zoneRecords('bl.test.example', { '9.9.9.9': { a: ['127.0.0.2'], txt: 'listed for the test' } }), ...zoneRecords('other.test.example', {})],
    behaviours: { 'example.com': 'refused', 'example.net': 'refused', 'example.org': 'refused', '_dmarc.example.com': 'refused' },
  });
  ctx = contextFor(dns.address, 2000);
});
afterAll(async () => {
  await ctx?.close();
  await dns?.close();
});

describe('hop addresses', () => {
  it('describes public addresses with the IP engine and says special-purpose ones without looking them up', async () => {
    const report = await analyzeHeaders(ctx, Buffer.from(MESSAGE), 'test');
    expect(report.hops.map((hop) => hop.address?.scope)).toEqual(['public', 'public', 'special']);
    expect(report.hops[0]!.address).toMatchObject({ ip: '8.8.8.8', country_code: 'US', asn: 15169, blacklist: null });
    expect(report.hops[2]!.address).toMatchObject({ ip: '10.1.2.3', special_purpose: 'private (RFC 1918)', asn: null, country_code: null });
  });

  it('asks the blocklists about each public address only, and reports a listing', async () => {
    const report = await analyzeHeaders(ctx, Buffer.from(MESSAGE), 'test', { blacklist: { zones: 'bl.test.example,other.test.example' } });
    expect(report.hops.map((hop) => hop.address?.blacklist ?? null)).toEqual([
      { status: 'clean', listed_zones: [], zones: 2 },
      { status: 'listed', listed_zones: ['bl.test.example'], zones: 2 },
      null,
    ]);
    expect(report.findings.filter((item) => item.id === 'headers_hop_listed').map((item) => item.evidence)).toEqual([{ hop: 2, ip: '9.9.9.9', zones: ['bl.test.example'] }]);
  });

  it('never says clean when a list does not answer', async () => {
    const report = await analyzeHeaders(ctx, Buffer.from(MESSAGE), 'test', { blacklist: { zones: 'quiet.test.example:ip' } });
    expect(report.hops[0]!.address?.blacklist?.status).not.toBe('clean');
    expect(['unknown', 'incomplete']).toContain(report.hops[0]!.address?.blacklist?.status);
    // Said as unchecked, so that the run exits as partial (7), never as checked.
    expect(report.findings.find((item) => item.id === 'headers_blacklist_unknown')).toMatchObject({ severity: 'unknown', evidence: { addresses: ['9.9.9.9', '8.8.8.8'] } });
  });
});

describe('the blocklist cap', () => {
  it('asks at most 16 distinct public addresses, the newest hops first, and says the rest were not asked', async () => {
    const lines = Array.from({ length: 20 }, (_, index) => `Received: from h${index}.example (h${index}.example [8.8.${index}.8]) by r${index}.example with ESMTP id ${index}; Tue, 1 Jul 2025 10:00:${String(40 - index).padStart(2, '0')} +0000`);
    const report = await analyzeHeaders(ctx, Buffer.from(`${lines.join('\r\n')}\r\nSubject: many\r\n`), 'many', { blacklist: { zones: 'bl.test.example' } });
    const asked = report.hops.filter((hop) => hop.address?.blacklist !== null).map((hop) => hop.address!.ip);
    expect(asked).toHaveLength(16);
    // The top field is the newest hop (hop 20): the cap keeps hops 5 to 20.
    expect(report.hops.slice(0, 4).every((hop) => hop.address?.blacklist === null)).toBe(true);
    expect(report.findings.find((item) => item.id === 'headers_blacklist_limit')?.evidence).toEqual({ addresses: 20, asked: 16 });
  });
});
