/**
 * The identify-caller plugin (src/server/plugins/identify-caller.ts): who
 * is calling and with which plan, from the X-API-Key header; a bad key
 * refused 401 on the API and ignored off it; on a bare fastify instance,
 * then through the whole server.
 */
import http from 'node:http';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identifyCaller } from '../../../src/server/plugins/identify-caller.js';
import { problemErrors } from '../../../src/server/plugins/problem-errors.js';
import type { ApiKeyRecord, KeyCheck, KeyStore } from '../../../src/store/key-store.js';
import { keyStoreAt } from '../../support/stores.js';
import { expectProblemAnswer, startTestServer, type TestServer } from '../harness.js';
import { pluginServer, type PluginServer } from './plugin-server.js';

function json(response: LightMyRequestResponse): any {
  return JSON.parse(response.body);
}


function record(id: string, plan: string): ApiKeyRecord {
  return { kind: 'api-key', id, plan, label: null, limits: null, created_at: '2030-01-01T00:00:00.000Z', revoked_at: null, last_used_at: null };
}

describe('the identify-caller plugin', () => {
  let server: PluginServer;
  const checked: string[] = [];
  /** Keys by their text: `good` is a pro key, `gone` one of a plan the plans file no longer has, `down` a database that does not answer. */
  const keys = {
    check: async (key: string): Promise<KeyCheck> => {
      checked.push(key);
      if (key === 'good') return { ok: true, record: record('goodgoodgood', 'pro'), accountId: null };
      if (key === 'gone') return { ok: true, record: record('gonegonegone', 'retired'), accountId: null };
      if (key === 'down') throw new Error('connect ECONNREFUSED 10.0.0.5:5432');
      return { ok: false, reason: 'unknown', id: null };
    },
  } as unknown as KeyStore;

  beforeAll(async () => {
    server = pluginServer({ trustProxy: ['loopback'] });
    const { app, callers, plans } = server;
    void app.register(problemErrors, { callers, bodyLimit: 1024, handlerTimeoutMs: 1000 });
    void app.register(identifyCaller, { callers, keys, plans });
    const who = async (request: { netintel: { client: string; plan: { name: string }; subject: string; keyId: string | null } }) => {
      const { client, plan, subject, keyId } = request.netintel;
      return { client, plan: plan.name, subject, keyId };
    };
    app.get('/api/who', { config: { api: true } }, who);
    app.get('/who', who);
    await app.ready();
  });
  afterAll(() => server.app.close());

  it('takes a caller without a key for the anonymous plan, counted by its address (behind a trusted proxy, the forwarded one)', async () => {
    expect(json(await server.app.inject({ url: '/api/who', remoteAddress: '203.0.113.7' }))).toEqual({ client: '203.0.113.7', plan: 'free', subject: 'ip:203.0.113.7', keyId: null });
    const forwarded = await server.app.inject({ url: '/api/who', headers: { 'x-forwarded-for': '198.51.100.9' } });
    expect(json(forwarded)).toMatchObject({ client: '198.51.100.9', subject: 'ip:198.51.100.9' });
  });

  it('takes a caller with a key for the key\'s plan, counted by the key, and asks the key store every time', async () => {
    checked.length = 0;
    for (let i = 0; i < 2; i++) {
      expect(json(await server.app.inject({ url: '/api/who', headers: { 'x-api-key': ' good ' }, remoteAddress: '203.0.113.7' }))).toEqual({
        client: '203.0.113.7',
        plan: 'pro',
        subject: 'key:goodgoodgood',
        keyId: 'goodgoodgood',
      });
    }
    expect(checked).toEqual(['good', 'good']);
  });

  it('refuses a bad key on the API with 401, WWW-Authenticate and the reason, and ignores it off the API', async () => {
    const refused = await server.app.inject({ url: '/api/who', headers: { 'x-api-key': 'nope' } });
    expect(expectProblemAnswer(refused, 401, 'unauthorized').details).toEqual({ reason: 'unknown' });
    expect(refused.headers['www-authenticate']).toBe('ApiKey realm="netintel", header="X-API-Key"');
    const off = await server.app.inject({ url: '/who', headers: { 'x-api-key': 'nope' } });
    expect(json(off)).toMatchObject({ plan: 'free', keyId: null });
  });

  it('refuses a key whose plan cannot be served 403', async () => {
    const response = await server.app.inject({ url: '/api/who', headers: { 'x-api-key': 'gone' } });
    expect(expectProblemAnswer(response, 403, 'forbidden').details).toEqual({ key_id: 'gonegonegone' });
  });

  it('answers 503 when the key store cannot answer, naming no host of its own, and logs why', async () => {
    server.logs.length = 0;
    const response = await server.app.inject({ url: '/who', headers: { 'x-api-key': 'down' } });
    expect(expectProblemAnswer(response, 503, 'data_unavailable').detail).toBe('the API key could not be checked: the key database is unavailable; retry later');
    expect(response.body).not.toContain('10.0.0.5');
    expect(server.logs.filter((line) => line.msg === 'the API key could not be checked')).toEqual([expect.objectContaining({ level: 50 })]);
  });
});

describe('keys through the whole server', () => {
  let server: TestServer;
  let base: string;

  beforeAll(async () => {
    server = await startTestServer();
    base = `http://127.0.0.1:${(await server.app.listen({ host: '127.0.0.1', port: 0 })).split(':').pop()}`;
  });
  afterAll(() => server.close());

  it('refuses a malformed, an unknown and a revoked key with 401 and a reason', async () => {
    const malformed = expectProblemAnswer(await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8', headers: { 'x-api-key': 'secret' } }), 401, 'unauthorized');
    expect(malformed.details).toEqual({ reason: 'malformed' });
    const unknown = expectProblemAnswer(
      await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8', headers: { 'x-api-key': `ni_aaaaaaaaaaaa_${'A'.repeat(43)}` } }),
      401,
      'unauthorized',
    );
    expect(unknown.details).toEqual({ reason: 'unknown', key_id: 'aaaaaaaaaaaa' });
    const key = await server.key('pro');
    const id = key.slice(3, 15);
    // The right id with a wrong secret is unknown too.
    const forged = expectProblemAnswer(
      await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8', headers: { 'x-api-key': `${key.slice(0, 16)}${key[16] === 'A' ? 'B' : 'A'}${key.slice(17)}` } }),
      401,
      'unauthorized',
    );
    expect(forged.details).toEqual({ reason: 'unknown', key_id: id });
    await server.keys.revoke(id);
    const revoked = await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8', headers: { 'x-api-key': key } });
    expect(expectProblemAnswer(revoked, 401, 'unauthorized').details).toEqual({ reason: 'revoked', key_id: id });
    expect(revoked.headers['www-authenticate']).toMatch(/X-API-Key/);
  });

  it('checks the key of every request on a kept-alive connection, so that a revoked key is refused on its next request', async () => {
    const store = await keyStoreAt(':memory:');
    let checks = 0;
    const keys: KeyStore = {
      ...store,
      check: (key) => {
        checks++;
        return store.check(key);
      },
    };
    const own = await startTestServer({ keys });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const url = await own.app.listen({ host: '127.0.0.1', port: 0 });
      const ports = new Set<number>();
      const get = (key: string) =>
        new Promise<number>((resolve, reject) => {
          http
            .get(`${url}/api/ipinfo?ip=8.8.8.8`, { agent, headers: { 'x-api-key': key } }, (response) => {
              ports.add(response.socket.localPort!);
              response.resume();
              response.on('end', () => resolve(response.statusCode!));
            })
            .on('error', reject);
        });
      const first = await own.key('pro');
      const second = await own.key('pro');
      const forged = `${first.slice(0, -1)}${first.endsWith('A') ? 'B' : 'A'}`;

      expect([await get(first), await get(first), await get(first)]).toEqual([200, 200, 200]);
      expect(checks).toBe(3);
      expect([await get(second), await get(first)]).toEqual([200, 200]);
      // A key one character off an accepted one is refused.
      expect([await get(forged), await get(first)]).toEqual([401, 200]);
      expect(checks).toBe(7);
      await own.keys.revoke(first.slice(3, 15));
      expect(await get(first)).toBe(401);
      expect(await get(second)).toBe(200);
      expect(ports.size).toBe(1);
    } finally {
      agent.destroy();
      await own.close();
    }
  });

  it('ignores a bad key off the API (health, docs)', async () => {
    const response = await server.app.inject({ url: '/healthz', headers: { 'x-api-key': 'junk' } });
    expect(response.statusCode).toBe(200);
  });

  it('answers 401 with WWW-Authenticate when a key-only endpoint is asked without a key, and for a bad key', async () => {
    for (const headers of [{}, { 'x-api-key': 'junk' }] as Array<Record<string, string>>) {
      const response = await fetch(`${base}/api/vpn-check?ip=8.8.8.8`, { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('ApiKey realm="netintel", header="X-API-Key"');
      expect((await response.json()).code).toBe('unauthorized');
    }
    const bulk = await fetch(`${base}/api/bulk`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"ips":["8.8.8.8"]}' });
    expect(bulk.status).toBe(401);
    expect(bulk.headers.get('www-authenticate')).toMatch(/^ApiKey /);
  });
});
