import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsTransport, type DnsTransport } from '../../../src/engine/dns/dns-transport.js';
import { queryRecords } from '../../../src/engine/dns/query-records.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import { startDnsServer, type DnsTestServer } from '../../support/dns-server.js';
import { EXAMPLE_ZONE } from './example-zone.js';

let server: DnsTestServer;
let transport: DnsTransport;

beforeAll(async () => {
  server = await startDnsServer({
    records: [
      ...EXAMPLE_ZONE,
      { name: '2.0.0.127.dnsbl.test', type: 'A', ttl: 900, data: '127.0.0.2' },
      { name: 'dnsbl.test', type: 'SOA', data: { mname: 'ns.dnsbl.test', rname: 'admin.dnsbl.test', serial: 1 } },
    ],
    behaviours: { 'flaky.example.test': 'servfail' },
  });
  transport = createDnsTransport({ resolvers: [parseResolverAddress(server.address)], timeoutMs: 1000, retries: 0 });
});

afterAll(async () => {
  await transport.close();
  await server.close();
});

describe('queryRecords', () => {
  it('gives the typed data of the asked type in answer order with the lowest TTL', async () => {
    const mx = await queryRecords(transport, 'example.test', 'MX');
    expect(mx.records).toEqual([
      { preference: 10, exchange: 'mx1.example.test' },
      { preference: 20, exchange: 'mx2.example.test' },
    ]);
    expect(mx).toMatchObject({ name: 'example.test', type: 'MX', status: 'answer', rcode: 'NOERROR', ttl_seconds: 3600 });
  });

  it('leaves the CNAME chain out of records but keeps it in answers', async () => {
    const a = await queryRecords(transport, 'www.example.test', 'A');
    expect(a.records).toEqual(['192.0.2.80']);
    expect(a.ttl_seconds).toBe(30);
    expect(a.answers.map((answer) => answer.type)).toEqual(['CNAME', 'CNAME', 'A']);
  });

  it('reads TXT for SPF as the joined text', async () => {
    const txt = await queryRecords(transport, 'example.test', 'TXT');
    expect(txt.records.map((record) => record.text)).toEqual(['v=spf1 mx -all']);
  });

  it('tells a DNSBL listing from "not listed" by status', async () => {
    const listed = await queryRecords(transport, '2.0.0.127.dnsbl.test', 'A');
    expect(listed).toMatchObject({ status: 'answer', records: ['127.0.0.2'], ttl_seconds: 900 });
    const clean = await queryRecords(transport, '1.0.0.127.dnsbl.test', 'A');
    expect(clean).toMatchObject({ status: 'nxdomain', records: [], ttl_seconds: null });
  });

  it('throws upstream when the resolver cannot answer, so "absent" and "unknown" never mix', async () => {
    await expect(queryRecords(transport, 'flaky.example.test', 'TXT')).rejects.toMatchObject({
      code: 'upstream',
      details: { rcode: 'SERVFAIL' },
    });
  });
});
