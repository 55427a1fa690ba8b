import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { REPO_ROOT, spawnCli, tempDir } from '../support/cli.js';
import { serve, type Served } from '../support/served.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { findRedisServer, startRedisServer } from '../server/redis-server.js';

describe('netintel serve (the built program)', () => {
  const dir = tempDir('netintel-serve-');
  const db = join(dir.path, 'keys.db');
  let dns: DnsTestServer;
  let served: Served;

  beforeAll(async () => {
    dns = await startDnsServer({ records: [{ name: 'slow.test', type: 'A', data: '192.0.2.1' }], delayMs: 700 });
    served = await serve(['--db', db, '--resolver', dns.address]);
  });
  afterAll(async () => {
    if (served.child.exitCode === null) served.child.kill('SIGKILL');
    await dns.close();
    dir.remove();
  });

  it('binds 127.0.0.1 by default and answers /healthz', async () => {
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const health = await (await fetch(`${served.url}/healthz`)).json();
    expect(health).toMatchObject({ status: 'ok', version: '0.2.0', limits: { store: 'memory', ok: true } });
  });

  it('accepts keys made by `netintel keys create`, and refuses them within a second of `keys revoke`', async () => {
    const created = JSON.parse((await spawnCli(['keys', 'create', '--plan', 'pro', '--db', db, '-f', 'json'])).stdout);
    const ask = () => fetch(`${served.url}/api/ipinfo?ip=8.8.8.8`, { headers: { 'x-api-key': created.key } });
    const ok = await ask();
    expect(ok.status).toBe(200);
    expect((await ok.json()).network.asn).toBe(15169);
    expect((await spawnCli(['keys', 'revoke', created.id, '--db', db])).code).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await ask()).status).toBe(401);
  });

  it('writes structured JSON logs on stderr, one line per request, never the key', async () => {
    await fetch(`${served.url}/api/ipinfo?ip=1.1.1.1`, { headers: { 'x-api-key': 'ni_secretsecret_should-not-be-logged' } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const lines = served.stderr().trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.find((line) => line.msg === 'listening')).toMatchObject({ url: served.url, limits: 'memory' });
    expect(lines.filter((line) => line.msg === 'request').at(-1)).toMatchObject({ method: 'GET', path: '/api/ipinfo', status: 401, client: '127.0.0.1' });
    expect(served.stderr()).not.toContain('should-not-be-logged');
  });

  it('finishes requests in flight on SIGTERM, then exits 0', async () => {
    const inflight = fetch(`${served.url}/api/dns-lookup?domain=slow.test`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    served.child.kill('SIGTERM');
    const response = await inflight;
    expect(response.status).toBe(200);
    expect((await response.json()).answers[0].data).toBe('192.0.2.1');
    expect(await served.exit).toEqual({ code: 0, signal: null });
    expect(served.stderr()).toContain('"msg":"stopped"');
    await expect(fetch(`${served.url}/healthz`)).rejects.toThrow();
  });
});

describe('netintel serve on SIGTERM with probes that would take long', () => {
  const dir = tempDir('netintel-serve-term-');
  let dns: DnsTestServer;
  let silentSmtp: Server;
  let smtpPort: number;

  beforeAll(async () => {
    dns = await startDnsServer({ defaultBehaviour: 'silent' });
    // Accepts connections and never greets.
    silentSmtp = createServer(() => {});
    await new Promise<void>((resolve) => silentSmtp.listen(0, '127.0.0.1', resolve));
    smtpPort = (silentSmtp.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await dns.close();
    await new Promise((resolve) => silentSmtp.close(resolve));
    dir.remove();
  });

  const start = (args: string[] = []) =>
    serve([
      '--db', join(dir.path, 'keys.db'),
      '--resolver', dns.address,
      '--timeout', '30000',
      '--allow-private-targets',
      '--smtp-ports', String(smtpPort),
      '--log-level', 'warn',
      ...args,
    ]);

  it('exits 0 within the 2 s grace and a little, answering the probes left 503, not after their 30 s timeouts (SMTP, DNS, DNSBL)', async () => {
    const served = await start();
    try {
      const smtp = fetch(`${served.url}/api/smtp-test?host=127.0.0.1&port=${smtpPort}`);
      const lookup = fetch(`${served.url}/api/dns-lookup?domain=never.test`);
      // These two make DNS transports of their own, outside the server's engine context.
      const ownResolver = fetch(`${served.url}/api/dns-lookup?domain=never.test&resolver=${dns.address}`);
      const blacklist = fetch(`${served.url}/api/blacklist-check?ip=8.8.8.8`);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const signalled = performance.now();
      served.child.kill('SIGTERM');
      const [answers, exit] = await Promise.all([Promise.all([smtp, lookup, ownResolver, blacklist]), served.exit]);
      const ms = performance.now() - signalled;
      expect(exit).toEqual({ code: 0, signal: null });
      expect(ms).toBeGreaterThan(1900);
      expect(ms).toBeLessThan(3500);
      for (const answer of answers) {
        expect(answer.status).toBe(503);
        expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(answer.headers.get('retry-after')).toBe('1');
        expect((await answer.json()).details).toEqual({ reason: 'shutdown' });
      }
    } finally {
      if (served.child.exitCode === null) served.child.kill('SIGKILL');
    }
  });

  it('cuts at once on a second signal, and closes idle keep-alive connections at the first', async () => {
    const served = await start(['--shutdown-grace', '60000']);
    try {
      // An idle keep-alive connection must not hold the shutdown.
      await (await fetch(`${served.url}/healthz`)).json();
      const smtp = fetch(`${served.url}/api/smtp-test?host=127.0.0.1&port=${smtpPort}`);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const signalled = performance.now();
      served.child.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(served.child.exitCode).toBeNull();
      served.child.kill('SIGTERM');
      expect(await served.exit).toEqual({ code: 0, signal: null });
      expect(performance.now() - signalled).toBeLessThan(2000);
      expect((await smtp).status).toBe(503);
    } finally {
      if (served.child.exitCode === null) served.child.kill('SIGKILL');
    }
  });
});

describe('netintel serve connection settings', () => {
  const dir = tempDir('netintel-serve-settings-');
  afterAll(() => dir.remove());

  const listening = async (args: string[], env: Record<string, string> = {}) => {
    const served = await serve(['--db', join(dir.path, 'keys.db'), ...args], env);
    served.child.kill('SIGTERM');
    await served.exit;
    // 'exit' can come before the last of stderr has been read.
    for (let waited = 0; !served.stderr().includes('"msg":"stopped"') && waited < 2000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    const line = served.stderr().split('\n').find((text) => text.includes('"msg":"listening"'))!;
    return (JSON.parse(line) as { connections: Record<string, number> }).connections;
  };

  it('takes them from flags over NETINTEL_* variables over the defaults', async () => {
    expect(await listening([])).toEqual({ headersTimeoutMs: 10_000, requestTimeoutMs: 15_000, keepAliveTimeoutMs: 5_000, maxConnections: 1024, shutdownGraceMs: 2_000 });
    const env = { NETINTEL_HEADERS_TIMEOUT: '3000', NETINTEL_REQUEST_TIMEOUT: '4000', NETINTEL_KEEP_ALIVE_TIMEOUT: '1000', NETINTEL_MAX_CONNECTIONS: '64', NETINTEL_SHUTDOWN_GRACE: '0' };
    expect(await listening([], env)).toEqual({ headersTimeoutMs: 3000, requestTimeoutMs: 4000, keepAliveTimeoutMs: 1000, maxConnections: 64, shutdownGraceMs: 0 });
    expect(await listening(['--headers-timeout', '2000', '--max-connections', '10', '--shutdown-grace', '500'], env)).toEqual({
      headersTimeoutMs: 2000,
      requestTimeoutMs: 4000,
      keepAliveTimeoutMs: 1000,
      maxConnections: 10,
      shutdownGraceMs: 500,
    });
  });

  it('refuses nonsense with exit 2, naming the flag or variable, without a stack', async () => {
    for (const [args, env] of [
      [['--max-connections', '0'], {}],
      [['--headers-timeout', '1e3'], {}],
      [[], { NETINTEL_REQUEST_TIMEOUT: 'soon' }],
    ] as Array<[string[], Record<string, string>]>) {
      const result = await spawnCli(['serve', '--port', '0', '--db', join(dir.path, 'keys.db'), ...args], { env });
      expect(result.code, JSON.stringify([args, env])).toBe(2);
      expect(result.stderr).toMatch(/--max-connections|--headers-timeout|NETINTEL_REQUEST_TIMEOUT/);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });
});

describe('netintel serve on a port it cannot have', () => {
  const dir = tempDir('netintel-serve-port-');
  let taken: Server;
  let port: number;
  beforeAll(async () => {
    taken = createServer(() => {});
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    port = (taken.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => taken.close(resolve));
    dir.remove();
  });

  it('exits 2 (usage) with one line naming the port and --port when the port is in use, not as a bug', async () => {
    const result = await spawnCli(['serve', '--port', String(port), '--db', join(dir.path, 'keys.db')]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`netintel: port ${port} is in use (127.0.0.1:${port}): choose another with --port (0 takes any free port)\n`);
  });

  it.skipIf(!findRedisServer())('exits 2 at a bad --trust-proxy with Redis opened, closing it rather than hanging on it', async () => {
    const redis = await startRedisServer(findRedisServer()!);
    try {
      const result = await spawnCli(['serve', '--port', '0', '--db', join(dir.path, 'keys.db'), '--redis-url', redis.url, '--trust-proxy', 'not-an-address']);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^netintel: --trust-proxy: "not-an-address" is not an IP address/);
    } finally {
      await redis.stop();
    }
  });

  it('refuses --trust-anchor: the API validates DNSSEC from the IANA root for every caller; the CLI\'s variable is not read', async () => {
    const result = await spawnCli(['serve', '--port', '0', '--db', join(dir.path, 'keys.db'), '--trust-anchor', '/nonexistent/anchor.key']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('netintel: netintel serve validates DNSSEC from the IANA root KSKs: --trust-anchor applies to the runs of the CLI, not to the server\n');
  });

  it('says which --host is wrong when the address is not this machine\'s', async () => {
    // 192.0.2.1 (TEST-NET-1, RFC 5737) is no address of a test machine.
    const result = await spawnCli(['serve', '--host', '192.0.2.1', '--port', '0', '--db', join(dir.path, 'keys.db')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^netintel: 192\.0\.2\.1 is not an address of this machine: choose another with --host/);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  });
});

describe('start-up cost of local runs', () => {
  it('never loads fastify, better-sqlite3 or ioredis for `netintel ip 8.8.8.8`', async () => {
    const script = `
      const { loadCli } = require(${JSON.stringify(join(REPO_ROOT, 'bin', 'load-bundle.js'))});
      const { Writable } = require('node:stream');
      const sink = new Writable({ write(_c, _e, cb) { cb(); } });
      loadCli().main(['ip', '8.8.8.8', '-f', 'json'], { stdin: process.stdin, stdout: sink, stderr: sink, env: { HOME: '/nonexistent' } }).then((code) => {
        const loaded = Object.keys(require.cache).filter((file) => /node_modules\\/(fastify|better-sqlite3|ioredis|pino)\\//.test(file));
        process.stdout.write(JSON.stringify({ code, loaded }));
      });`;
    const child = spawn(process.execPath, ['-e', script], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await new Promise((resolve) => child.on('exit', resolve));
    expect(JSON.parse(out)).toEqual({ code: 0, loaded: [] });
  });

  it('does load them for serve and keys (so the check above can see them)', async () => {
    const dir = tempDir('netintel-serve-load-');
    try {
      const script = `
        const { loadCli } = require(${JSON.stringify(join(REPO_ROOT, 'bin', 'load-bundle.js'))});
        const { Writable } = require('node:stream');
        const sink = new Writable({ write(_c, _e, cb) { cb(); } });
        loadCli().main(['keys', 'list', '--db', ${JSON.stringify(join(dir.path, 'k.db'))}], { stdin: process.stdin, stdout: sink, stderr: sink, env: {} }).then(() => {
          process.stdout.write(JSON.stringify(Object.keys(require.cache).some((file) => file.includes('node_modules/better-sqlite3/'))));
        });`;
      const child = spawn(process.execPath, ['-e', script], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      await new Promise((resolve) => child.on('exit', resolve));
      expect(out).toBe('true');
    } finally {
      dir.remove();
    }
  });
});
