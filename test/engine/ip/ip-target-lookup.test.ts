/**
 * `ip` targets as the CLI expands them: an address gives one outcome, a host
 * name one outcome per A and AAAA record, resolved by a real DNS server on
 * 127.0.0.1 handed to the engine through the context.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext, type EngineContext } from '../../../src/engine/context.js';
import { resolveHostAddresses } from '../../../src/engine/dns/host-addresses.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import { createAdaptiveIpLookup, ipTargetOutcomes, isHostNameTarget } from '../../../src/engine/ip/ip-target-lookup.js';
import type { IpInfoRecord } from '../../../src/engine/ip/ip-record.js';
import type { Outcome } from '../../../src/engine/outcome.js';
import { startDnsServer, type DnsTestServer } from '../../support/dns-server.js';

let server: DnsTestServer;
let ctx: EngineContext;

beforeAll(async () => {
  server = await startDnsServer({
    records: [
      { name: 'test', type: 'SOA', data: { mname: 'ns.test', rname: 'hostmaster.test', serial: 1, refresh: 3600, retry: 600, expire: 86400, minimum: 60 } },
      { name: 'dual.test', type: 'A', data: '8.8.8.8' },
      { name: 'dual.test', type: 'A', data: '1.1.1.1' },
      { name: 'dual.test', type: 'AAAA', data: '2001:4860:4860::8888' },
      { name: 'lan.test', type: 'A', data: '192.168.1.10' },
      { name: 'alias.test', type: 'CNAME', data: 'lan.test' },
      { name: 'mail-only.test', type: 'MX', data: { preference: 10, exchange: 'lan.test' } },
    ],
    behaviours: { 'broken.test': 'servfail' },
  });
  ctx = createEngineContext({ resolvers: [parseResolverAddress(server.address)], timeoutMs: 1000, dnsRetries: 0 });
});

afterAll(async () => {
  await ctx.close();
  await server.close();
});

async function outcomesOf(query: string): Promise<Array<Outcome<IpInfoRecord>>> {
  const lookup = createAdaptiveIpLookup(ctx);
  return ipTargetOutcomes(lookup, (name) => resolveHostAddresses(ctx, name), query);
}

function summary(outcomes: Array<Outcome<IpInfoRecord>>): string[] {
  return outcomes.map((outcome) =>
    outcome.ok ? `${outcome.query} ok ${outcome.value.ip} ${outcome.value.network.asn ?? outcome.value.reserved}` : `${outcome.query} ${outcome.error.code}`,
  );
}

describe('ipTargetOutcomes', () => {
  it('answers an address synchronously with one outcome, without asking DNS', () => {
    const before = server.queries.length;
    const result = ipTargetOutcomes(createAdaptiveIpLookup(ctx), () => Promise.reject(new Error('must not resolve')), '8.8.8.8');
    expect(Array.isArray(result)).toBe(true);
    expect(summary(result as Array<Outcome<IpInfoRecord>>)).toEqual(['8.8.8.8 ok 8.8.8.8 15169']);
    expect(server.queries.length).toBe(before);
  });

  it('gives one error outcome, synchronously, for an invalid address that is no host name', () => {
    for (const query of ['1.2.3', '::g', 'fe80::1%eth0', '1.2.3.4/24', '', 'a b']) {
      const result = ipTargetOutcomes(createAdaptiveIpLookup(ctx), () => Promise.reject(new Error('must not resolve')), query);
      expect(Array.isArray(result)).toBe(true);
      const [outcome] = result as Array<Outcome<IpInfoRecord>>;
      expect(outcome).toMatchObject({ ok: false, query });
      expect(outcome!.ok === false && outcome!.error.code).toBe('invalid_input');
    }
  });

  it('expands a host name into one outcome per A and AAAA record, A records first, each with the name as query', async () => {
    expect(summary(await outcomesOf('dual.test'))).toEqual([
      'dual.test ok 8.8.8.8 15169',
      'dual.test ok 1.1.1.1 13335',
      'dual.test ok 2001:4860:4860::8888 15169',
    ]);
    const asked = server.queries.filter((query) => query.name.toLowerCase() === 'dual.test').map((query) => query.type);
    expect(asked.sort()).toEqual(['A', 'AAAA']);
  });

  it('follows a CNAME to a private address and labels it', async () => {
    expect(summary(await outcomesOf('alias.test'))).toEqual(['alias.test ok 192.168.1.10 private (RFC 1918)']);
  });

  it('gives not_found naming NXDOMAIN for a name that does not exist', async () => {
    const [outcome, ...rest] = await outcomesOf('missing.test');
    expect(rest).toEqual([]);
    expect(outcome!.ok).toBe(false);
    if (outcome!.ok) return;
    expect(outcome!.error.code).toBe('not_found');
    expect(outcome!.error.message).toBe(`missing.test does not exist (NXDOMAIN) at ${server.address}`);
  });

  it('gives not_found naming the missing records for a name with no A or AAAA', async () => {
    const [outcome] = await outcomesOf('mail-only.test');
    expect(outcome!.ok === false && outcome!.error.message).toBe(`mail-only.test has no A or AAAA records at ${server.address}`);
  });

  it('gives upstream when the resolver answers SERVFAIL', async () => {
    const [outcome] = await outcomesOf('broken.test');
    expect(outcome!.ok === false && outcome!.error.code).toBe('upstream');
  });

  it('tells host names from address-like text', () => {
    expect(['example.com', 'dual.test', 'localhost', 'xn--bcher-kva.example'].map(isHostNameTarget)).toEqual([true, true, true, true]);
    expect(['8.8.8.8', '2001:db8::1', '::g', '1.2.3', 'fe80::1%eth0', 'a b', 'a/b', ''].map(isHostNameTarget)).toEqual(
      Array(8).fill(false),
    );
  });
});
