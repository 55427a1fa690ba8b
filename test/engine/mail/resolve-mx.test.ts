/** resolveMx() against a real DNS server on 127.0.0.1 serving the MX zone of mail-zone.ts. */
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext, type EngineContext } from '../../../src/engine/context.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import type { Finding } from '../../../src/engine/findings.js';
import { resolveMx } from '../../../src/engine/mail/resolve-mx.js';
import { startDnsServer, type DnsTestServer } from '../../support/dns-server.js';
import { MAIL_BEHAVIOURS, MX_ZONE } from './mail-zone.js';

let server: DnsTestServer;
let ctx: EngineContext;

beforeAll(async () => {
  server = await startDnsServer({ records: MX_ZONE, behaviours: MAIL_BEHAVIOURS });
  ctx = createEngineContext({ resolvers: [parseResolverAddress(server.address)], timeoutMs: 1000, dnsRetries: 0 });
});

afterAll(async () => {
  await ctx.close();
  await server.close();
});

const byId = (findings: readonly Finding[], id: string) => findings.find((item) => item.id === id);

describe('resolveMx', () => {
  it('sorts MX records by preference and resolves each host with PTR and FCrDNS', async () => {
    const result = await resolveMx(ctx, 'good.test');
    expect(result).toMatchObject({ kind: 'mx', domain: 'good.test', status: 'mx', implicit_addresses: [], ttl_seconds: 300 });
    expect(result.records).toEqual([
      {
        preference: 10,
        exchange: 'mx1.good.test',
        exchange_unicode: 'mx1.good.test',
        cname: null,
        ip_literal: false,
        error: null,
        addresses: [
          { address: '45.33.32.156', family: 4, reserved: null, ptr: ['mx1.good.test'], fcrdns: true },
          { address: '2600:3c01::f03c:91ff:fe18:bb2f', family: 6, reserved: null, ptr: ['mx1.good.test'], fcrdns: true },
        ],
      },
      {
        preference: 20,
        exchange: 'mx2.good.test',
        exchange_unicode: 'mx2.good.test',
        cname: null,
        ip_literal: false,
        error: null,
        addresses: [{ address: '45.33.32.157', family: 4, reserved: null, ptr: ['elsewhere.example.net'], fcrdns: false }],
      },
    ]);
    expect(byId(result.findings, 'mx_records_found')).toMatchObject({ severity: 'pass' });
    expect(byId(result.findings, 'mx_fcrdns')).toMatchObject({ severity: 'pass' });
    expect(byId(result.findings, 'mx_fcrdns_mismatch')).toMatchObject({ severity: 'warning', evidence: { address: '45.33.32.157' } });
  });

  it('recognises a null MX as intentional, and a null MX among others as an error', async () => {
    const result = await resolveMx(ctx, 'nullmx.test');
    expect(result.status).toBe('null_mx');
    expect(result.records).toEqual([{ preference: 0, exchange: '.', exchange_unicode: '.', cname: null, ip_literal: false, addresses: [], error: null }]);
    expect(result.findings.map((item) => [item.id, item.severity])).toEqual([['mx_null', 'info']]);
    expect(byId((await resolveMx(ctx, 'mixednull.test')).findings, 'mx_null_mixed')).toMatchObject({ severity: 'error', rfc: 'RFC 7505 §3' });
    expect(byId((await resolveMx(ctx, 'nullpref.test')).findings, 'mx_null_preference')).toMatchObject({ severity: 'warning' });
  });

  it('falls back to the implicit MX of RFC 5321 §5.1, and says when there is nothing at all', async () => {
    const implicit = await resolveMx(ctx, 'nomx.test');
    expect(implicit).toMatchObject({ status: 'implicit', records: [], implicit_addresses: ['45.33.32.158'] });
    expect(byId(implicit.findings, 'mx_missing_implicit')).toMatchObject({ severity: 'warning', rfc: 'RFC 5321 §5.1' });
    const none = await resolveMx(ctx, 'nomail.test');
    expect(none.status).toBe('no_mail');
    expect(byId(none.findings, 'mx_missing')).toMatchObject({ severity: 'warning' });
    const missing = await resolveMx(ctx, 'nowhere.test');
    expect(missing.status).toBe('nxdomain');
    expect(byId(missing.findings, 'mx_domain_not_found')).toMatchObject({ severity: 'error' });
  });

  it('flags an MX pointing to a CNAME, to an IP literal, to a name without addresses, to a private address', async () => {
    const alias = await resolveMx(ctx, 'cname.test');
    expect(alias.records[0]).toMatchObject({ exchange: 'alias.cname.test', cname: 'real.cname.test', addresses: [{ address: '45.33.32.159' }] });
    expect(byId(alias.findings, 'mx_cname')).toMatchObject({ severity: 'warning' });
    const literal = await resolveMx(ctx, 'literal.test');
    expect(literal.records[0]).toMatchObject({ exchange: '45.33.32.160', ip_literal: true, addresses: [] });
    expect(byId(literal.findings, 'mx_ip_literal')).toMatchObject({ severity: 'error' });
    expect(byId((await resolveMx(ctx, 'noaddr.test')).findings, 'mx_no_address')).toMatchObject({ severity: 'error', evidence: { status: 'nxdomain' } });
    const reserved = await resolveMx(ctx, 'private.test');
    expect(reserved.records[0]!.addresses[0]).toMatchObject({ address: '10.0.0.25', reserved: 'private (RFC 1918)' });
    expect(byId(reserved.findings, 'mx_reserved_address')).toMatchObject({ severity: 'error' });
    expect(byId(reserved.findings, 'mx_no_ptr')).toMatchObject({ severity: 'warning' });
  });

  it('flags an exchange listed twice, and resolves it once', async () => {
    const result = await resolveMx(ctx, 'dup.test');
    expect(result.records.map((record) => record.preference)).toEqual([10, 20]);
    expect(byId(result.findings, 'mx_duplicate_exchange')).toMatchObject({ severity: 'warning', evidence: { exchange: 'mx1.good.test', count: 2 } });
    expect(result.findings.filter((item) => item.id === 'mx_fcrdns')).toHaveLength(2);
  });

  it('keeps a host whose lookup timed out apart from a host without addresses', async () => {
    const result = await resolveMx(ctx, 'slowmx.test');
    expect(result.records[0]).toMatchObject({ exchange: 'silentmx.test', addresses: [], error: { code: 'timeout' } });
    expect(byId(result.findings, 'mx_lookup_failed')).toMatchObject({ severity: 'unknown', evidence: { error: { code: 'timeout' } } });
    expect(byId(result.findings, 'mx_no_address')).toBeUndefined();
    const ptr = await resolveMx(ctx, 'ptrslow.test');
    expect(ptr.records[0]!.addresses[0]).toMatchObject({ ptr: null, fcrdns: null });
    expect(byId(ptr.findings, 'mx_ptr_lookup_failed')).toMatchObject({ severity: 'unknown', evidence: { error: { code: 'timeout' } } });
    expect(byId(ptr.findings, 'mx_no_ptr')).toBeUndefined();
  });

  it('keeps FCrDNS unknown when the forward lookup of the PTR name failed: a part that could not run, not a pass nor a mismatch', async () => {
    const result = await resolveMx(ctx, 'fwdfail.test');
    expect(result.records[0]!.addresses[0]).toMatchObject({ address: '45.33.32.171', ptr: ['host.fwdfail.example'], fcrdns: null });
    expect(byId(result.findings, 'mx_fcrdns_lookup_failed')).toMatchObject({ severity: 'unknown', evidence: { ptr: ['host.fwdfail.example'], error: { code: 'upstream' } } });
    expect(byId(result.findings, 'mx_fcrdns_mismatch')).toBeUndefined();
    expect(byId(result.findings, 'mx_fcrdns')).toBeUndefined();
  });

  it('throws when the MX lookup itself fails, never answering "no MX"', async () => {
    await expect(resolveMx(ctx, 'silentmxroot.test')).rejects.toMatchObject({ code: 'timeout' });
    await expect(resolveMx(ctx, 'bad name.test')).rejects.toMatchObject({ code: 'invalid_input' });
  });
});

describe('resolveMx: an implicit MX one family of which could not be resolved', () => {
  it('checks the addresses that answered and says the others are unknown (exit 7), rather than failing the domain; fails it when nothing was learnt', async () => {
    // AAAA questions get SERVFAIL; A questions are answered from the zone.
    const dns = await startDnsServer({
      records: [
        { name: 'half.test', type: 'A', data: '45.33.32.180' },
        { name: 'none.test', type: 'TXT', data: 'no address' },
      ],
      script: (query) => (query.questions![0]!.type === 'AAAA' ? [{ message: dnsPacket.encode({ id: query.id, type: 'response', flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | 2, questions: query.questions }) }] : undefined),
    });
    const own = createEngineContext({ resolvers: [parseResolverAddress(dns.address)], timeoutMs: 1000, dnsRetries: 0 });
    try {
      const half = await resolveMx(own, 'half.test');
      expect(half).toMatchObject({ status: 'implicit', implicit_addresses: ['45.33.32.180'] });
      expect(byId(half.findings, 'mx_lookup_failed')).toMatchObject({ severity: 'unknown', evidence: { exchange: 'half.test', error: { code: 'upstream' } } });
      expect(byId(half.findings, 'mx_missing_implicit')).toBeDefined();
      // No address from the family that answered: nothing is known, and "no addresses" would be a guess.
      await expect(resolveMx(own, 'none.test')).rejects.toMatchObject({ code: 'upstream', message: expect.stringContaining('none.test has no MX records, and the A/AAAA lookup for the implicit MX failed') });
    } finally {
      await own.close();
      await dns.close();
    }
  });
});

describe('resolveMx: a mail host at an address no mail goes to', () => {
  it('flags an anycast service address (PCP, RFC 7723) and an ORCHIDv2 identifier as reserved, though IANA calls them globally reachable', async () => {
    const dns = await startDnsServer({
      records: [
        { name: 'anycast.test', type: 'MX', data: { preference: 10, exchange: 'mx.anycast.test' } },
        { name: 'mx.anycast.test', type: 'A', data: '192.0.0.9' },
        { name: 'mx.anycast.test', type: 'AAAA', data: '2001:20::25' },
      ],
    });
    const own = createEngineContext({ resolvers: [parseResolverAddress(dns.address)], timeoutMs: 1000, dnsRetries: 0 });
    try {
      const result = await resolveMx(own, 'anycast.test');
      expect(result.records[0]!.addresses.map((item) => [item.address, item.reserved])).toEqual([
        ['192.0.0.9', 'Port Control Protocol anycast (RFC 7723)'],
        ['2001:20::25', 'ORCHIDv2 (RFC 7343)'],
      ]);
      expect(result.findings.filter((item) => item.id === 'mx_reserved_address')).toHaveLength(2);
    } finally {
      await own.close();
      await dns.close();
    }
  });
});
