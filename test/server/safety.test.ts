import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { NetintelError } from '../../src/errors.js';
import { addressSubject, clientAddress, parseTrustedProxies } from '../../src/server/client-address.js';
import { createTargetGuard } from '../../src/server/target-guard.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { startTestServer, type TestServer } from './harness.js';
import { loopbackOnly } from '../support/loopback-only.js';
import { closedPort } from '../support/peers.js';

function thrown(work: () => unknown): NetintelError {
  try {
    work();
  } catch (error) {
    if (error instanceof NetintelError) return error;
    throw error;
  }
  throw new Error('expected a NetintelError');
}

async function rejected(work: Promise<unknown>): Promise<NetintelError> {
  try {
    await work;
  } catch (error) {
    if (error instanceof NetintelError) return error;
    throw error;
  }
  throw new Error('expected a NetintelError');
}

describe('SSRF: the target guard of server-side probes', () => {
  const names: Record<string, string[]> = {
    'public.example': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    'inside.example': ['10.0.0.8'],
    'mixed.example': ['93.184.215.14', '127.0.0.1'],
    'metadata.example': ['169.254.169.254'],
  };
  const guard = createTargetGuard({ allowPrivate: false, resolveHost: async (name) => names[name] ?? [] });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fd00:ec2::254', 'unique local'],
    ['100.100.100.200', 'metadata'],
    ['168.63.129.16', 'Azure'],
    ['0.0.0.0', '"this network"'],
    ['64:ff9b::a00:1', 'NAT64'],
    ['::127.0.0.1', 'IPv4-compatible'],
    ['::ffff:0:a00:1', 'IPv4-translated'],
    ['2002:a9fe:a9fe::1', '6to4'],
    ['0x7f.1', 'loopback'],
    ['[fe80::1%eth0]', 'link-local'],
  ])('refuses %s (%s)', (address, reason) => {
    const error = thrown(() => guard.checkAddress(address, 'resolver'));
    expect(error.code).toBe('forbidden');
    expect(error.message).toContain(reason);
    expect(error.details.rule).toBe('private-target');
  });

  it('lets public addresses through', () => {
    expect(() => guard.checkAddress('8.8.8.8', 'resolver')).not.toThrow();
    expect(() => guard.checkAddress('2001:4860:4860::8888', 'resolver')).not.toThrow();
  });

  it('resolves a name once, checks every address, and gives the address to connect to', async () => {
    expect(await guard.resolve('public.example', 'SMTP server')).toEqual({ host: 'public.example', address: '93.184.215.14' });
    expect((await rejected(guard.resolve('inside.example', 'SMTP server'))).message).toMatch(/inside\.example resolves to 10\.0\.0\.8/);
    expect((await rejected(guard.resolve('mixed.example', 'SMTP server'))).code).toBe('forbidden');
    expect((await rejected(guard.resolve('metadata.example', 'SMTP server'))).code).toBe('forbidden');
    expect((await rejected(guard.resolve('[::1]', 'SMTP server'))).code).toBe('forbidden');
    expect((await rejected(guard.resolve('2130706433', 'SMTP server'))).details).toMatchObject({ address: '127.0.0.1' });
  });

  it('reads a public address in an old form as a name, as the CLI does, and lets NAT64 of a public address through', async () => {
    const asked: string[] = [];
    const recording = createTargetGuard({ allowPrivate: false, resolveHost: async (name) => (asked.push(name), ['93.184.215.14']) });
    expect(await recording.resolve('0x8.8.8.8', 'SMTP server')).toEqual({ host: '0x8.8.8.8', address: '93.184.215.14' });
    expect(asked).toEqual(['0x8.8.8.8']);
    expect(await recording.resolve('64:ff9b::8.8.8.8', 'SMTP server')).toEqual({ host: '64:ff9b::8.8.8.8', address: '64:ff9b::8.8.8.8' });
  });

  it('lets everything through with --allow-private-targets', async () => {
    const open = createTargetGuard({ allowPrivate: true, resolveHost: async (name) => names[name] ?? [] });
    expect(() => open.checkAddress('127.0.0.1', 'resolver')).not.toThrow();
    expect(await open.resolve('inside.example', 'SMTP server')).toEqual({ host: 'inside.example', address: '10.0.0.8' });
  });

  it('allows SMTP probes to mail ports only, unless configured', () => {
    for (const port of [25, 465, 587, 2525]) expect(() => guard.checkSmtpPort(port)).not.toThrow();
    expect(thrown(() => guard.checkSmtpPort(22)).details.rule).toBe('smtp-port');
    const custom = createTargetGuard({ allowPrivate: false, resolveHost: async () => [], smtpPorts: [25, 10025] });
    expect(() => custom.checkSmtpPort(10025)).not.toThrow();
    expect(() => custom.checkSmtpPort(587)).toThrow();
  });
});

describe('the caller\'s address behind trusted proxies', () => {
  const none = parseTrustedProxies([]);
  const lan = parseTrustedProxies(['loopback', '10.0.0.0/8']);

  it('takes the peer when it is not a trusted proxy, whatever the headers say', () => {
    expect(clientAddress('203.0.113.9', { 'x-forwarded-for': '1.2.3.4' }, lan)).toBe('203.0.113.9');
    expect(clientAddress('127.0.0.1', { 'x-forwarded-for': '1.2.3.4' }, none)).toBe('127.0.0.1');
    expect(clientAddress('::ffff:198.51.100.4', {}, none)).toBe('198.51.100.4');
  });

  it('walks X-Forwarded-For from the right and stops at the first untrusted hop', () => {
    expect(clientAddress('127.0.0.1', { 'x-forwarded-for': '198.51.100.7' }, lan)).toBe('198.51.100.7');
    expect(clientAddress('127.0.0.1', { 'x-forwarded-for': '6.6.6.6, 198.51.100.7, 10.1.1.1' }, lan)).toBe('198.51.100.7');
    expect(clientAddress('127.0.0.1', { 'x-forwarded-for': 'garbage, 10.1.1.1' }, lan)).toBe('10.1.1.1');
  });

  it('reads RFC 7239 Forwarded when told to: quoted IPv6 with a port, IPv4 with a port, unknown', () => {
    const forwarded = { forwarded: 'for=6.6.6.6, for="[2001:db8:cafe::17]:4711";proto=https, for=10.0.0.2:8080' };
    expect(clientAddress('127.0.0.1', forwarded, lan, 'forwarded')).toBe('2001:db8:cafe::17');
    expect(clientAddress('127.0.0.1', { forwarded: 'for=unknown' }, lan, 'forwarded')).toBe('127.0.0.1');
    expect(clientAddress('127.0.0.1', forwarded, lan)).toBe('127.0.0.1');
  });

  it('refuses a trusted-proxy entry that is not an address or block', () => {
    expect(() => parseTrustedProxies(['10.0.0.0/8', 'proxy.example'])).toThrow(/proxy\.example/);
    expect(() => parseTrustedProxies(['127.1'])).toThrow();
  });

  it('counts IPv6 callers by /64', () => {
    expect(addressSubject('2001:db8:1:2::1')).toBe(addressSubject('2001:db8:1:2:aaaa::9'));
    expect(addressSubject('2001:db8:1:2::1')).not.toBe(addressSubject('2001:db8:1:3::1'));
    expect(addressSubject('192.0.2.1')).toBe('ip:192.0.2.1');
  });

  it('limits and reports the forwarded caller over HTTP', async () => {
    const server = await startTestServer({ trustProxy: ['127.0.0.0/8'] });
    try {
      const quota = JSON.parse((await server.app.inject({ url: '/api/quota', headers: { 'x-forwarded-for': '198.51.100.23' } })).body);
      expect(quota.client).toBe('198.51.100.23');
      const me = JSON.parse((await server.app.inject({ url: '/api/ipinfo', headers: { 'x-forwarded-for': '8.8.4.4' } })).body);
      expect(me.ip).toBe('8.8.4.4');
      const spoofed = JSON.parse((await server.app.inject({ url: '/api/quota', remoteAddress: '203.0.113.5', headers: { 'x-forwarded-for': '1.1.1.1' } })).body);
      expect(spoofed.client).toBe('203.0.113.5');
    } finally {
      await server.close();
    }
  });
});

describe('GET /api/dns-lookup against a real DNS server', () => {
  let dns: DnsTestServer;
  let slow: DnsTestServer;
  let server: TestServer;
  let open: TestServer;

  beforeAll(async () => {
    const records = [
      { name: 'example.test', type: 'A' as const, data: '192.0.2.1' },
      { name: 'example.test', type: 'MX' as const, data: { preference: 10, exchange: 'mx.example.test' } },
      { name: 'example.test', type: 'TXT' as const, data: ['v=spf1 -all'] },
    ];
    dns = await startDnsServer({ records, behaviours: { 'broken.test': 'servfail' } });
    slow = await startDnsServer({ records, delayMs: 1500 });
    const engine = { resolvers: [parseResolverAddress(dns.address)], timeoutMs: 1000 };
    server = await startTestServer({ engine, handlerTimeoutMs: 5000 });
    open = await startTestServer({ engine: { resolvers: [parseResolverAddress(slow.address)], timeoutMs: 3000 }, allowPrivateTargets: true, handlerTimeoutMs: 400 });
  });
  afterAll(async () => {
    await Promise.all([server.close(), open.close(), dns.close(), slow.close()]);
  });

  it('answers one type with the CLI\'s record, several with an array in type order', async () => {
    const one = JSON.parse((await server.app.inject({ url: '/api/dns-lookup?domain=example.test&type=MX' })).body);
    expect(one).toMatchObject({ kind: 'dns', domain: 'example.test', type: 'MX', status: 'answer', answers: [{ data: { preference: 10, exchange: 'mx.example.test' } }] });
    const several = JSON.parse((await server.app.inject({ url: '/api/dns-lookup?domain=example.test&type=a,txt,AAAA' })).body);
    expect(several.map((item: { type: string; status: string }) => [item.type, item.status])).toEqual([
      ['A', 'answer'],
      ['TXT', 'answer'],
      ['AAAA', 'nodata'],
    ]);
    const all = JSON.parse((await server.app.inject({ url: '/api/dns-lookup?domain=example.test&type=ALL' })).body);
    expect(all.map((item: { type: string }) => item.type)).toEqual(['A', 'AAAA', 'CNAME', 'MX', 'NS', 'SOA', 'TXT', 'CAA']);
    const missing = JSON.parse((await server.app.inject({ url: '/api/dns-lookup?domain=nothing.test' })).body);
    expect(missing).toMatchObject({ type: 'A', status: 'nxdomain', rcode: 'NXDOMAIN' });
  });

  it('answers a failed lookup with its code: upstream (502), a bad name or type 400', async () => {
    const failed = JSON.parse((await server.app.inject({ url: '/api/dns-lookup?domain=broken.test' })).body);
    expect(failed).toMatchObject({ status: 502, code: 'upstream' });
    const perType = JSON.parse((await server.app.inject({ url: '/api/dns-lookup?domain=broken.test&type=A,MX' })).body);
    expect(perType).toEqual([
      expect.objectContaining({ query: 'broken.test A', error: expect.objectContaining({ code: 'upstream' }) }),
      expect.objectContaining({ query: 'broken.test MX', error: expect.objectContaining({ code: 'upstream' }) }),
    ]);
    expect(JSON.parse((await server.app.inject({ url: '/api/dns-lookup?domain=bad..name' })).body).code).toBe('invalid_input');
    expect(JSON.parse((await server.app.inject({ url: '/api/dns-lookup?domain=example.test&type=HINFO' })).body).code).toBe('usage');
  });

  it('refuses a caller-chosen resolver that is private, loopback, link-local, metadata or not on port 53', async () => {
    for (const resolver of ['127.0.0.1', '10.0.0.53', '169.254.169.254', '[::1]:53', dns.address]) {
      const body = JSON.parse((await server.app.inject({ url: `/api/dns-lookup?domain=example.test&resolver=${encodeURIComponent(resolver)}` })).body);
      expect(body, resolver).toMatchObject({ status: 403, code: 'forbidden', details: { rule: 'private-target' } });
    }
    const port = JSON.parse((await server.app.inject({ url: '/api/dns-lookup?domain=example.test&resolver=8.8.8.8:5353' })).body);
    expect(port).toMatchObject({ status: 403, details: { rule: 'resolver-port' } });
    expect(dns.queries.filter((query) => query.name === 'example.test').length).toBeGreaterThan(0);
  });

  it('asks a private resolver with --allow-private-targets', async () => {
    const before = dns.queries.length;
    const body = JSON.parse((await open.app.inject({ url: `/api/dns-lookup?domain=example.test&resolver=${encodeURIComponent(dns.address)}` })).body);
    expect(body).toMatchObject({ status: 'answer', resolver: dns.address });
    expect(dns.queries.length).toBe(before + 1);
  });

  it('answers 504 timeout when a request outlives the server\'s deadline', async () => {
    const started = Date.now();
    const response = await open.app.inject({ url: '/api/dns-lookup?domain=example.test' });
    expect(response.statusCode).toBe(504);
    expect(JSON.parse(response.body)).toMatchObject({ code: 'timeout', details: { timeout_ms: 400 } });
    expect(Date.now() - started).toBeLessThan(1400);
  });
});

describe('GET /api/email-tests: the MTA-STS policy fetch goes through the private-address rule', () => {
  let dns: DnsTestServer;
  let server: TestServer;
  let open: TestServer;

  beforeAll(async () => {
    dns = await startDnsServer({
      records: [
        { name: '_mta-sts.inside.test', type: 'TXT' as const, data: ['v=STSv1; id=20261125'] },
        { name: 'mta-sts.inside.test', type: 'A' as const, data: '127.0.0.1' },
      ],
    });
    const engine = { resolvers: [parseResolverAddress(dns.address)], timeoutMs: 1000 };
    server = await startTestServer({ engine, handlerTimeoutMs: 5000 });
    open = await startTestServer({ engine, allowPrivateTargets: true, handlerTimeoutMs: 5000 });
  });
  afterAll(async () => {
    await Promise.all([server.close(), open.close(), dns.close()]);
  });

  it('refuses to fetch a policy from a loopback address, and fetches it with --allow-private-targets', async () => {
    const guarded = JSON.parse((await server.app.inject({ url: '/api/email-tests?domain=inside.test&smtp=false' })).body);
    expect(guarded.mta_sts.policy_error).toMatchObject({ code: 'forbidden' });
    expect(guarded.mta_sts.policy_error.message).toMatch(/127\.0\.0\.1.*loopback/);
    // Allowed, the fetch is attempted: its connection to 127.0.0.1:443 goes to a port this test closed
    // (whatever listens on 443 of this machine), and is refused.
    const network = loopbackOnly({ closedPort: await closedPort(), loopbackPorts: [443], keepOthers: true });
    try {
      const allowed = JSON.parse((await open.app.inject({ url: '/api/email-tests?domain=inside.test&smtp=false' })).body);
      expect(allowed.mta_sts.policy_error).toMatchObject({ code: 'unreachable' });
      expect(network.diverted).toEqual(['tcp 127.0.0.1:443']);
    } finally {
      network.restore();
    }
  });
});
