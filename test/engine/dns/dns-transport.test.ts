import dgram from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { createDnsTransport, type DnsExchange, type DnsTransport, type DnsTransportOptions } from '../../../src/engine/dns/dns-transport.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import { NetintelError } from '../../../src/errors.js';
import { DECOY_ADDRESS, startDnsServer, type DnsServerOptions, type DnsTestServer } from '../../support/dns-server.js';
import { EXAMPLE_ZONE } from './example-zone.js';
import { netintelRejectionOf } from '../../support/netintel-error.js';

const open: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()));
});

async function server(options: DnsServerOptions = {}): Promise<DnsTestServer> {
  const started = await startDnsServer({ records: EXAMPLE_ZONE, ...options });
  open.push(started);
  return started;
}

function transportTo(servers: Array<DnsTestServer | string>, options: Partial<DnsTransportOptions> = {}): DnsTransport {
  const transport = createDnsTransport({
    resolvers: servers.map((s) => parseResolverAddress(typeof s === 'string' ? s : s.address)),
    timeoutMs: 300,
    retries: 0,
    ...options,
  });
  open.push(transport);
  return transport;
}

/** A local UDP port with nothing listening: the kernel answers ICMP port unreachable. */
async function closedPort(): Promise<number> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

/** ask() as a promise of what its callback received, checking it is called exactly once. */
function asked(transport: DnsTransport, name: string, type: 'A' | 'MX' | 'TXT'): Promise<{ error: NetintelError | null; exchange: DnsExchange | null }> {
  return new Promise((resolve, reject) => {
    let calls = 0;
    transport.ask(name, type, (error, exchange) => {
      calls += 1;
      if (calls > 1) reject(new Error('callback called twice'));
      setTimeout(() => resolve({ error, exchange }), 50);
    });
  });
}

function answerData(exchange: Awaited<ReturnType<DnsTransport['query']>>): unknown[] {
  return (exchange.response.answers ?? []).map((rr) => ('data' in rr ? rr.data : null));
}

describe('createDnsTransport', () => {
  it('sends a recursive query with an EDNS0 OPT record advertising 1232 octets', async () => {
    const dns = await server();
    const exchange = await transportTo([dns]).query('example.test', 'A');
    expect(exchange.rcode).toBe('NOERROR');
    expect(exchange.transport).toBe('udp');
    expect(exchange.resolver).toBe(dns.address);
    expect(dns.queries).toEqual([{ transport: 'udp', id: expect.any(Number), name: 'example.test', type: 'A', edns: true }]);
  });

  it('throws upstream naming the domain, rcode and resolver when the server answers SERVFAIL', async () => {
    const dns = await server({ behaviours: { 'broken.example.test': 'servfail' } });
    const error = await netintelRejectionOf(transportTo([dns]).query('broken.example.test', 'A'));
    expect(error.code).toBe('upstream');
    expect(error.message).toBe(`DNS server ${dns.address} answered SERVFAIL for broken.example.test A`);
    expect(error.details).toMatchObject({ rcode: 'SERVFAIL', resolver: dns.address, domain: 'broken.example.test' });
  });

  it('throws upstream with rcode REFUSED when the server refuses', async () => {
    const dns = await server({ defaultBehaviour: 'refused' });
    const error = await netintelRejectionOf(transportTo([dns]).query('example.test', 'MX'));
    expect(error.code).toBe('upstream');
    expect(error.details).toMatchObject({ rcode: 'REFUSED', resolver: dns.address });
    expect(error.message).toContain('REFUSED');
  });

  it('times out against a silent server after each attempt and names domain and resolver', async () => {
    const dns = await server({ defaultBehaviour: 'silent' });
    const started = Date.now();
    const error = await netintelRejectionOf(transportTo([dns], { timeoutMs: 150, retries: 1 }).query('example.test', 'A'));
    const elapsed = Date.now() - started;
    expect(error.code).toBe('timeout');
    expect(error.message).toBe(`no answer from DNS server ${dns.address} for example.test A within 150 ms (2 attempts)`);
    expect(error.details).toMatchObject({ resolver: dns.address, timeout_ms: 150 });
    expect(dns.queries).toHaveLength(2);
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(1500);
  });

  it('throws unreachable at once when the resolver port answers ICMP unreachable', async () => {
    const port = await closedPort();
    const started = Date.now();
    const error = await netintelRejectionOf(transportTo([`127.0.0.1:${port}`], { timeoutMs: 2000 }).query('example.test', 'A'));
    expect(error.code).toBe('unreachable');
    expect(error.message).toBe(`cannot reach DNS server 127.0.0.1:${port} for example.test A (ECONNREFUSED)`);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('falls over to the second resolver when the first is silent and reports the one that answered', async () => {
    const silent = await server({ defaultBehaviour: 'silent' });
    const healthy = await server();
    const exchange = await transportTo([silent, healthy], { timeoutMs: 150 }).query('example.test', 'A');
    expect(exchange.resolver).toBe(healthy.address);
    expect(answerData(exchange)).toEqual(['192.0.2.10', '192.0.2.11']);
    expect(silent.queries).toHaveLength(1);
    expect(exchange.latencyMs).toBeGreaterThanOrEqual(140);
  });

  it('falls over to the next resolver after SERVFAIL and after an unreachable one', async () => {
    const failing = await server({ defaultBehaviour: 'servfail' });
    const healthy = await server();
    const port = await closedPort();
    const transport = transportTo([`127.0.0.1:${port}`, failing, healthy]);
    const exchange = await transport.query('example.test', 'MX');
    expect(exchange.resolver).toBe(healthy.address);
    expect(failing.queries).toHaveLength(1);
  });

  it('reports the SERVFAIL rather than the timeout when no resolver answers usefully', async () => {
    const silent = await server({ defaultBehaviour: 'silent' });
    const failing = await server({ defaultBehaviour: 'servfail' });
    const error = await netintelRejectionOf(transportTo([silent, failing], { timeoutMs: 100, retries: 1 }).query('example.test', 'A'));
    expect(error.code).toBe('upstream');
    expect(error.details['resolver']).toBe(failing.address);
    // The silent one is asked in both rounds, the failing one only once.
    expect(silent.queries).toHaveLength(2);
    expect(failing.queries).toHaveLength(1);
    expect(error.details['attempts']).toEqual([
      { resolver: silent.address, transport: 'udp', outcome: 'timeout', reason: 'timeout' },
      { resolver: failing.address, transport: 'udp', outcome: 'rcode', reason: 'SERVFAIL' },
      { resolver: silent.address, transport: 'udp', outcome: 'timeout', reason: 'timeout' },
    ]);
  });

  it('retries over TCP when the UDP reply is truncated and says so', async () => {
    const dns = await server({ behaviours: { 'example.test': 'truncate' } });
    const exchange = await transportTo([dns]).query('example.test', 'A');
    expect(exchange.transport).toBe('tcp');
    expect(answerData(exchange)).toEqual(['192.0.2.10', '192.0.2.11']);
    expect(dns.queries.map((q) => q.transport)).toEqual(['udp', 'tcp']);
  });

  it('retries over TCP when an answer exceeds 512 octets and EDNS is off', async () => {
    const dns = await server();
    const exchange = await transportTo([dns], { edns: false }).query('long.example.test', 'TXT');
    expect(exchange.transport).toBe('tcp');
    expect(dns.queries.map((q) => [q.transport, q.edns])).toEqual([
      ['udp', false],
      ['tcp', false],
    ]);
  });

  it('talks to an IPv6 resolver over UDP and falls back to TCP over IPv6', async () => {
    const dns = await server({ host: '::1', behaviours: { 'example.test': 'truncate' } });
    const transport = transportTo([dns]);
    const udp = await transport.query('www.example.test', 'A');
    expect(udp).toMatchObject({ resolver: dns.address, transport: 'udp', rcode: 'NOERROR' });
    const tcp = await transport.query('example.test', 'A');
    expect(tcp).toMatchObject({ resolver: dns.address, transport: 'tcp' });
    expect(dns.address).toBe(`[::1]:${dns.port}`);
  });

  it('uses TCP only in TCP mode', async () => {
    const dns = await server();
    const exchange = await transportTo([dns], { tcp: true }).query('example.test', 'SOA');
    expect(exchange.transport).toBe('tcp');
    expect(dns.queries.map((q) => q.transport)).toEqual(['tcp']);
  });

  it('ignores a reply with the wrong id and accepts the right one that follows', async () => {
    const dns = await server({ behaviours: { 'example.test': 'wrong-id-first' } });
    const exchange = await transportTo([dns]).query('example.test', 'A');
    expect(answerData(exchange)).toEqual(['192.0.2.10', '192.0.2.11']);
    expect(answerData(exchange)).not.toContain(DECOY_ADDRESS);
  });

  it('ignores a reply whose question does not match and accepts the right one that follows', async () => {
    const dns = await server({ behaviours: { 'example.test': 'wrong-question-first' } });
    const exchange = await transportTo([dns]).query('example.test', 'A');
    expect(answerData(exchange)).toEqual(['192.0.2.10', '192.0.2.11']);
  });

  it('ignores mismatched replies over TCP too', async () => {
    const dns = await server({ behaviours: { 'example.test': 'wrong-question-first' } });
    const exchange = await transportTo([dns], { tcp: true }).query('example.test', 'A');
    expect(answerData(exchange)).toEqual(['192.0.2.10', '192.0.2.11']);
  });

  it('asks again without EDNS when the server answers FORMERR to an OPT record', async () => {
    const dns = await server({ defaultBehaviour: 'formerr-with-edns' });
    const exchange = await transportTo([dns]).query('example.test', 'A');
    expect(exchange.rcode).toBe('NOERROR');
    expect(dns.queries.map((q) => q.edns)).toEqual([true, false]);
  });

  it('matches the question name case-insensitively', async () => {
    const dns = await server();
    const exchange = await transportTo([dns]).query('EXAMPLE.test', 'A');
    expect(answerData(exchange)).toEqual(['192.0.2.10', '192.0.2.11']);
  });

  it('shares one UDP socket among many queries in flight, with distinct ids', async () => {
    const dns = await server({ delayMs: 20 });
    const transport = transportTo([dns], { timeoutMs: 2000 });
    const names = Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? 'example.test' : i % 3 === 1 ? 'www.example.test' : 'nope.example.test'));
    const exchanges = await Promise.all(names.map((name) => transport.query(name, 'A')));
    expect(exchanges.map((e) => e.rcode)).toEqual(names.map((n) => (n === 'nope.example.test' ? 'NXDOMAIN' : 'NOERROR')));
    expect(new Set(dns.queries.map((q) => q.id)).size).toBe(300);
  });

  it('refuses a name that cannot be encoded with invalid_input', async () => {
    const dns = await server();
    const error = await netintelRejectionOf(transportTo([dns]).query(`${'a'.repeat(64)}.example.test`, 'A'));
    expect(error.code).toBe('invalid_input');
    expect(dns.queries).toHaveLength(0);
  });

  it('fails queries still waiting when the transport is closed, and later ones as a bug', async () => {
    const dns = await server({ defaultBehaviour: 'silent' });
    const transport = createDnsTransport({ resolvers: [parseResolverAddress(dns.address)], timeoutMs: 5000, retries: 0 });
    const pending = transport.query('example.test', 'A');
    await new Promise((resolve) => setTimeout(resolve, 20));
    await transport.close();
    const error = await netintelRejectionOf(pending);
    expect(error.code).toBe('unreachable');
    const late = await netintelRejectionOf(transport.query('example.test', 'A'));
    expect(late.code).toBe('internal');
  });

  it('rejects an empty resolver list and nonsense timeouts with usage', () => {
    expect(() => createDnsTransport({ resolvers: [] })).toThrow(expect.objectContaining({ code: 'usage' }));
    expect(() => createDnsTransport({ resolvers: [parseResolverAddress('127.0.0.1')], timeoutMs: 0 })).toThrow(
      expect.objectContaining({ code: 'usage' }),
    );
    expect(() => createDnsTransport({ resolvers: [parseResolverAddress('127.0.0.1')], retries: -1 })).toThrow(
      expect.objectContaining({ code: 'usage' }),
    );
  });

  describe('ask, the callback form bulk runs use', () => {
    it('calls back once with the exchange of an answered question', async () => {
      const dns = await server();
      const { error, exchange } = await asked(transportTo([dns]), 'example.test', 'MX');
      expect(error).toBeNull();
      expect(exchange).toMatchObject({ rcode: 'NOERROR', transport: 'udp', resolver: dns.address });
      expect(exchange!.answers).toEqual([
        { name: 'example.test', type: 'MX', ttl_seconds: 3600, data: { preference: 10, exchange: 'mx1.example.test' } },
        { name: 'example.test', type: 'MX', ttl_seconds: 3600, data: { preference: 20, exchange: 'mx2.example.test' } },
      ]);
    });

    it('calls back with NXDOMAIN as an exchange, not an error', async () => {
      const dns = await server();
      const { error, exchange } = await asked(transportTo([dns]), 'missing.example.test', 'A');
      expect(error).toBeNull();
      expect(exchange).toMatchObject({ rcode: 'NXDOMAIN', answers: [] });
    });

    it('calls back with the upstream error query() rejects with after SERVFAIL', async () => {
      const dns = await server({ behaviours: { 'broken.example.test': 'servfail' } });
      const { error, exchange } = await asked(transportTo([dns]), 'broken.example.test', 'A');
      expect(exchange).toBeNull();
      expect(error).toBeInstanceOf(NetintelError);
      expect(error).toMatchObject({ code: 'upstream', details: { rcode: 'SERVFAIL', resolver: dns.address } });
    });

    it('continues over TCP after a truncated UDP reply', async () => {
      const dns = await server({ behaviours: { 'example.test': 'truncate' } });
      const { error, exchange } = await asked(transportTo([dns]), 'example.test', 'A');
      expect(error).toBeNull();
      expect(exchange!.transport).toBe('tcp');
      expect(dns.queries.map((q) => q.transport)).toEqual(['udp', 'tcp']);
    });

    it('calls back with timeout after every attempt against a silent server', async () => {
      const dns = await server({ defaultBehaviour: 'silent' });
      const { error } = await asked(transportTo([dns], { timeoutMs: 100, retries: 1 }), 'example.test', 'A');
      expect(error).toMatchObject({ code: 'timeout' });
      expect(dns.queries).toHaveLength(2);
    });

    it('calls back with invalid_input for a name that cannot be encoded, sending nothing', async () => {
      const dns = await server();
      const { error } = await asked(transportTo([dns]), `${'a'.repeat(64)}.example.test`, 'A');
      expect(error).toMatchObject({ code: 'invalid_input' });
      expect(dns.queries).toEqual([]);
    });
  });
});
