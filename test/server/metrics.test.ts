/**
 * The server's Prometheus metrics (docs/serve.md, Metrics): what each kind
 * of answer counts, that no caller-chosen text becomes a label, DNS
 * timeouts of the server's own lookups, the health of the stores and the
 * datasets' ages read at scrape time, and `serve --metrics-port` end to
 * end: its own port, never the API's. Every scrape is read by a strict
 * parser of the text format.
 */
import net from 'node:net';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { dataStatus } from '../../src/engine/data/data-status.js';
import { loadSourceRegistry } from '../../src/engine/data/data-sources.js';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { createMemoryLimitStore } from '../../src/server/limits/memory-limit-store.js';
import { createRedisLimitStore } from '../../src/server/limits/redis-limit-store.js';
import { createServerMetrics, type ServerMetrics } from '../../src/server/metrics/server-metrics.js';
import { openStore, type Store } from '../../src/store/open-store.js';
import { runCli, spawnCli } from '../support/cli.js';
import { startDnsServer } from '../support/dns-server.js';
import { parsePrometheusText, type Exposition } from '../support/prometheus-text.js';
import { serve, type Served } from '../support/served.js';
import { findPostgres, startPostgresServer } from '../support/postgres.js';
import { startTestServer, type TestServer } from './harness.js';
import { findRedisServer, startRedisServer } from './redis-server.js';

const postgresPrograms = findPostgres();
const redisBinary = findRedisServer();
if (postgresPrograms === null) console.warn('SKIPPING the PostgreSQL case of test/server/metrics.test.ts: no initdb/postgres (Debian package postgresql)');
if (redisBinary === null) console.warn('SKIPPING the Redis case of test/server/metrics.test.ts: no redis-server (Debian package redis-server)');

const closers: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function scrape(metrics: ServerMetrics): Promise<Exposition> {
  const { contentType, text } = await metrics.scrape();
  expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(text);
}

/** A test server with metrics over its own SQLite store and memory limits. */
async function serverWithMetrics(options: Parameters<typeof startTestServer>[0] = {}): Promise<{ server: TestServer; metrics: ServerMetrics; store: Store }> {
  const store = await openStore(':memory:');
  const limits = createMemoryLimitStore();
  const metrics = createServerMetrics({ version: '9.9.9', database: store.db, limits, dataDir: null });
  const server = await startTestServer({ ...options, store, limits, metrics });
  closers.push(() => server.close(), () => metrics.close());
  return { server, metrics, store };
}

describe('the server\'s metrics', () => {
  it('count answers by declared route, status and plan, lookups by items charged, and refusals by the allowance used up', async () => {
    const { server, metrics } = await serverWithMetrics();
    const enterprise = await server.key('enterprise');
    const tight = await server.key('starter', { burst: 1, perMinute: 1, batch: 1 });
    expect((await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8', headers: { 'x-api-key': enterprise } })).statusCode).toBe(200);
    const bulk = await server.app.inject({ method: 'POST', url: '/api/bulk', headers: { 'x-api-key': enterprise }, payload: { ips: ['8.8.8.8', '1.1.1.1', '9.9.9.9'] } });
    expect(bulk.statusCode).toBe(200);
    expect((await server.app.inject({ url: '/api/ipinfo?ip=8.8.4.4', headers: { 'x-api-key': tight } })).statusCode).toBe(200);
    expect((await server.app.inject({ url: '/api/ipinfo?ip=8.8.4.4', headers: { 'x-api-key': tight } })).statusCode).toBe(429);
    expect((await server.app.inject({ url: '/api/ipinfo?ip=not-an-address', headers: { 'x-api-key': enterprise } })).statusCode).toBe(400);
    expect((await server.app.inject({ url: '/no/such/thing-12345' })).statusCode).toBe(404);

    const page = await scrape(metrics);
    expect(page.total('netintel_http_requests_total', { route: '/api/ipinfo', method: 'GET', status: '200', plan: 'enterprise' })).toBe(1);
    expect(page.total('netintel_http_requests_total', { route: '/api/ipinfo', status: '200', plan: 'starter' })).toBe(1);
    expect(page.total('netintel_http_requests_total', { route: '/api/ipinfo', status: '429', plan: 'starter' })).toBe(1);
    expect(page.total('netintel_http_requests_total', { route: '/api/ipinfo', status: '400' })).toBe(1);
    expect(page.total('netintel_http_requests_total', { route: '/api/bulk', method: 'POST', status: '200' })).toBe(1);
    expect(page.total('netintel_http_requests_total', { route: 'unrouted', status: '404', plan: 'free' })).toBe(1);
    // Three addresses of the bulk request, one of each answered ipinfo; the refused and the invalid requests charged nothing answered.
    expect(page.total('netintel_lookups_total', { route: '/api/bulk' })).toBe(3);
    expect(page.total('netintel_lookups_total', { route: '/api/ipinfo' })).toBe(2);
    expect(page.total('netintel_rate_limit_refusals_total', { plan: 'starter', limit: 'burst' })).toBe(1);
    expect(page.total('netintel_rate_limit_refusals_total')).toBe(1);
    expect(page.total('netintel_http_request_duration_seconds_count', { route: '/api/ipinfo' })).toBe(4);
    expect(page.total('netintel_http_request_duration_seconds_bucket', { route: '/api/ipinfo', le: '+Inf' })).toBe(4);
    expect(page.total('netintel_build_info', { version: '9.9.9' })).toBe(1);
    expect(page.types.get('netintel_http_requests_total')).toBe('counter');
    expect(page.types.get('netintel_http_request_duration_seconds')).toBe('histogram');
    expect(page.types.get('netintel_store_up')).toBe('gauge');
    // Node's own figures come along: CPU, memory, the event loop's delay.
    expect(page.types.get('process_cpu_user_seconds_total')).toBe('counter');
    expect(page.types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');
  });

  it('never make a label of what a caller sends: any path is a declared route or `unrouted`, any method one Node accepts', async () => {
    const { server, metrics } = await serverWithMetrics({ checkContract: false });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'HEAD'),
        fc.webPath(),
        fc.string({ maxLength: 20 }),
        async (method, path, query) => {
          const response = await server.app.inject({ method: method as 'GET', url: `${path || '/'}?${encodeURIComponent(query)}` });
          expect(response.statusCode).toBeGreaterThanOrEqual(200);
        },
      ),
      { numRuns: 150 },
    );
    const page = await scrape(metrics);
    const routes = new Set(page.samples.filter((sample) => sample.name === 'netintel_http_requests_total').map((sample) => sample.labels['route']!));
    const documented = Object.keys((server.contract.document as { paths: Record<string, unknown> }).paths);
    const known = new Set(['unrouted', '/healthz', '/openapi.json', '/docs', ...documented]);
    expect([...routes].filter((route) => !known.has(route))).toEqual([]);
    const methods = new Set(page.samples.filter((sample) => sample.name === 'netintel_http_requests_total').map((sample) => sample.labels['method']!));
    expect([...methods].filter((method) => !['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'HEAD'].includes(method))).toEqual([]);
    expect(page.total('netintel_http_requests_total')).toBeGreaterThanOrEqual(150);
  });

  it('count the DNS queries of the server\'s own lookups that time out, by resolver and transport', async () => {
    const dns = await startDnsServer({ defaultBehaviour: 'silent' });
    closers.push(() => dns.close());
    const { server, metrics } = await serverWithMetrics({ engine: { resolvers: [parseResolverAddress(dns.address)], timeoutMs: 300, dnsRetries: 0 } });
    const key = await server.key('enterprise');
    const answer = await server.app.inject({ url: '/api/dns-lookup?domain=silent.example&type=A', headers: { 'x-api-key': key } });
    expect(answer.statusCode).toBeGreaterThanOrEqual(200);
    const page = await scrape(metrics);
    expect(page.total('netintel_dns_timeouts_total', { resolver: dns.address, transport: 'udp' })).toBeGreaterThanOrEqual(1);
    expect(dns.queries.length).toBeGreaterThanOrEqual(1);
  });

  it('say at each scrape whether the key database and the limit store answer', async () => {
    const { metrics, store } = await serverWithMetrics();
    const before = await scrape(metrics);
    expect(before.total('netintel_store_up', { store: 'keys', backend: 'sqlite' })).toBe(1);
    expect(before.total('netintel_store_up', { store: 'limits', backend: 'memory' })).toBe(1);
    expect(before.total('netintel_keys_kept_in_memory', { backend: 'sqlite' })).toBe(1);
    await store.close();
    const after = await scrape(metrics);
    expect(after.total('netintel_store_up', { store: 'keys', backend: 'sqlite' })).toBe(0);
    expect(after.total('netintel_store_up', { store: 'limits' })).toBe(1);
    expect(after.total('netintel_keys_kept_in_memory', { backend: 'sqlite' })).toBe(0);
  });

  it.skipIf(postgresPrograms === null || redisBinary === null)('say that PostgreSQL and Redis are down when they stop answering: a hung Redis within the scrape\'s second', async () => {
    const [postgres, redis] = await Promise.all([startPostgresServer(postgresPrograms!), startRedisServer(redisBinary!)]);
    closers.push(() => postgres.stop(), () => redis.stop());
    const store = await openStore(await postgres.createDatabase('metrics'));
    const limits = await createRedisLimitStore(redis.url);
    const metrics = createServerMetrics({ version: '1', database: store.db, limits, dataDir: null });
    closers.push(() => store.close().catch(() => {}), () => limits.close(), () => metrics.close());
    // The first scrape starts following PostgreSQL's changes; keys are kept once its probe came back.
    expect((await scrape(metrics)).total('netintel_keys_kept_in_memory', { backend: 'postgres' })).toBe(0);
    const start = Date.now();
    while (store.db.changeMark() === null && Date.now() - start < 5000) await new Promise((resolve) => setTimeout(resolve, 10));
    const up = await scrape(metrics);
    expect(up.total('netintel_keys_kept_in_memory', { backend: 'postgres' })).toBe(1);
    expect(up.total('netintel_store_up', { store: 'keys', backend: 'postgres' })).toBe(1);
    expect(up.total('netintel_store_up', { store: 'limits', backend: 'redis' })).toBe(1);
    redis.signal('SIGSTOP');
    const started = Date.now();
    const hung = await scrape(metrics);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(hung.total('netintel_store_up', { store: 'limits', backend: 'redis' })).toBe(0);
    expect(hung.total('netintel_store_up', { store: 'keys', backend: 'postgres' })).toBe(1);
    redis.signal('SIGCONT');
    await postgres.stop();
    const stopped = Date.now();
    while (store.db.changeMark() !== null && Date.now() - stopped < 5000) await new Promise((resolve) => setTimeout(resolve, 10));
    const down = await scrape(metrics);
    expect(down.total('netintel_store_up', { store: 'keys', backend: 'postgres' })).toBe(0);
    expect(down.total('netintel_keys_kept_in_memory', { backend: 'postgres' })).toBe(0);
  }, 60_000);

  it('give each installed dataset\'s age from its own date, as data status does, and whether it is stale', async () => {
    const rows = dataStatus({ dataDir: null, sources: loadSourceRegistry(), now: new Date() }).filter((row) => row.updated !== null);
    expect(rows.length).toBeGreaterThan(0);
    const city = rows.find((row) => row.name === 'dbip-city-ipv4')!;
    const now = new Date(Date.parse(city.updated!) + 3 * 86_400_000);
    const store = await openStore(':memory:');
    const metrics = createServerMetrics({ version: '1', database: store.db, limits: createMemoryLimitStore(), dataDir: null, now: () => now });
    closers.push(() => store.close(), () => metrics.close());
    const page = await scrape(metrics);
    expect(page.total('netintel_dataset_age_seconds', { dataset: 'dbip-city-ipv4' })).toBe(3 * 86_400);
    for (const row of rows) expect(page.samples.some((sample) => sample.name === 'netintel_dataset_age_seconds' && sample.labels['dataset'] === row.name)).toBe(true);
    expect(page.total('netintel_dataset_stale', { dataset: 'dbip-city-ipv4' })).toBe(0);
  });
});

describe('serve --metrics-port', () => {
  async function served(args: string[]): Promise<{ api: string; metrics: string; process: Served }> {
    const process = await serve(['--metrics-port', '0', '--log-level', 'warn', '--no-accounts', ...args]);
    closers.push(async () => {
      process.child.kill('SIGTERM');
      await process.exit;
    });
    const deadline = Date.now() + 10_000;
    while (!/metrics on (\S+)/.test(process.stdout()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    return { api: process.url, metrics: /metrics on (\S+)/.exec(process.stdout())![1]!, process };
  }

  it('serves the metrics on their own port, on 127.0.0.1, and not on the API\'s', async () => {
    const { api, metrics } = await served([]);
    expect(new URL(metrics).hostname).toBe('127.0.0.1');
    expect(new URL(metrics).port).not.toBe(new URL(api).port);
    expect((await fetch(`${api}/api/ipinfo?ip=8.8.8.8`)).status).toBe(200);
    expect((await fetch(`${api}/metrics`)).status).toBe(404);
    const scraped = await fetch(metrics);
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const page = parsePrometheusText(await scraped.text());
    expect(page.total('netintel_http_requests_total', { route: '/api/ipinfo', status: '200', plan: 'free' })).toBe(1);
    expect(page.total('netintel_store_up', { store: 'keys' })).toBe(1);
    expect((await fetch(metrics.replace('/metrics', '/other'))).status).toBe(404);
    expect((await fetch(metrics, { method: 'POST' })).status).toBe(405);
  });

  it('refuses --metrics-host without --metrics-port, and a metrics port in use, with exit 2 naming the flag', async () => {
    const alone = await runCli(['serve', '--port', '0', '--metrics-host', '127.0.0.1']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/--metrics-host needs --metrics-port/);
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => holder.close(resolve)));
    const port = (holder.address() as net.AddressInfo).port;
    const busy = await spawnCli(['serve', '--port', '0', '--no-accounts', '--metrics-port', String(port), '--log-level', 'silent']);
    expect(busy.code).toBe(2);
    expect(busy.stderr).toContain(`port ${port} is in use (127.0.0.1:${port}): choose another with --metrics-port`);
  });
});
