import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryLimitStore } from '../../src/server/limits/memory-limit-store.js';
import { createRedisLimitStore } from '../../src/server/limits/redis-limit-store.js';
import { manualClock, startTestServer, type TestServer } from './harness.js';
import { findRedisServer, startRedisServer, type RedisTestServer } from './redis-server.js';
import { openStore } from '../support/stores.js';
import { freePort } from '../support/peers.js';

const binary = findRedisServer();
if (!binary) console.warn('SKIPPED: redis-server is not installed (apt-get install redis-server); the Redis-backed limit tests do not run');

describe.skipIf(!binary)('rate limits in Redis, shared by two servers', () => {
  let redis: RedisTestServer;
  let dir: string;
  const clock = manualClock();
  let servers: TestServer[] = [];
  let urls: string[] = [];
  let key: string;

  beforeAll(async () => {
    redis = await startRedisServer(binary!);
    dir = mkdtempSync(join(tmpdir(), 'netintel-redis-'));
    const db = join(dir, 'keys.db');
    // Two servers, as two processes would be: each its own key-store connection and Redis client.
    for (let i = 0; i < 2; i++) {
      servers.push(
        await startTestServer({
          clock,
          store: await openStore(db, { recheckMs: 0 }),
          limits: await createRedisLimitStore(redis.url, { keyPrefix: 'test:' }),
        }),
      );
    }
    urls = await Promise.all(servers.map((server) => server.app.listen({ host: '127.0.0.1', port: 0 })));
    key = await servers[0]!.key('starter');
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = async (url: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${url}/api/ipinfo?ip=8.8.8.8`, { headers });
    await response.arrayBuffer();
    return response;
  };

  it('spends one budget whichever server answers', async () => {
    clock.set(Date.UTC(2030, 0, 1, 10));
    const statuses: number[] = [];
    for (let i = 0; i < 101; i++) statuses.push((await get(urls[i % 2]!, { 'x-api-key': key })).status);
    expect(statuses.slice(0, 100).every((status) => status === 200)).toBe(true);
    expect(statuses[100]).toBe(429);
    const other = await get(urls[1]!, { 'x-api-key': key });
    expect(other.status).toBe(429);
    expect(other.headers.get('x-ratelimit-retryafter')).toBe('2');
    expect(other.headers.get('x-ratelimit-remaining')).toBe(String(10_000 - 100));
    clock.advance(60_000);
    const after = await get(urls[0]!, { 'x-api-key': key });
    expect(after.status).toBe(200);
    expect(after.headers.get('x-ratelimit-burst-remaining')).toBe('49');
  });

  it('accepts exactly the allowance under 200 concurrent requests split over both servers', async () => {
    clock.set(Date.UTC(2030, 0, 2, 10));
    const statuses = await Promise.all(
      Array.from({ length: 200 }, (_, i) => get(urls[i % 2]!, { 'x-forwarded-for': 'ignored' }).then((response) => response.status)),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(20);
    expect(statuses.filter((status) => status === 429)).toHaveLength(180);
  });

  it('resets the shared daily count at 00:00 UTC by the servers\' clock', async () => {
    clock.set(Date.UTC(2030, 0, 3, 23, 59));
    const daily = await servers[0]!.key('enterprise', { daily: 3, perMinute: 600, burst: 100, batch: 3 });
    for (let i = 0; i < 3; i++) expect((await get(urls[i % 2]!, { 'x-api-key': daily })).status).toBe(200);
    const refused = await get(urls[1]!, { 'x-api-key': daily });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-retryafter')).toBe('60');
    expect(refused.headers.get('x-ratelimit-reset')).toBe(String(Date.UTC(2030, 0, 4) / 1000));
    clock.set(Date.UTC(2030, 0, 4));
    expect((await get(urls[0]!, { 'x-api-key': daily })).status).toBe(200);
  });

  it('decides exactly as the memory store does', async () => {
    const store = await createRedisLimitStore(redis.url, { keyPrefix: 'compare:' });
    const memory = createMemoryLimitStore();
    const policy = { daily: 50, perMinute: 7, burst: 9 };
    let now = Date.UTC(2030, 0, 5, 23, 50);
    try {
      for (let step = 0; step < 120; step++) {
        const cost = (step * 7) % 4;
        now += ((step * 13) % 11) * 1000;
        expect(await store.consume('s', policy, cost, now), `step ${step}`).toEqual(memory.consume('s', policy, cost, now));
      }
    } finally {
      await store.close();
    }
  });

  it('takes several charges as one, all or none, and gives refunds back, exactly as the memory store does', async () => {
    const store = await createRedisLimitStore(redis.url, { keyPrefix: 'compare-all:' });
    const memory = createMemoryLimitStore();
    const policies = [
      { daily: 50, perMinute: 2, burst: 10 },
      { daily: 30, perMinute: 1, burst: 5 },
      { daily: 100, perMinute: 0.5, burst: 3 },
    ];
    let now = Date.UTC(2030, 0, 5, 23, 40);
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(fc.subarray([0, 1, 2], { minLength: 1 }), fc.constantFrom(1, 1, 1, 2, -1), fc.nat(90_000)), { minLength: 1, maxLength: 60 }),
          fc.nat(1_000_000),
          async (steps, run) => {
            for (const [which, cost, wait] of steps) {
              now += wait;
              const charges = which.map((index) => ({ subject: `${run}:${index}`, policy: policies[index]!, cost }));
              expect(await store.consumeAll(charges, now)).toEqual(await memory.consumeAll(charges, now));
            }
          },
        ),
        { numRuns: 40 },
      );
    } finally {
      await store.close();
    }
  });

  it('sends the calls made in one turn as one script call, deciding them exactly as the memory store does one after another', async () => {
    const store = await createRedisLimitStore(redis.url, { keyPrefix: 'batch:' });
    const memory = createMemoryLimitStore();
    const observer = new Redis(redis.url);
    const scriptCalls = async () => Number(/cmdstat_evalsha:calls=(\d+)/.exec(await observer.info('commandstats'))?.[1] ?? 0);
    const policies = [
      { daily: 40, perMinute: 2, burst: 6 },
      { daily: 25, perMinute: 1, burst: 4 },
    ];
    let now = Date.UTC(2030, 0, 5, 23, 40);
    try {
      await store.peek('warm-up', policies[0]!, now);
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(fc.subarray([0, 1], { minLength: 1 }), fc.constantFrom(0, 1, 1, 2, -1), fc.nat(20_000)), { minLength: 1, maxLength: 60 }),
          fc.nat(1_000_000),
          async (steps, run) => {
            const calls = steps.map(([which, cost, wait]) => {
              now += wait;
              return { charges: which.map((index) => ({ subject: `${run}:${index}`, policy: policies[index]!, cost })), now };
            });
            const expected = [];
            for (const { charges, now } of calls) expected.push(await memory.consumeAll(charges, now));
            const before = await scriptCalls();
            // All made before any is answered, as the requests read in one turn are.
            const decided = await Promise.all(calls.map(({ charges, now }) => store.consumeAll(charges, now)));
            const sent = (await scriptCalls()) - before;
            expect(decided).toEqual(expected);
            expect(sent).toBe(1);
          },
        ),
        { numRuns: 30 },
      );
    } finally {
      observer.disconnect();
      await store.close();
    }
  });

  it('reports an unreachable Redis as 502 unreachable, and /healthz as degraded', async () => {
    const store = await createRedisLimitStore(redis.url, { keyPrefix: 'gone:' });
    const server = await startTestServer({ clock, limits: store });
    try {
      await store.close();
      const response = await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8' });
      expect(response.statusCode).toBe(502);
      expect(JSON.parse(response.body).code).toBe('unreachable');
      expect((await server.app.inject({ url: '/healthz' })).statusCode).toBe(503);
    } finally {
      await server.app.close();
      await server.store.close();
    }
  });
});

describe.skipIf(!binary)('the connection to Redis', () => {
  const policy = { daily: 1000, perMinute: 600, burst: 100 };

  it('is refused at start when Redis cannot be reached, in one line that names the URL without its password', async () => {
    const port = await freePort();
    const started = performance.now();
    const refused = createRedisLimitStore(`redis://:Secr3t-pw@127.0.0.1:${port}`);
    await expect(refused).rejects.toMatchObject({ code: 'unreachable', details: { redis: `redis://:***@127.0.0.1:${port}` } });
    const message = (await refused.catch((error: Error) => error)).message;
    expect(message).toMatch(new RegExp(`^cannot connect to Redis at redis://:\\*\\*\\*@127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`));
    expect(message).not.toContain('Secr3t-pw');
    expect(message).not.toContain('\n');
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('fails each call at once while Redis is down, and counts again once Redis is back (its script loaded anew)', async () => {
    const first = await startRedisServer(binary!);
    const port = Number(new URL(first.url).port);
    const store = await createRedisLimitStore(first.url, { keyPrefix: 'restart:' });
    let again: RedisTestServer | undefined;
    try {
      expect((await store.consume('s', policy, 1, Date.now())).allowed).toBe(true);
      await first.stop();
      const started = performance.now();
      await expect(store.consume('s', policy, 1, Date.now())).rejects.toMatchObject({ code: 'unreachable' });
      expect(performance.now() - started).toBeLessThan(1000);
      expect(await store.ping()).toBe(false);

      // A new redis-server on the same port knows neither the count nor the script.
      again = await startRedisServer(binary!, port);
      const back = performance.now();
      let state = null;
      while (state === null && performance.now() - back < 5000) {
        state = await store.consume('s', policy, 1, Date.now()).catch(() => null);
        if (state === null) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(state).toMatchObject({ allowed: true, dailyRemaining: policy.daily - 1 });
      expect(await store.ping()).toBe(true);
    } finally {
      await store.close();
      await again?.stop();
      await first.stop();
    }
  });
});
