import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsTransport, type DnsTransport } from '../../../src/engine/dns/dns-transport.js';
import { resolveDns, resolveDnsTypesSettled, type DnsTypeSettled } from '../../../src/engine/dns/resolve-dns.js';
import { parseDnsTarget } from '../../../src/engine/dns/dns-name.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import type { DnsQueryType } from '../../../src/engine/dns/dns-type.js';
import { NetintelError } from '../../../src/errors.js';
import { startDnsServer, type DnsTestServer } from '../../support/dns-server.js';
import { EXAMPLE_ZONE, LONG_TXT_STRINGS, V6_REVERSE } from './example-zone.js';

let server: DnsTestServer;
let transport: DnsTransport;

beforeAll(async () => {
  server = await startDnsServer({ records: EXAMPLE_ZONE, behaviours: { 'broken.example.test': 'servfail' } });
  transport = createDnsTransport({ resolvers: [parseResolverAddress(server.address)], timeoutMs: 1000, retries: 0 });
});

afterAll(async () => {
  await transport.close();
  await server.close();
});

async function one(domain: string, type: DnsQueryType) {
  const [result] = await resolveDns(transport, { domain, types: [type] });
  if (!result) throw new Error('no result');
  return result;
}

describe('resolveDns', () => {
  it('returns A records with their integer TTLs, the resolver that answered and the status "answer"', async () => {
    const result = await one('example.test', 'A');
    expect(result).toMatchObject({
      kind: 'dns',
      target: 'example.test',
      domain: 'example.test',
      domain_unicode: 'example.test',
      type: 'A',
      status: 'answer',
      rcode: 'NOERROR',
      resolver: server.address,
      transport: 'udp',
    });
    expect(result.answers).toEqual([
      { name: 'example.test', type: 'A', ttl_seconds: 300, data: '192.0.2.10' },
      { name: 'example.test', type: 'A', ttl_seconds: 300, data: '192.0.2.11' },
    ]);
    expect(result.latency_ms).toBeGreaterThanOrEqual(0);
    expect(result.latency_ms).toBeLessThan(1000);
  });

  it('asks A when no type is given for a domain', async () => {
    const results = await resolveDns(transport, { domain: 'example.test' });
    expect(results.map((r) => r.type)).toEqual(['A']);
  });

  it('gives typed data for AAAA, MX, NS, SOA, CAA and SRV', async () => {
    expect((await one('example.test', 'AAAA')).answers).toEqual([
      { name: 'example.test', type: 'AAAA', ttl_seconds: 300, data: '2001:db8::10' },
    ]);
    expect((await one('example.test', 'MX')).answers).toEqual([
      { name: 'example.test', type: 'MX', ttl_seconds: 3600, data: { preference: 10, exchange: 'mx1.example.test' } },
      { name: 'example.test', type: 'MX', ttl_seconds: 3600, data: { preference: 20, exchange: 'mx2.example.test' } },
    ]);
    expect((await one('example.test', 'NS')).answers.map((a) => a.data)).toEqual(['ns1.example.test', 'ns2.example.test']);
    expect((await one('example.test', 'SOA')).answers).toEqual([
      {
        name: 'example.test',
        type: 'SOA',
        ttl_seconds: 3600,
        data: {
          mname: 'ns1.example.test',
          rname: 'hostmaster.example.test',
          serial: 2024010101,
          refresh: 7200,
          retry: 900,
          expire: 1209600,
          minimum: 300,
        },
      },
    ]);
    expect((await one('example.test', 'CAA')).answers.map((a) => a.data)).toEqual([
      { flags: 0, tag: 'issue', value: 'letsencrypt.org' },
      { flags: 128, tag: 'iodef', value: 'mailto:security@example.test' },
    ]);
    expect((await one('_sip._tcp.example.test', 'SRV')).answers).toEqual([
      {
        name: '_sip._tcp.example.test',
        type: 'SRV',
        ttl_seconds: 120,
        data: { priority: 10, weight: 60, port: 5060, target: 'sip.example.test' },
      },
    ]);
  });

  it('joins a TXT record of several character strings over 255 octets and keeps the raw strings', async () => {
    const result = await one('long.example.test', 'TXT');
    expect(result.answers).toHaveLength(1);
    expect(result.answers[0]).toEqual({
      name: 'long.example.test',
      type: 'TXT',
      ttl_seconds: 60,
      data: { text: LONG_TXT_STRINGS.join(''), strings: LONG_TXT_STRINGS },
    });
    expect(LONG_TXT_STRINGS.join('')).toHaveLength(520);
  });

  it('reads underscore names such as _dmarc', async () => {
    const result = await one('_dmarc.example.test', 'TXT');
    expect(result.answers.map((a) => a.data)).toEqual([{ text: 'v=DMARC1; p=reject', strings: ['v=DMARC1; p=reject'] }]);
  });

  it('lists the CNAME chain before the records of the asked type', async () => {
    const result = await one('www.example.test', 'A');
    expect(result.status).toBe('answer');
    expect(result.answers).toEqual([
      { name: 'www.example.test', type: 'CNAME', ttl_seconds: 120, data: 'web.example.test' },
      { name: 'web.example.test', type: 'CNAME', ttl_seconds: 60, data: 'origin.example.test' },
      { name: 'origin.example.test', type: 'A', ttl_seconds: 30, data: '192.0.2.80' },
    ]);
  });

  it('answers a CNAME question with the CNAME itself', async () => {
    const result = await one('www.example.test', 'CNAME');
    expect(result.status).toBe('answer');
    expect(result.answers).toEqual([{ name: 'www.example.test', type: 'CNAME', ttl_seconds: 120, data: 'web.example.test' }]);
  });

  it('returns NXDOMAIN as a result with status "nxdomain" and no answers', async () => {
    const result = await one('nope.example.test', 'A');
    expect(result).toMatchObject({ status: 'nxdomain', rcode: 'NXDOMAIN', answers: [], domain: 'nope.example.test' });
  });

  it('tells NODATA apart from NXDOMAIN when the name exists without records of the type', async () => {
    expect(await one('mx1.example.test', 'MX')).toMatchObject({ status: 'nodata', rcode: 'NOERROR', answers: [] });
    // An empty non-terminal exists too (RFC 8020).
    expect(await one('branch.example.test', 'A')).toMatchObject({ status: 'nodata', rcode: 'NOERROR', answers: [] });
  });

  it('reports a CNAME to a missing name as NXDOMAIN and still shows the CNAME', async () => {
    const result = await one('dangling.example.test', 'A');
    expect(result.status).toBe('nxdomain');
    expect(result.answers).toEqual([
      { name: 'dangling.example.test', type: 'CNAME', ttl_seconds: 120, data: 'gone.example.test' },
    ]);
  });

  it('queries an internationalised name in punycode and shows both forms', async () => {
    const result = await one('Bücher.Example.Test.', 'A');
    expect(result).toMatchObject({
      target: 'xn--bcher-kva.example.test',
      domain: 'xn--bcher-kva.example.test',
      domain_unicode: 'bücher.example.test',
      status: 'answer',
    });
    expect(result.answers.map((a) => a.data)).toEqual(['192.0.2.20']);
    expect(server.queries.at(-1)).toMatchObject({ name: 'xn--bcher-kva.example.test', type: 'A' });
  });

  it('looks up PTR at in-addr.arpa for an IPv4 target', async () => {
    const [result] = await resolveDns(transport, { domain: '192.0.2.10' });
    expect(result).toMatchObject({
      target: '192.0.2.10',
      domain: '10.2.0.192.in-addr.arpa',
      type: 'PTR',
      status: 'answer',
      answers: [{ name: '10.2.0.192.in-addr.arpa', type: 'PTR', ttl_seconds: 3600, data: 'example.test' }],
    });
  });

  it('looks up PTR at ip6.arpa for an IPv6 target written in any form', async () => {
    const [result] = await resolveDns(transport, { domain: '2001:DB8:0:0::1' });
    expect(result).toMatchObject({
      target: '2001:db8::1',
      domain: V6_REVERSE,
      type: 'PTR',
      status: 'answer',
    });
    expect(result?.answers.map((a) => a.data)).toEqual(['v6.example.test']);
  });

  it('gives one result per type for ALL, in the order A AAAA CNAME MX NS SOA TXT CAA, asked concurrently', async () => {
    const before = server.queries.length;
    const results = await resolveDns(transport, { domain: 'example.test', types: ['ALL'] });
    expect(results.map((r) => r.type)).toEqual(['A', 'AAAA', 'CNAME', 'MX', 'NS', 'SOA', 'TXT', 'CAA']);
    expect(results.map((r) => r.status)).toEqual(['answer', 'answer', 'nodata', 'answer', 'answer', 'answer', 'answer', 'answer']);
    expect(server.queries.slice(before).map((q) => q.type).sort()).toEqual(
      ['A', 'AAAA', 'CAA', 'CNAME', 'MX', 'NS', 'SOA', 'TXT'],
    );
  });

  it('asks each type once when types repeat', async () => {
    const results = await resolveDns(transport, { domain: 'example.test', types: ['MX', 'ALL', 'MX'] });
    expect(results.map((r) => r.type)).toEqual(['MX', 'A', 'AAAA', 'CNAME', 'NS', 'SOA', 'TXT', 'CAA']);
  });

  it('refuses a bad name with invalid_input before sending anything', async () => {
    const before = server.queries.length;
    const error = await resolveDns(transport, { domain: 'bad name.example' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetintelError);
    expect(error).toMatchObject({ code: 'invalid_input' });
    expect((error as Error).message).toContain('"bad name.example"');
    expect(server.queries.length).toBe(before);
  });
});

describe('resolveDnsTypesSettled', () => {
  const settle = (domain: string, types: Array<'A' | 'MX' | 'TXT' | 'AAAA'>) =>
    new Promise<DnsTypeSettled[]>((resolve) => resolveDnsTypesSettled(transport, parseDnsTarget(domain), types, resolve));

  it('gives each type its record in the order asked', async () => {
    const settled = await settle('example.test', ['TXT', 'A', 'MX']);
    expect(settled.map((r) => (r instanceof NetintelError ? r.code : [r.type, r.status, r.answers.length]))).toEqual([
      ['TXT', 'answer', 1],
      ['A', 'answer', 2],
      ['MX', 'answer', 2],
    ]);
    expect(settled[1]).toMatchObject({ kind: 'dns', target: 'example.test', domain: 'example.test', rcode: 'NOERROR', transport: 'udp', resolver: server.address });
  });

  it('keeps NXDOMAIN and NODATA as records', async () => {
    const [missing] = await settle('missing.example.test', ['A']);
    const [noAaaa] = await settle('mx1.example.test', ['AAAA']);
    expect(missing).toMatchObject({ status: 'nxdomain', rcode: 'NXDOMAIN' });
    expect(noAaaa).toMatchObject({ status: 'nodata', rcode: 'NOERROR', answers: [] });
  });

  it('gives every type of a failing name its own error, leaving targets asked alongside unaffected', async () => {
    const settled = await settle('broken.example.test', ['A', 'MX']);
    expect(settled.every((r) => r instanceof NetintelError && r.code === 'upstream')).toBe(true);
    const mixed = await Promise.all([settle('broken.example.test', ['A']), settle('example.test', ['A'])]);
    expect(mixed[0]![0]).toMatchObject({ code: 'upstream', details: { rcode: 'SERVFAIL' } });
    expect(mixed[1]![0]).toMatchObject({ status: 'answer' });
  });

  it('calls back with an empty list when no type is asked', async () => {
    expect(await settle('example.test', [])).toEqual([]);
  });
});
