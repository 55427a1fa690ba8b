import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicTargetGuard } from '../../src/engine/connect-guard.js';
import { createEngineContext, type EngineContext } from '../../src/engine/context.js';
import { createDnsTransport } from '../../src/engine/dns/dns-transport.js';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { checkMailServer } from '../../src/engine/mail/check-mail-servers.js';
import { probeSmtp } from '../../src/engine/smtp/probe-smtp.js';
import { tempDir } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { serve } from '../support/served.js';
import { startSmtpTestServer, type SmtpTestServer } from '../support/smtp-servers.js';
import { startRdapServer, writeBootstrap, type RdapTestServer } from '../support/rdap-server.js';
import { startTestServer, type TestServer } from './harness.js';

/**
 * SSRF (docs/design.md, The public-target guard): a caller must not point a server-side probe at
 * the server's own network in any spelling of an address, through a name,
 * or through a resolver. Every test keeps a real SMTP peer listening on
 * loopback and checks that it never saw a connection.
 */

/** Spellings of 127.0.0.1 a caller may send as an SMTP host. */
const LOOPBACK_HOSTS = [
  '127.0.0.1',
  '::127.0.0.1',
  '::7f00:1',
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::ffff:0:127.0.0.1',
  '64:ff9b::127.0.0.1',
  '2002:7f00:1::1',
  '2001:0:7f00:1::1',
  '2001:0:808:808::80ff:fffe',
  '[::1]',
  '0x7f.1',
  '0177.0.0.1',
  '2130706433',
  '127.1',
  '0.0.0.0',
  '::',
  'fe80::1%lo',
];

const ZONE = [
  { name: 'loop.test', type: 'A' as const, data: '127.0.0.1' },
  { name: 'loop6.test', type: 'AAAA' as const, data: '::ffff:127.0.0.1' },
  { name: 'compat.test', type: 'AAAA' as const, data: '::7f00:1' },
  { name: 'mixed.test', type: 'A' as const, data: '93.184.215.14' },
  { name: 'mixed.test', type: 'AAAA' as const, data: '64:ff9b::a00:1' },
  { name: 'evil.test', type: 'MX' as const, data: { preference: 10, exchange: 'mx.evil.test' } },
  { name: 'mx.evil.test', type: 'AAAA' as const, data: '::7f00:1' },
  { name: '_mta-sts.evil.test', type: 'TXT' as const, data: ['v=STSv1; id=20260101'] },
  { name: 'mta-sts.evil.test', type: 'A' as const, data: '127.0.0.1' },
];

const problem = (response: { statusCode: number; headers: Record<string, unknown>; body: string }) => ({
  status: response.statusCode,
  type: String(response.headers['content-type']),
  body: JSON.parse(response.body) as { code: string; detail: string; status: number; details: Record<string, unknown> },
});

describe('SSRF: server-side probes against loopback peers', () => {
  let dns: DnsTestServer;
  let smtp: SmtpTestServer;
  let guarded: TestServer;
  let get: (url: string) => ReturnType<TestServer['app']['inject']>;

  beforeAll(async () => {
    smtp = await startSmtpTestServer({ name: 'mx.loop.test' });
    dns = await startDnsServer({ records: ZONE });
    guarded = await startTestServer({ engine: { resolvers: [parseResolverAddress(dns.address)], timeoutMs: 1500 }, smtpPorts: [25, smtp.port] });
    // A pro key: the burst of the free plan would end these tests with 429s.
    const key = await guarded.key('pro');
    get = (url) => guarded.app.inject({ url, headers: { 'x-api-key': key } });
  });
  afterAll(async () => {
    await Promise.all([guarded.close(), dns.close(), smtp.close()]);
  });

  it.each(LOOPBACK_HOSTS)('GET /api/smtp-test?host=%s answers 403 forbidden (problem+json) without connecting', async (host) => {
    const response = problem(await get(`/api/smtp-test?host=${encodeURIComponent(host)}&port=${smtp.port}`));
    expect(response.status, response.body.detail).toBe(403);
    expect(response.type).toMatch(/^application\/problem\+json/);
    expect(response.body).toMatchObject({ status: 403, code: 'forbidden', details: { rule: 'private-target' } });
    expect(response.body.detail).toMatch(/this server does not connect to private, loopback/);
    expect(smtp.connections()).toBe(0);
  });

  it('names the embedded address and the mechanism in the refusal', async () => {
    const { body } = problem(await get(`/api/smtp-test?host=${encodeURIComponent('::127.0.0.1')}&port=${smtp.port}`));
    expect(body.details).toMatchObject({ address: '::7f00:1', embedded: '127.0.0.1' });
    expect(body.detail).toContain('IPv4-compatible (RFC 4291 §2.5.5.1) form of 127.0.0.1, loopback');
  });

  it.each(['loop.test', 'loop6.test', 'compat.test', 'mixed.test'])('refuses host=%s, a name that resolves (through the test DNS server) to a loopback or private form', async (host) => {
    const response = problem(await get(`/api/smtp-test?host=${host}&port=${smtp.port}`));
    expect(response.status).toBe(403);
    expect(response.body.detail).toMatch(new RegExp(`${host.replace('.', '\\.')} resolves to`));
    expect(smtp.connections()).toBe(0);
  });

  it('refuses a loopback address= given beside a public host name, and e-mail tests of a loopback server', async () => {
    for (const url of [
      `/api/smtp-test?host=mx.example.com&address=${encodeURIComponent('::ffff:7f00:1')}&port=${smtp.port}`,
      `/api/email-tests?type=smtp&server=${encodeURIComponent('::127.0.0.1')}&port=${smtp.port}`,
      `/api/email-tests?type=smtp&server=0x7f.1&port=${smtp.port}`,
      `/api/email-tests?type=smtp&server=loop6.test&port=${smtp.port}`,
    ]) {
      const response = problem(await get(url));
      expect(response.status, url).toBe(403);
      expect(response.body.code).toBe('forbidden');
    }
    expect(smtp.connections()).toBe(0);
  });

  it('leaves an MX host and an MTA-STS policy host on loopback forms unprobed inside the general e-mail test (a finding, not a 403)', async () => {
    const response = await get(`/api/email-tests?domain=evil.test&port=${smtp.port}`);
    expect(response.statusCode).toBe(200);
    const report = JSON.parse(response.body);
    expect(report.smtp).toEqual([expect.objectContaining({ host: 'mx.evil.test', address: null, probe: null, error: expect.objectContaining({ code: 'forbidden' }) })]);
    expect(report.smtp[0].error.message).toContain('IPv4-compatible');
    expect(report.findings).toContainEqual(expect.objectContaining({ id: 'smtp_not_probed' }));
    expect(report.mta_sts.policy_error).toMatchObject({ code: 'forbidden' });
    expect(smtp.connections()).toBe(0);
  });

  it.each(['127.0.0.1', '[::127.0.0.1]', '[::ffff:7f00:1]', '[64:ff9b::7f00:1]', '[fe80::1%lo]', '0.0.0.0', '[::]', '169.254.169.254', '10.0.0.53'])(
    'GET /api/dns-lookup?resolver=%s answers 403 forbidden and sends no query',
    async (resolver) => {
      const before = dns.queries.length;
      const response = problem(await get(`/api/dns-lookup?domain=probe.test&resolver=${encodeURIComponent(resolver)}`));
      expect(response.status, response.body.detail).toBe(403);
      expect(response.type).toMatch(/^application\/problem\+json/);
      expect(response.body).toMatchObject({ code: 'forbidden', details: { rule: 'private-target' } });
      expect(response.body.detail).toMatch(/^DNS resolver /);
      expect(dns.queries.length).toBe(before);
    },
  );

  it('refuses a resolver on the test DNS server\'s own loopback port for its address, before its port', async () => {
    const response = problem(await get(`/api/dns-lookup?domain=probe.test&resolver=${encodeURIComponent(dns.address)}`));
    expect(response.body).toMatchObject({ status: 403, details: { rule: 'private-target' } });
    expect(dns.queries.some((query) => query.name === 'probe.test')).toBe(false);
  });

  it('probes the same loopback peer with --allow-private-targets, so the refusals above are the guard\'s', async () => {
    const open = await startTestServer({ engine: { resolvers: [parseResolverAddress(dns.address)], timeoutMs: 1500 }, allowPrivateTargets: true, smtpPorts: [smtp.port] });
    try {
      const response = await open.app.inject({ url: `/api/smtp-test?host=loop.test&port=${smtp.port}&tls=false` });
      expect(JSON.parse(response.body)).toMatchObject({ kind: 'smtp', address: '127.0.0.1', connected: true });
      expect(smtp.connections()).toBe(1);
    } finally {
      await open.close();
    }
  });
});

describe('SSRF: GET /api/rdap, whose servers come from bootstrap files and registries', () => {
  let dns: DnsTestServer;
  let rdap: RdapTestServer;
  const servers: TestServer[] = [];
  const scratch = tempDir('netintel-ssrf-rdap-');

  beforeAll(async () => {
    dns = await startDnsServer({ records: ZONE });
    rdap = await startRdapServer();
  });
  afterAll(async () => {
    await Promise.all([...servers.map((server) => server.close()), dns.close(), rdap.close()]);
    scratch.remove();
  });

  /** A guarded server whose data dir's bootstrap sends every query to `registry`. */
  async function serverFor(registry: string): Promise<(url: string) => ReturnType<TestServer['app']['inject']>> {
    const dataDir = join(scratch.path, String(servers.length));
    writeBootstrap(dataDir, registry);
    const server = await startTestServer({ engine: { resolvers: [parseResolverAddress(dns.address)], timeoutMs: 1500, dataDir } });
    servers.push(server);
    const key = await server.key('pro');
    return (url) => server.app.inject({ url, headers: { 'x-api-key': key } });
  }

  it.each(['127.0.0.1', '[::ffff:127.0.0.1]', '2130706433', 'loop.test', 'loop6.test'])('refuses a registry at https://%s with 403 forbidden, without connecting', async (host) => {
    const get = await serverFor(`https://${host}:${rdap.port}/registry/`);
    const asked = rdap.requests.length;
    for (const target of ['example.test', '192.0.2.1', 'AS64496']) {
      const response = problem(await get(`/api/rdap?target=${target}`));
      expect(response.status, target).toBe(403);
      expect(response.body.details.rule).toBe('private-target');
    }
    expect(rdap.requests.length).toBe(asked);
  });
});

describe('SSRF: the engine\'s connect guard at connect time', () => {
  let dns: DnsTestServer;
  let smtp: SmtpTestServer;
  let ctx: EngineContext;

  beforeAll(async () => {
    smtp = await startSmtpTestServer();
    dns = await startDnsServer({ records: ZONE });
    ctx = createEngineContext({ resolvers: [parseResolverAddress(dns.address)], timeoutMs: 1500, dnsRetries: 0, connectGuard: createPublicTargetGuard() });
  });
  afterAll(async () => {
    await Promise.all([ctx.close(), dns.close(), smtp.close()]);
  });

  it('probeSmtp rejects with forbidden for a name it resolves itself to loopback, and never connects', async () => {
    await expect(probeSmtp(ctx, { host: 'loop.test', port: smtp.port })).rejects.toMatchObject({
      code: 'forbidden',
      details: { address: '127.0.0.1', host: 'loop.test', port: smtp.port, rule: 'private-target' },
    });
    await expect(probeSmtp(ctx, { host: 'loop6.test', port: smtp.port })).rejects.toMatchObject({ code: 'forbidden', details: { embedded: '127.0.0.1' } });
    await expect(probeSmtp(ctx, { host: 'public.example', address: '::127.0.0.1', port: smtp.port })).rejects.toMatchObject({ code: 'forbidden' });
    expect(smtp.connections()).toBe(0);
  });

  it('checkMailServer reports a refused address as smtp_not_probed', async () => {
    const check = await checkMailServer(ctx, { host: 'compat.test', preference: 10, port: smtp.port });
    expect(check).toMatchObject({ address: null, probe: null, error: { code: 'forbidden' } });
    expect(check.findings).toEqual([expect.objectContaining({ id: 'smtp_not_probed', severity: 'info' })]);
    expect(smtp.connections()).toBe(0);
  });

  it('a transport for a caller\'s resolver refuses it before opening a socket; the operator\'s resolvers are not judged', () => {
    for (const text of ['127.0.0.1', '[::ffff:7f00:1]:53', '[fe80::1%lo]']) {
      expect(() => createDnsTransport({ resolvers: [parseResolverAddress(text)], connectGuard: ctx.connectGuard }), text).toThrow(expect.objectContaining({ code: 'forbidden' }));
    }
    expect(() => createDnsTransport({ resolvers: [parseResolverAddress('9.9.9.9')], connectGuard: ctx.connectGuard })).not.toThrow();
  });

  it('lets everything through without a guard (the CLI)', async () => {
    const open = createEngineContext({ resolvers: [parseResolverAddress(dns.address)], timeoutMs: 1500, dnsRetries: 0 });
    try {
      const result = await probeSmtp(open, { host: 'loop.test', port: smtp.port, quitAfter: 'banner', reverseDns: false });
      expect(result).toMatchObject({ connected: true, address: '127.0.0.1' });
      expect(smtp.connections()).toBe(1);
    } finally {
      await open.close();
    }
  });
});

describe('SSRF: netintel serve', () => {
  it('refuses loopback spellings, a name that resolves to loopback and a loopback resolver, and the SMTP peer sees nothing', async () => {
    const smtp = await startSmtpTestServer();
    const dns = await startDnsServer({ records: ZONE });
    const db = tempDir('netintel-ssrf-serve-');
    const served = await serve(['--db', `${db.path}/keys.db`, '--smtp-ports', `25,${smtp.port}`, '--resolver', dns.address, '--timeout', '1500', '--retries', '0']);
    try {
      for (const query of [
        `smtp-test?host=${encodeURIComponent('::127.0.0.1')}&port=${smtp.port}`,
        `smtp-test?host=${encodeURIComponent('::ffff:7f00:1')}&port=${smtp.port}`,
        `smtp-test?host=0x7f.1&port=${smtp.port}`,
        `smtp-test?host=loop.test&port=${smtp.port}`,
        'dns-lookup?domain=probe.test&resolver=127.0.0.1',
      ]) {
        const response = await fetch(`${served.url}/api/${query}`);
        expect(response.status, query).toBe(403);
        expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(await response.json()).toMatchObject({ code: 'forbidden', details: { rule: 'private-target' } });
      }
      expect(smtp.connections()).toBe(0);
      expect((await fetch(`${served.url}/healthz`)).status).toBe(200);
    } finally {
      served.child.kill('SIGTERM');
      await served.exit;
      await Promise.all([smtp.close(), dns.close()]);
      db.remove();
    }
  });
});
