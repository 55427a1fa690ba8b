import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { runCli, tempDir, writeConfigFile, type RunResult } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { startTestServer, type TestServer } from '../server/harness.js';
import { closedPort } from '../support/peers.js';

/**
 * The CLI's remote mode against `netintel serve`'s server on 127.0.0.1:0:
 * each command must print what it prints locally.
 */
describe('remote mode (--server, --api-key) prints what local mode prints', () => {
  let dns: DnsTestServer;
  let server: TestServer;
  let url: string;
  let pro: string;
  let starter: string;

  beforeAll(async () => {
    dns = await startDnsServer({
      records: [
        { name: 'example.test', type: 'A', data: '8.8.8.8' },
        { name: 'example.test', type: 'A', data: '1.1.1.1' },
        { name: 'example.test', type: 'AAAA', data: '2001:4860:4860::8888' },
        { name: 'example.test', type: 'MX', data: { preference: 10, exchange: 'mx.example.test' } },
        { name: 'example.test', type: 'TXT', data: ['v=spf1 ', '-all'] },
        { name: 'www.example.test', type: 'CNAME', data: 'example.test' },
        { name: 'selector1._domainkey.example.test', type: 'TXT', data: ['v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo='] },
        { name: 'default._bimi.example.test', type: 'TXT', data: ['v=BIMI1; l=; a='] },
      ],
      behaviours: { 'broken.test': 'servfail' },
    });
    // The server's clock is the real one: remote runs wait real (short) times after a 429.
    server = await startTestServer({ clock: { now: Date.now, advance: () => {}, set: () => {} }, engine: { resolvers: [parseResolverAddress(dns.address)], timeoutMs: 2000 } });
    url = await server.app.listen({ host: '127.0.0.1', port: 0 });
    pro = await server.key('pro');
    starter = await server.key('starter');
  });
  afterAll(async () => {
    await server.close();
    await dns.close();
  });

  const local = (args: string[], stdin?: string) => runCli([...args, '--resolver', dns.address], { stdin });
  const remote = (args: string[], key: string | null = pro, stdin?: string) =>
    runCli([...args, '--server', url, ...(key ? ['--api-key', key] : [])], { stdin });

  function same(a: RunResult, b: RunResult): void {
    expect(b.stdout).toBe(a.stdout);
    expect(b.stderr).toBe(a.stderr);
    expect(b.code).toBe(a.code);
  }

  for (const format of ['json', 'table', 'csv', 'ndjson', 'xml']) {
    it(`ip: the same ${format} for addresses, special and bad input`, async () => {
      const args = ['ip', '8.8.8.8', '2001:4860:4860::8888', '::ffff:1.1.1.1', '10.0.0.1', '1.2.3', '-f', format];
      const [a, b] = [await local(args), await remote(args)];
      expect(a.code).toBe(7);
      same(a, b);
    });
  }

  it('ip: the same single record, with --fields', async () => {
    for (const args of [['ip', '8.8.8.8', '-f', 'json'], ['ip', '1.1.1.1', '--fields', 'location.city,network.asn', '-f', 'csv'], ['ip', '9.9.9.9']]) {
      same(await local(args), await remote(args));
    }
  });

  it('ip: a host name gives each of its addresses, resolved by the server', async () => {
    const args = ['ip', 'example.test', 'missing.test', '-f', 'ndjson'];
    const [a, b] = [await local(args), await remote(args)];
    expect(a.stdout.trimEnd().split('\n')).toHaveLength(4);
    same(a, b);
  });

  it('ip: targets on stdin', async () => {
    const input = '8.8.8.8\n# comment\n\n1.1.1.1\nnot-an-ip\n';
    same(await local(['ip', '-f', 'csv'], input), await remote(['ip', '-f', 'csv'], pro, input));
  });

  for (const format of ['json', 'csv', 'table']) {
    it(`asn: the same ${format} for numbers, addresses, the comma form and failures`, async () => {
      const args = ['asn', 'AS13335', '8.8.8.8,AS15169', 'nope', '10.0.0.1', '-f', format];
      const [a, b] = [await local(args), await remote(args)];
      expect(a.code).toBe(7);
      same(a, b);
    });
  }

  it('asn: more queries than one batch of the plan go in several batches, in order', async () => {
    // 90 items: two requests of a starter key's batch of 50, within its burst of 100.
    const queries = Array.from({ length: 90 }, (_, i) => (i % 3 === 0 ? `AS${i + 1}` : `${(i % 200) + 1}.1.1.1`));
    const args = ['asn', queries.join(','), '-f', 'ndjson'];
    same(await local(args), await remote(args, starter));
    expect((await server.keys.list()).find((record) => record.plan === 'starter')).toBeDefined();
  });

  it('dns: the same records (latency aside) for one type, several, ALL, NXDOMAIN and SERVFAIL', async () => {
    const latency = (text: string) => text.replace(/"latency_ms": ?[\d.]+/g, '"latency_ms":0');
    for (const args of [
      ['dns', 'example.test', '--type', 'MX', '-f', 'json'],
      ['dns', 'example.test', 'www.example.test', '--type', 'A,TXT', '-f', 'json'],
      ['dns', 'example.test', '--type', 'ALL', '-f', 'ndjson'],
      ['dns', 'missing.test', '-f', 'json'],
      ['dns', 'broken.test', '-f', 'json'],
      ['dns', 'broken.test', '--type', 'A,MX', '-f', 'json'],
      ['dns', 'bad..name', '-f', 'json'],
    ]) {
      const [a, b] = [await local(args), await remote(args)];
      expect(latency(b.stdout), args.join(' ')).toBe(latency(a.stdout));
      expect(b.stderr).toBe(a.stderr);
      expect(b.code).toBe(a.code);
    }
    const fields = ['dns', 'example.test', '--type', 'A,MX', '-f', 'csv', '--fields', 'domain,type,status,rcode,answers,resolver,transport'];
    same(await local(fields), await remote(fields));
  });

  it('bulk: the same rows, line numbers and summary, in POST /api/bulk batches (Pro) and one by one (free)', async () => {
    const lines = ['8.8.8.8', '# skipped', 'AS15169', '', '1.2.3', '2001:4860:4860::8888', 'AS4294967295', ...Array.from({ length: 150 }, (_, i) => `9.9.${i >> 8}.${i & 255}`)];
    const input = `${lines.join('\n')}\n`;
    const a = await local(['bulk', '-f', 'csv'], input);
    expect(a.code).toBe(7);
    same(a, await remote(['bulk', '-f', 'csv'], pro, input));
    const small = 'AS13335\n8.8.8.8\nbogus\n';
    const free = await remote(['bulk', '--fields', 'location', '-f', 'json'], null, small);
    const localFree = await local(['bulk', '--fields', 'location', '-f', 'json'], small);
    expect(free.stdout).toBe(localFree.stdout);
    expect(free.code).toBe(localFree.code);
  });

  it('ranges: ip and bulk expand them here and ask the server for each address; one over --max-expand is the same error row', async () => {
    const args = ['ip', '192.0.2.0/30', '8.8.8.0-8.8.8.1', '10.0.0.0/8', '-f', 'csv'];
    const [a, b] = [await local(args), await remote(args)];
    expect(a.code).toBe(7);
    same(a, b);
    const input = '8.8.8.8\n1.1.1.0/31\n10.0.0.0/23\n2001:db8::fffe-2001:db8::1:1\n9.9.9.9-1.1.1.1\n';
    const bulk = await local(['bulk', '-f', 'csv'], input);
    expect(bulk.stdout).toContain('line 3: range 10.0.0.0/23 holds 512 addresses');
    same(bulk, await remote(['bulk', '-f', 'csv'], pro, input));
  });

  it('free tier: premium groups are left out, and stderr says so once', async () => {
    const result = await remote(['ip', '8.8.8.8', '1.1.1.1', '-f', 'ndjson'], null);
    expect(result.code).toBe(0);
    const records = result.stdout.trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(records[0]).toMatchObject({ ip: '8.8.8.8', location: { country_code: 'US' } });
    expect(records[0]).not.toHaveProperty('network');
    expect(records[0]).not.toHaveProperty('note');
    expect(result.stderr.match(/left out network, security: they need an API key/g)).toHaveLength(1);
    // The human views show what came: no network or security group is not a crash.
    for (const args of [['ip', '8.8.8.8'], ['ip', '8.8.8.8', '1.1.1.1']]) {
      const view = await remote(args, null);
      expect(view.code, view.stderr).toBe(0);
      expect(view.stdout).toContain('8.8.8.8');
      expect(view.stdout).not.toContain('undefined');
    }
  });

  it('says the server\'s errors with their codes: a bad key exits 8, an unreachable server 5', async () => {
    const bad = await remote(['ip', '8.8.8.8', '-f', 'json'], `ni_aaaaaaaaaaaa_${'A'.repeat(43)}`);
    expect(bad.code).toBe(8);
    expect(bad.stderr).toBe('netintel: the API key is not known to this server\n');
    const down = await runCli(['ip', '8.8.8.8', '--server', `http://127.0.0.1:${await closedPort()}`, '-f', 'json']);
    expect(down.code).toBe(5);
    expect(JSON.parse(down.stdout)).toMatchObject({ query: '8.8.8.8', error: { code: 'unreachable' } });
    const noServer = await runCli(['ip', '8.8.8.8', '--api-key', pro]);
    expect(noServer.code).toBe(2);
    expect(noServer.stderr).toMatch(/--api-key needs --server/);
    // A key pasted from a page with its ellipsis cannot be sent as a header: a usage error, not "cannot reach".
    const pasted = await runCli(['ip', '8.8.8.8', '--server', url, '--api-key', 'ni_…']);
    expect(pasted.code).toBe(2);
    expect(pasted.stderr).toBe('netintel: --api-key must be the key as "keys create" printed it (ni_ and letters, digits, - and _): it holds characters an HTTP header cannot carry\n');
    const pastedEnv = await runCli(['ip', '8.8.8.8', '--server', url], { env: { NETINTEL_API_KEY: 'ni_é' } });
    expect(pastedEnv.code).toBe(2);
    expect(pastedEnv.stderr).toContain('NETINTEL_API_KEY must be the key');
  });

  it('dkim and bimi: the same records through GET /api/email-tests', async () => {
    for (const args of [['dkim', 'example.test', '--selector', 'selector1,missing', '-f', 'json'], ['bimi', 'example.test', '-f', 'json'], ['dkim', 'example.test', '--selector', 'selector1']]) {
      same(await local(args), await remote(args));
    }
  });

  it('gives an operation the records its local engine gives (the remote engine\'s lookup)', async () => {
    const { createRemoteEngine } = await import('../../src/remote/remote-engine.js');
    const { publishedAnswerCheck } = await import('../../src/app/remote-mode.js');
    const { checkVpn } = await import('../../src/engine/security/check-vpn.js');
    const { createEngineContext } = await import('../../src/engine/context.js');
    const remote = createRemoteEngine({ server: url, apiKey: pro, timeoutMs: 5000, answers: await publishedAnswerCheck() });
    const { VPN } = await import('../../src/operations/vpn.js');
    const lookup = await remote.lookup(VPN, {});
    const [outcome] = await lookup('8.8.8.8');
    expect(outcome).toEqual({ ok: true, query: '8.8.8.8', value: JSON.parse(JSON.stringify(checkVpn(createEngineContext(), '8.8.8.8'))) });
    const [failed] = await lookup('1.2.3.999');
    expect(failed).toMatchObject({ ok: false, query: '1.2.3.999', error: { code: 'invalid_input' } });
  });

  it('takes the server and the key from NETINTEL_SERVER and NETINTEL_API_KEY, or the config file', async () => {
    const result = await runCli(['ip', '8.8.8.8', '-f', 'json'], { env: { NETINTEL_SERVER: url, NETINTEL_API_KEY: pro } });
    expect(JSON.parse(result.stdout).network.asn).toBe(15169);
    const dir = tempDir();
    try {
      const xdg = writeConfigFile(dir.path, { server: url, 'api-key': pro });
      const configured = await runCli(['ip', '8.8.8.8', '-f', 'json'], { env: { XDG_CONFIG_HOME: xdg } });
      expect(JSON.parse(configured.stdout).network.asn).toBe(15169);
      const quota = await runCli(['quota', '-f', 'json'], { env: { XDG_CONFIG_HOME: xdg } });
      expect(JSON.parse(quota.stdout).plan).toBe('pro');
    } finally {
      dir.remove();
    }
  });
});

describe('remote mode waits after a 429 and retries', () => {
  it('honours X-RateLimit-RetryAfter with backoff and still prints every record', async () => {
    const plans = { anonymous: 'free', bulkMax: 100, plans: { free: { daily: 1000, perMinute: 120, burst: 2, batch: 2, features: [] } } };
    const server = await startTestServer({ plans, clock: { now: Date.now, advance: () => {}, set: () => {} } });
    try {
      const url = await server.app.listen({ host: '127.0.0.1', port: 0 });
      const args = ['asn', '8.8.8.8,1.1.1.1,AS15169,AS13335,9.9.9.9', '-f', 'ndjson'];
      const started = Date.now();
      const remote = await runCli([...args, '--server', url]);
      const elapsed = Date.now() - started;
      const local = await runCli(args);
      expect(remote.stdout).toBe(local.stdout);
      expect(remote.code).toBe(0);
      expect(remote.stderr).toMatch(/rate limited by http:\/\/127\.0\.0\.1:\d+; retry 1 in 1\.\d s/);
      expect(elapsed).toBeGreaterThanOrEqual(1000);
    } finally {
      await server.close();
    }
  });
});
