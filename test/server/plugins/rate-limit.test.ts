/**
 * The rate-limit plugin (src/server/plugins/rate-limit.ts): X-RateLimit-*
 * on every answer, and an API route's charge (batch size, burst bucket and
 * day, a key's usage); on a bare fastify instance, then through the whole
 * server.
 */
import type { FastifyReply, FastifyRequest, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ApiRoute } from '../../../src/server/api-route.js';
import type { LimitStore } from '../../../src/server/limits/limit-store.js';
import { createMemoryLimitStore } from '../../../src/server/limits/memory-limit-store.js';
import { identifyCaller } from '../../../src/server/plugins/identify-caller.js';
import { problemErrors } from '../../../src/server/plugins/problem-errors.js';
import { chargeRequest, rateLimit } from '../../../src/server/plugins/rate-limit.js';
import type { UsageRecorder } from '../../../src/server/usage-recorder.js';
import { keyStoreAt } from '../../support/stores.js';
import { startTestServer, type TestServer } from '../harness.js';
import { pluginServer } from './plugin-server.js';

function expectLimitHeaders(response: LightMyRequestResponse): void {
  for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-burst-limit', 'x-ratelimit-burst-remaining']) {
    expect(response.headers[header], `${header} on ${response.statusCode}`).toMatch(/^\d+$/);
  }
}

/** A bare server with identify-caller, problem-errors and rate-limit, and routes charged by chargeRequest. */
async function limitedServer(limits: LimitStore = createMemoryLimitStore()) {
  const keys = await keyStoreAt(':memory:');
  const counted: Array<[string, number]> = [];
  const usage = { count: (keyId: string, items: number) => counted.push([keyId, items]) } as unknown as UsageRecorder;
  const server = pluginServer({ limits });
  const { app, callers, plans, now } = server;
  void app.register(problemErrors, { callers, bodyLimit: 64 * 1024, handlerTimeoutMs: 1000 });
  void app.register(identifyCaller, { callers, keys, plans });
  void app.register(rateLimit, { limits, now });
  let handled = 0;
  const charged = (route: Partial<ApiRoute>) => ({
    config: { api: true },
    preHandler: (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => chargeRequest(route as ApiRoute, request, reply, { limits, now, usage }, done),
  });
  app.get('/free', async () => ({ ok: true }));
  app.get('/charged', charged({}), async () => {
    handled++;
    return { ok: true };
  });
  app.post('/batch', charged({ batched: true, items: (request) => (request.body as string[]).length }), async () => {
    handled++;
    return { ok: true };
  });
  await app.ready();
  return { ...server, keys, counted, handled: () => handled, close: async () => (await app.close(), await keys.close()) };
}

describe('the rate-limit plugin', () => {
  let server: Awaited<ReturnType<typeof limitedServer>>;

  beforeEach(async () => {
    server = await limitedServer();
    return () => server.close();
  });

  it('puts the caller\'s X-RateLimit-* on an answer that charged nothing, from a look that takes nothing', async () => {
    const first = await server.app.inject({ url: '/free' });
    const second = await server.app.inject({ url: '/free' });
    for (const response of [first, second]) {
      expect(response.headers).toMatchObject({ 'x-ratelimit-limit': '1000', 'x-ratelimit-remaining': '1000', 'x-ratelimit-burst-limit': '20', 'x-ratelimit-burst-remaining': '20' });
      expect(response.headers['x-ratelimit-reset']).toBe(String(Date.UTC(2030, 0, 2) / 1000));
    }
    expect((await server.app.inject({ url: '/nowhere' })).headers['x-ratelimit-remaining']).toBe('1000');
  });

  it('charges a route\'s items before its handler, and answers with the state the charge left', async () => {
    const charged = await server.app.inject({ url: '/charged' });
    expect(charged.statusCode).toBe(200);
    expect(charged.headers).toMatchObject({ 'x-ratelimit-remaining': '999', 'x-ratelimit-burst-remaining': '19' });
    const batch = await server.app.inject({ method: 'POST', url: '/batch', payload: ['a', 'b', 'c'] });
    expect(batch.headers).toMatchObject({ 'x-ratelimit-remaining': '996', 'x-ratelimit-burst-remaining': '16' });
    expect((await server.app.inject({ url: '/free' })).headers['x-ratelimit-remaining']).toBe('996');
  });

  it('refuses a request over the burst 429 with Retry-After and the limit\'s details, and does not run its handler', async () => {
    for (let i = 0; i < 20; i++) expect((await server.app.inject({ url: '/charged' })).statusCode).toBe(200);
    const refused = await server.app.inject({ url: '/charged' });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers).toMatchObject({ 'retry-after': '6', 'x-ratelimit-retryafter': '6', 'x-ratelimit-burst-remaining': '0' });
    expect(JSON.parse(refused.body)).toMatchObject({
      code: 'rate_limited',
      detail: 'rate limit exceeded: the burst allowance of 20 is used up (it refills at 10 a minute); retry in 6 s',
      details: { limit: 'burst', plan: 'free', retry_after_seconds: 6, daily_limit: 1000, daily_remaining: 980, burst_limit: 20, burst_remaining: 0 },
    });
    expect(server.handled()).toBe(20);
  });

  it('refuses a batch over the plan\'s size 403 before charging anything', async () => {
    const refused = await server.app.inject({ method: 'POST', url: '/batch', payload: Array.from({ length: 11 }, (_, i) => String(i)) });
    expect(refused.statusCode).toBe(403);
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'forbidden', details: { plan: 'free', batch: 10, items: 11 } });
    expect(refused.headers['x-ratelimit-remaining']).toBe('1000');
    expect(server.handled()).toBe(0);
  });

  it('counts a key\'s accepted items as its usage, and nothing for a refused request or one without a key', async () => {
    const created = await server.keys.create({ plan: 'free-account', label: 't', limits: null });
    const headers = { 'x-api-key': created.key };
    await server.app.inject({ method: 'POST', url: '/batch', payload: ['a', 'b'], headers });
    await server.app.inject({ method: 'POST', url: '/batch', payload: Array.from({ length: 11 }, (_, i) => String(i)), headers });
    await server.app.inject({ url: '/charged' });
    await server.app.inject({ url: '/free', headers });
    expect(server.counted).toEqual([[created.record.id, 2]]);
  });

  it('answers without the headers when the limit store cannot look, at once or later', async () => {
    for (const peek of [() => { throw new Error('down'); }, () => Promise.reject(new Error('down'))]) {
      const failing = { ...createMemoryLimitStore(), peek } as LimitStore;
      const own = await limitedServer(failing);
      try {
        const response = await own.app.inject({ url: '/free' });
        expect(response.statusCode).toBe(200);
        expect(response.headers['x-ratelimit-limit']).toBeUndefined();
      } finally {
        await own.close();
      }
    }
  });
});

describe('X-RateLimit-* through the whole server', () => {
  let server: TestServer;
  let pro: string;
  let starter: string;

  beforeAll(async () => {
    server = await startTestServer();
    pro = await server.key('pro');
    starter = await server.key('starter');
  });
  afterAll(() => server.close());

  it('sends X-RateLimit-* on successes, errors, 404s, docs and health', async () => {
    const responses = [
      await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8' }),
      await server.app.inject({ url: '/api/ipinfo?ip=bad' }),
      await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8', headers: { 'x-api-key': 'bad' } }),
      await server.app.inject({ method: 'POST', url: '/api/bulk', payload: { ips: ['8.8.8.8'] } }),
      await server.app.inject({ method: 'POST', url: '/api/bulk', payload: { ips: ['8.8.8.8'] }, headers: { 'x-api-key': starter } }),
      await server.app.inject({ url: '/no/such/path' }),
      await server.app.inject({ url: '/api/dns-lookup' }),
      await server.app.inject({ url: '/healthz' }),
      await server.app.inject({ url: '/openapi.json' }),
      await server.app.inject({ url: '/docs' }),
      await server.app.inject({ url: '/api/quota', headers: { 'x-api-key': pro } }),
    ];
    expect(responses.map((response) => response.statusCode)).toEqual([200, 400, 401, 401, 403, 404, 400, 200, 200, 200, 200]);
    responses.forEach(expectLimitHeaders);
    expect(responses[0]!.headers['x-ratelimit-reset']).toBe(String(Date.UTC(2030, 0, 2) / 1000));
  });
});
