import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { decide, nextUtcMidnight } from '../../src/server/limits/gcra.js';
import { createMemoryLimitStore } from '../../src/server/limits/memory-limit-store.js';
import type { ApiRoute } from '../../src/server/api-route.js';
import { manualClock, startTestServer, type TestServer } from './harness.js';

const MINUTE = 60_000;

/** Bulk handlers that answer at once (an empty bulk answer), so that a test can spend a whole day's allowance quickly. */
const cheapBulk = (routes: ApiRoute[]): ApiRoute[] =>
  routes.map((route) =>
    route.url === '/api/bulk' || route.url === '/api/asn-lookup'
      ? { ...route, handler: () => ({ results: [], summary: { total: 0, succeeded: 0, failed: 0, errors: {} } }) }
      : route,
  );

describe('the limit arithmetic (GCRA burst bucket and UTC day)', () => {
  const policy = { daily: 1000, perMinute: 10, burst: 20 };
  const t0 = Date.UTC(2030, 0, 1, 10);

  it('takes burst requests at once from a full bucket and refuses the next one for one refill interval', () => {
    let record = null;
    for (let i = 0; i < 20; i++) {
      const { state, next } = decide(record, policy, 1, t0);
      expect(state.allowed).toBe(true);
      expect(state.burstRemaining).toBe(19 - i);
      record = next;
    }
    const refused = decide(record, policy, 1, t0);
    expect(refused.state).toMatchObject({ allowed: false, limitedBy: 'burst', retryAfterMs: 6000, burstRemaining: 0 });
    expect(refused.next).toBeNull();
    expect(decide(record, policy, 1, t0 + 5999).state.allowed).toBe(false);
    expect(decide(record, policy, 1, t0 + 6000).state.allowed).toBe(true);
  });

  it('never says a token is left to a request it refuses for the burst, nor none to one it would take (any moment of the refill)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 25 }), fc.integer({ min: -20, max: 20 }), fc.double({ min: 0, max: 1, noNaN: true }), (tokens, offset, fraction) => {
        // A bucket `tokens` refill intervals spent, give or take a few ms (where the verdict turns), looked at a fraction of a ms later.
        const record = { tat: t0 + Math.max(tokens * 6000 + offset, 0), day: Math.floor(t0 / 86_400_000), count: 0 };
        const now = t0 + fraction;
        const take = decide(record, policy, 1, now).state;
        const look = decide(record, policy, 0, now).state;
        if (!take.allowed) expect(take.burstRemaining).toBe(0);
        expect(look.burstRemaining >= 1).toBe(take.allowed);
      }),
      { numRuns: 5000 },
    );
    // The 6 ms before a token comes back (EPSILON read in tokens of a 6 s interval) said "1 left" with a refusal.
    const empty = { tat: t0 + 19 * 6000 + 3, day: Math.floor(t0 / 86_400_000), count: 0 };
    expect(decide(empty, policy, 1, t0).state).toMatchObject({ allowed: false, burstRemaining: 0 });
  });

  it('refills at the per-minute rate and never above the capacity', () => {
    let record = decide(null, policy, 20, t0).next;
    expect(decide(record, policy, 0, t0 + 30_000).state.burstRemaining).toBe(5);
    expect(decide(record, policy, 0, t0 + MINUTE).state.burstRemaining).toBe(10);
    expect(decide(record, policy, 0, t0 + 60 * MINUTE).state.burstRemaining).toBe(20);
    record = decide(record, policy, 10, t0 + MINUTE).next;
    expect(decide(record, policy, 1, t0 + MINUTE).state.limitedBy).toBe('burst');
  });

  it('charges nothing for a refused request, so the bucket and the day stay as they were', () => {
    const record = decide(null, policy, 15, t0).next;
    const refused = decide(record, policy, 10, t0);
    expect(refused.state).toMatchObject({ allowed: false, burstRemaining: 5, dailyRemaining: 985, retryAfterMs: 30_000 });
  });

  it('resets the daily count at 00:00 UTC and says so', () => {
    const day = { daily: 3, perMinute: 600, burst: 10 };
    let record = decide(null, day, 3, t0).next;
    const refused = decide(record, day, 1, t0 + MINUTE);
    expect(refused.state).toMatchObject({ allowed: false, limitedBy: 'daily', dailyRemaining: 0, resetAt: Date.UTC(2030, 0, 2) });
    expect(refused.state.retryAfterMs).toBe(Date.UTC(2030, 0, 2) - (t0 + MINUTE));
    expect(decide(record, day, 1, Date.UTC(2030, 0, 1, 23, 59, 59, 999)).state.allowed).toBe(false);
    record = decide(record, day, 1, Date.UTC(2030, 0, 2)).next;
    expect(record).toMatchObject({ count: 1 });
    expect(nextUtcMidnight(Date.UTC(2030, 0, 2))).toBe(Date.UTC(2030, 0, 3));
  });

  it('takes one burst, then the per-minute rate: no second burst when a minute turns (not a fixed window)', () => {
    // A counter of `burst` per fixed window would take another whole burst when its
    // window turns over; a caller asking every 500 ms gets the burst once, then a token per 6 s.
    let record = null;
    let accepted = 0;
    for (let ms = 0; ms < 2 * MINUTE; ms += 500) {
      const { state, next } = decide(record, policy, 1, t0 + ms);
      if (state.allowed) {
        accepted += 1;
        record = next;
      }
      if (ms === MINUTE - 500) expect(accepted).toBe(20 + 9);
    }
    expect(accepted).toBe(20 + 19);
  });

  it('handles fractional rates (a plan of 100 an hour)', () => {
    const hourly = { daily: 1000, perMinute: 100 / 60, burst: 1 };
    const record = decide(null, hourly, 1, t0).next;
    expect(decide(record, hourly, 1, t0 + 35_999).state.allowed).toBe(false);
    expect(decide(record, hourly, 1, t0 + 36_000).state.allowed).toBe(true);
  });

  it('accepts exactly the allowance from a synchronous store whatever the interleaving', async () => {
    const store = createMemoryLimitStore();
    const results = await Promise.all(Array.from({ length: 200 }, async () => store.consume('s', policy, 1, t0)));
    expect(results.filter((state) => state.allowed)).toHaveLength(20);
  });
});

describe('every plan\'s burst, per-minute and daily limits over HTTP, with a controlled clock', () => {
  const clock = manualClock();
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ clock, routes: cheapBulk });
  });
  afterAll(() => server.close());

  /** Spends `items` with the largest requests the plan allows (bulk forms), all of which must be accepted. */
  async function spend(key: string, plan: string, items: number, between = 0): Promise<void> {
    const { bulkMax } = server.plans;
    const { batch, features } = server.plans.plans[plan]!;
    const size = features.includes('bulk') ? bulkMax : batch;
    while (items > 0) {
      const n = Math.min(size, items);
      const response = features.includes('bulk')
        ? await server.app.inject({ method: 'POST', url: '/api/bulk', headers: { 'x-api-key': key }, payload: { ips: Array(n).fill('8.8.8.8') } })
        : await server.app.inject({ url: `/api/asn-lookup?bulk=${Array(n).fill('AS1').join(',')}`, headers: { 'x-api-key': key } });
      expect(response.statusCode, response.body).toBe(200);
      items -= n;
      clock.advance(between * n);
    }
  }

  const one = (key: string) => server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8', headers: { 'x-api-key': key } });

  function expect429(response: LightMyRequestResponse, limit: 'burst' | 'daily', retryAfter: number): void {
    expect(response.statusCode).toBe(429);
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(response.headers['x-ratelimit-retryafter']).toBe(String(retryAfter));
    expect(response.headers['retry-after']).toBe(String(retryAfter));
    const body = JSON.parse(response.body);
    expect(body).toMatchObject({ status: 429, code: 'rate_limited', details: { limit, retry_after_seconds: retryAfter } });
  }

  for (const [plan, daily, perMinute, burst] of [
    ['free-account', 5000, 20, 40],
    ['starter', 10_000, 50, 100],
    ['pro', 100_000, 500, 1000],
    ['enterprise', 1_000_000, 5000, 10_000],
  ] as const) {
    it(`${plan}: the plans file holds the numbers of docs/api.md (${daily}/day, ${perMinute}/min, burst ${burst})`, () => {
      expect(server.plans.plans[plan]).toMatchObject({ daily, perMinute, burst });
    });

    it(`${plan}: accepts a burst of ${burst}, refuses the next for ${Math.ceil(60 / perMinute)} s, then refills ${perMinute} a minute`, async () => {
      clock.set(Date.UTC(2030, 0, 1, 10));
      const key = await server.key(plan);
      await spend(key, plan, burst);
      const refused = await one(key);
      expect429(refused, 'burst', Math.ceil(60 / perMinute));
      expect(refused.headers['x-ratelimit-burst-remaining']).toBe('0');
      expect(refused.headers['x-ratelimit-remaining']).toBe(String(daily - burst));
      clock.advance(MINUTE);
      await spend(key, plan, perMinute);
      expect429(await one(key), 'burst', Math.ceil(60 / perMinute));
      clock.advance(MINUTE / 2);
      await spend(key, plan, Math.floor(perMinute / 2));
      expect((await one(key)).statusCode).toBe(429);
    });

    it(`${plan}: accepts ${daily.toLocaleString('en-US')} a day, then refuses until 00:00 UTC`, async () => {
      clock.set(Date.UTC(2030, 0, 5, 0, 10));
      const key = await server.key(plan);
      await spend(key, plan, daily, MINUTE / perMinute);
      clock.advance(MINUTE);
      const refused = await one(key);
      const midnight = Date.UTC(2030, 0, 6);
      expect429(refused, 'daily', Math.ceil((midnight - clock.now()) / 1000));
      expect(refused.headers['x-ratelimit-remaining']).toBe('0');
      expect(refused.headers['x-ratelimit-reset']).toBe(String(midnight / 1000));
      clock.set(midnight - 1);
      expect((await one(key)).statusCode).toBe(429);
      clock.set(midnight);
      const next = await one(key);
      expect(next.statusCode).toBe(200);
      expect(next.headers['x-ratelimit-remaining']).toBe(String(daily - 1));
      expect(next.headers['x-ratelimit-reset']).toBe(String(Date.UTC(2030, 0, 7) / 1000));
    });
  }

  it('counts the free tier per address, and per /64 for IPv6', async () => {
    clock.set(Date.UTC(2030, 0, 8, 10));
    const from = (remoteAddress: string) => server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8', remoteAddress });
    for (let i = 0; i < 20; i++) expect((await from(`2001:db8:1:2::${i + 1}`)).statusCode).toBe(200);
    expect((await from('2001:db8:1:2:ffff::1')).statusCode).toBe(429);
    expect((await from('2001:db8:1:3::1')).statusCode).toBe(200);
    expect((await from('192.0.2.77')).statusCode).toBe(200);
  });

  it('gives an enterprise key its own limits when it has them', async () => {
    clock.set(Date.UTC(2030, 0, 9, 10));
    const key = await server.key('enterprise', { daily: 150, perMinute: 1, burst: 120, batch: 10 });
    const bulk = await server.app.inject({ method: 'POST', url: '/api/bulk', headers: { 'x-api-key': key }, payload: { ips: Array(100).fill('8.8.8.8') } });
    expect(bulk.statusCode).toBe(200);
    for (let i = 0; i < 20; i++) expect((await one(key)).statusCode).toBe(200);
    const refused = await one(key);
    expect429(refused, 'burst', 60);
    expect(refused.headers['x-ratelimit-limit']).toBe('150');
    expect(refused.headers['x-ratelimit-burst-limit']).toBe('120');
  });
});

describe('exactly the allowance under 200 concurrent requests (real sockets)', () => {
  it('accepts exactly the burst of the free tier, and exactly a daily allowance, and refuses the rest with 429', async () => {
    const plans = {
      anonymous: 'free',
      bulkMax: 100,
      plans: {
        free: { daily: 1000, perMinute: 10, burst: 20, batch: 10, features: [] },
        tight: { daily: 30, perMinute: 6000, burst: 100, batch: 10, features: [] },
      },
    };
    const server = await startTestServer({ plans });
    try {
      const url = await server.app.listen({ host: '127.0.0.1', port: 0 });
      const key = await server.key('tight');
      const fire = (headers: Record<string, string>) =>
        Promise.all(Array.from({ length: 200 }, () => fetch(`${url}/api/ipinfo?ip=8.8.8.8`, { headers }).then(async (response) => {
          await response.arrayBuffer();
          return response.status;
        })));
      const anonymous = await fire({});
      expect(anonymous.filter((status) => status === 200)).toHaveLength(20);
      expect(anonymous.filter((status) => status === 429)).toHaveLength(180);
      const keyed = await fire({ 'x-api-key': key });
      expect(keyed.filter((status) => status === 200)).toHaveLength(30);
      expect(keyed.filter((status) => status === 429)).toHaveLength(170);
    } finally {
      await server.close();
    }
  });
});
