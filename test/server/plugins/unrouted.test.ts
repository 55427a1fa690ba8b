/**
 * The unrouted plugin (src/server/plugins/unrouted.ts): 404 for an unknown
 * path, 405 with Allow for a known path asked with another method, 204
 * with Allow for OPTIONS, CONNECT answered on its bare socket; on a bare
 * fastify instance, then through the whole server.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rateLimit } from '../../../src/server/plugins/rate-limit.js';
import { unrouted } from '../../../src/server/plugins/unrouted.js';
import { listenOnLoopback, startTestServer, type TestServer } from '../harness.js';
import { parse, raw } from '../raw-http.js';
import { pluginServer, type PluginServer } from './plugin-server.js';

describe('the unrouted plugin', () => {
  let server: PluginServer;
  let port: number;
  let reached = 0;

  beforeAll(async () => {
    server = pluginServer();
    const { app, callers } = server;
    void app.register(unrouted, { callers });
    void app.register(rateLimit, { limits: server.limits, now: server.now });
    void app.register(async (routes: FastifyInstance) => {
      routes.get('/a', async () => ({ a: true }));
      routes.post('/a', async () => ({ a: true }));
      routes.post('/b', async () => {
        reached++;
        return { b: true };
      });
    });
    // A context of its own, as the account pages are: its paths are known too.
    void app.register(async (pages: FastifyInstance) => {
      pages.get('/page', async () => 'page');
    });
    ({ port } = await listenOnLoopback(app));
  });
  afterAll(() => server.app.close());

  it('answers an unknown path 404 not_found, pointing at the docs', async () => {
    const response = await server.app.inject({ url: '/nowhere?x=1' });
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(JSON.parse(response.body)).toMatchObject({
      status: 404,
      code: 'not_found',
      detail: 'no endpoint GET /nowhere; the API is described at /docs and /openapi.json',
      instance: '/nowhere',
    });
  });

  it('answers a known path asked with another method 405 with Allow, HEAD counted with GET and OPTIONS always', async () => {
    const response = await server.app.inject({ method: 'DELETE', url: '/a' });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD, OPTIONS, POST');
    expect(JSON.parse(response.body)).toMatchObject({ status: 405, code: 'usage', detail: '/a does not answer DELETE; it answers GET, HEAD, OPTIONS, POST', details: { allow: ['GET', 'HEAD', 'OPTIONS', 'POST'] } });
    expect((await server.app.inject({ method: 'GET', url: '/b' })).headers.allow).toBe('OPTIONS, POST');
    expect((await server.app.inject({ method: 'POST', url: '/page' })).headers.allow).toBe('GET, HEAD, OPTIONS');
  });

  it('answers OPTIONS 204 with Allow, and OPTIONS * with every method of the server', async () => {
    const options = await server.app.inject({ method: 'OPTIONS', url: '/b' });
    expect(options.statusCode).toBe(204);
    expect(options.headers.allow).toBe('OPTIONS, POST');
    expect(options.body).toBe('');
    const star = parse((await raw(port, 'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).text);
    expect(star.status).toBe(204);
    expect(star.headers.allow).toBe('GET, HEAD, OPTIONS, POST');
  });

  it('decides before the body is read: a body no route reads cannot turn a 404 or 405 into 415', async () => {
    for (const url of ['/nowhere', '/a']) {
      const response = await server.app.inject({ method: 'PUT', url, headers: { 'content-type': 'application/xml' }, payload: '<x/>' });
      expect(response.statusCode, url).toBe(url === '/a' ? 405 : 404);
    }
    expect(reached).toBe(0);
  });

  it('answers CONNECT on its bare socket: 405 with Allow on a known path, else 404, with the caller\'s X-RateLimit-*', async () => {
    const known = parse((await raw(port, 'CONNECT /a HTTP/1.1\r\nHost: x\r\n\r\n')).text);
    expect(known.status).toBe(405);
    expect(known.headers.allow).toBe('GET, HEAD, OPTIONS, POST');
    expect(known.headers.connection).toBe('close');
    expect(known.headers['x-ratelimit-limit']).toBe('1000');
    expect(JSON.parse(known.body)).toMatchObject({ code: 'usage', detail: '/a does not answer CONNECT; it answers GET, HEAD, OPTIONS, POST', instance: '/a' });
    const unknown = parse((await raw(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n')).text);
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body)).toMatchObject({ code: 'not_found', detail: 'no endpoint CONNECT example.com:443; the API is described at /docs and /openapi.json' });
  });
});

describe('methods through the whole server', () => {
  let server: TestServer;
  let port: number;
  let base: string;

  beforeAll(async () => {
    server = await startTestServer();
    ({ port, base } = await listenOnLoopback(server.app));
  });
  afterAll(() => server.close());

  it('answers a known path asked with another method 405 with Allow; HEAD like GET; OPTIONS 204 with Allow', async () => {
    const post = await fetch(`${base}/api/ipinfo`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect(post.headers.get('x-ratelimit-limit')).not.toBeNull();
    expect(await post.json()).toMatchObject({ status: 405, code: 'usage' });
    const get = await fetch(`${base}/api/bulk`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('OPTIONS, POST');
    const del = await fetch(`${base}/healthz`, { method: 'DELETE' });
    expect(del.status).toBe(405);
    const head = await fetch(`${base}/api/ipinfo?ip=8.8.8.8`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('x-ratelimit-limit')).not.toBeNull();
    const options = await fetch(`${base}/api/ipinfo`, { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect(options.headers.get('x-ratelimit-limit')).not.toBeNull();
    const star = parse((await raw(port, 'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).text);
    expect(star.status).toBe(204);
    expect(star.headers.allow).toBe('GET, HEAD, OPTIONS, POST');
    const unknown = await fetch(`${base}/api/nothing`, { method: 'POST' });
    expect(unknown.status).toBe(404);
  });
});
