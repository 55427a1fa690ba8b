/**
 * The problem-errors plugin (src/server/plugins/problem-errors.ts): every
 * error as RFC 9457 problem+json with a `code`, those of routes and hooks
 * and those raised before any route (Node's parser, the URL, a missing
 * Host, an unmet Expect, a body that is not JSON); on a bare fastify
 * instance, then through the whole server.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES, NetintelError } from '../../../src/errors.js';
import { preRoutingErrors, problemErrors } from '../../../src/server/plugins/problem-errors.js';
import { listenOnLoopback, startTestServer, type TestServer } from '../harness.js';
import { expectProblem, parse, raw } from '../raw-http.js';
import { pluginServer, type PluginServer } from './plugin-server.js';

describe('the problem-errors plugin', () => {
  let server: PluginServer;
  let port: number;

  beforeAll(async () => {
    server = pluginServer({
      fastify: (callers) => ({ bodyLimit: 100, http: { requireHostHeader: false }, ...preRoutingErrors({ callers, headersTimeoutMs: 600, requestTimeoutMs: 1200 }) }),
    });
    const { app } = server;
    void app.register(problemErrors, { callers: server.callers, bodyLimit: 100, handlerTimeoutMs: 50 });
    app.get('/not-found', async () => {
      throw new NetintelError('not_found', 'no such thing', { details: { thing: 'x' } });
    });
    app.get('/unauthorized', async () => {
      throw new NetintelError('unauthorized', 'a key is needed');
    });
    app.get('/pending', async () => {
      throw new NetintelError('not_implemented', 'not yet');
    });
    app.get('/bug', async () => {
      throw new Error('a bug with a secret in it');
    });
    app.get('/validated', { schema: { querystring: { type: 'object', properties: { n: { type: 'integer' } } } } }, async () => ({ ok: true }));
    app.post('/body', async () => ({ ok: true }));
    app.get('/slow', { handlerTimeout: 50 }, () => new Promise(() => {}));
    ({ port } = await listenOnLoopback(app));
  });
  afterAll(() => server.app.close());
  afterEach(() => {
    server.logs.length = 0;
  });

  it('answers a NetintelError with the status of its code, its details and the path as instance', async () => {
    const response = await server.app.inject({ url: '/not-found?q=1' });
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(JSON.parse(response.body)).toEqual({
      type: '/docs#problem-not_found',
      title: expect.any(String),
      status: 404,
      detail: 'no such thing',
      code: 'not_found',
      instance: '/not-found',
      details: { thing: 'x' },
    });
  });

  it('says how to authenticate on a 401 (WWW-Authenticate)', async () => {
    const response = await server.app.inject({ url: '/unauthorized' });
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe('ApiKey realm="netintel", header="X-API-Key"');
  });

  it('answers a bug 500 internal without its message, and logs it with the path; a 501 is not logged', async () => {
    const bug = await server.app.inject({ url: '/bug' });
    expect(bug.statusCode).toBe(500);
    expect(JSON.parse(bug.body)).toMatchObject({ code: 'internal', detail: 'internal error: the server failed to answer; it has been logged' });
    expect(bug.body).not.toContain('secret');
    expect(server.logs.filter((line) => line.msg === 'request failed')).toEqual([expect.objectContaining({ level: 50, path: '/bug' })]);
    server.logs.length = 0;
    expect((await server.app.inject({ url: '/pending' })).statusCode).toBe(501);
    expect(server.logs.filter((line) => line.msg === 'request failed')).toEqual([]);
  });

  it('answers invalid input 400 usage naming where it was', async () => {
    const response = await server.app.inject({ url: '/validated?n=x' });
    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({ code: 'usage', details: { context: 'querystring' } });
  });

  it('answers a body over the limit 413, a body not JSON 415 (text/plain included), malformed JSON 400', async () => {
    const big = await server.app.inject({ method: 'POST', url: '/body', headers: { 'content-type': 'application/json' }, payload: `[${'1,'.repeat(100)}1]` });
    expect(big.statusCode).toBe(413);
    expect(JSON.parse(big.body)).toMatchObject({ code: 'usage', detail: 'the request body is larger than 100 bytes', details: { limit_bytes: 100 } });
    const text = await server.app.inject({ method: 'POST', url: '/body', headers: { 'content-type': 'text/plain' }, payload: 'hello' });
    expect(text.statusCode).toBe(415);
    expect(JSON.parse(text.body)).toMatchObject({ code: 'usage', detail: 'the request body must be application/json' });
    const malformed = await server.app.inject({ method: 'POST', url: '/body', headers: { 'content-type': 'application/json' }, payload: '{' });
    expect(malformed.statusCode).toBe(400);
    expect(JSON.parse(malformed.body)).toMatchObject({ code: 'usage' });
  });

  it('answers a handler past its deadline 504 timeout', async () => {
    const response = await server.app.inject({ url: '/slow' });
    expect(response.statusCode).toBe(504);
    expect(JSON.parse(response.body)).toMatchObject({ code: 'timeout', details: { timeout_ms: 50 } });
  });

  it('answers what Node\'s parser refuses (431, 400), a HEAD without a body, with the caller\'s X-RateLimit-*', async () => {
    const big = parse((await raw(port, `GET /x HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)).text);
    expect(expectProblem(big, 431).details).toEqual({ parser_code: 'HPE_HEADER_OVERFLOW' });
    const head = parse((await raw(port, `HEAD /x HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)).text);
    expect(head.status).toBe(431);
    expect(head.body).toBe('');
    expect(expectProblem(parse((await raw(port, 'FROB /x HTTP/1.1\r\nHost: x\r\n\r\n')).text), 400).detail).toBe('the request method is not one HTTP knows');
  });

  it('answers an HTTP/1.1 request without Host 400, closing the connection, and an Expect other than 100-continue 417', async () => {
    // Its X-RateLimit-* come from the rate-limit plugin, not registered here.
    const host = parse((await raw(port, 'GET /not-found HTTP/1.1\r\n\r\n')).text);
    expect(host.status).toBe(400);
    expect(host.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(JSON.parse(host.body)).toMatchObject({ status: 400, code: 'usage', detail: 'an HTTP/1.1 request needs a Host header', instance: '/not-found' });
    expect(host.headers.connection).toBe('close');
    const expectation = parse((await raw(port, 'POST /body HTTP/1.1\r\nHost: x\r\nExpect: banana\r\nContent-Length: 2\r\n\r\n{}')).text);
    expect(expectProblem(expectation, 417)).toMatchObject({ instance: '/body', detail: 'the expectation "banana" cannot be met; only 100-continue is' });
  });

  it('answers a URL that cannot be decoded 400, with the caller\'s X-RateLimit-*', async () => {
    const response = parse((await raw(port, 'GET /%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).text);
    expect(expectProblem(response, 400)).toMatchObject({ code: 'usage', instance: '/%zz' });
  });
});

describe('problem+json through the whole server', () => {
  let server: TestServer;
  let port: number;
  let base: string;

  beforeAll(async () => {
    server = await startTestServer();
    ({ port, base } = await listenOnLoopback(server.app));
  });
  afterAll(() => server.close());

  it('answers headers too large with 431 problem+json and the rate-limit headers', async () => {
    const result = await raw(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expectProblem(parse(result.text), 431);
  });

  it('answers an unknown method and a malformed request line with 400 problem+json', async () => {
    const method = await raw(port, 'FROB /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(expectProblem(parse(method.text), 400).detail).toMatch(/method/);
    const line = await raw(port, 'GET /healthz HTTQ/1.1\r\nHost: x\r\n\r\n');
    expectProblem(parse(line.text), 400);
    const garbage = await raw(port, '\x00\x01\x02\r\n\r\n');
    expectProblem(parse(garbage.text), 400);
  });

  it('answers an HTTP/1.1 request without Host 400 and an unmet Expect 417, both problem+json', async () => {
    const host = await raw(port, 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(expectProblem(parse(host.text), 400).detail).toMatch(/Host/);
    const http10 = await raw(port, 'GET /healthz HTTP/1.0\r\n\r\n');
    expect(parse(http10.text).status).toBe(200);
    const expectation = await raw(port, 'POST /api/bulk HTTP/1.1\r\nHost: x\r\nExpect: banana\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}');
    expectProblem(parse(expectation.text), 417);
  });

  it('answers a URL fastify cannot decode with 400 problem+json', async () => {
    const result = await raw(port, 'GET /api/%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expectProblem(parse(result.text), 400);
  });

  it('answers 415 to a text/plain or other non-JSON body', async () => {
    const key = await server.key('pro');
    for (const type of ['text/plain', 'text/plain; charset=utf-8', 'application/x-www-form-urlencoded', 'application/xml']) {
      for (const url of ['/api/bulk', '/api/email-tests/bulk']) {
        const response = await fetch(`${base}${url}`, { method: 'POST', headers: { 'content-type': type, 'x-api-key': key }, body: '8.8.8.8' });
        expect(response.status, `${url} ${type}`).toBe(415);
        expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(response.headers.get('x-ratelimit-limit')).not.toBeNull();
      }
    }
  });

  it('maps every error status to the code table of src/errors.ts', async () => {
    const problems = [
      await server.app.inject({ url: '/api/ipinfo?ip=bad' }),
      await server.app.inject({ url: '/api/vpn-check?ip=8.8.8.8' }),
      await server.app.inject({ url: '/nope' }),
    ];
    for (const response of problems) {
      const body = JSON.parse(response.body);
      expect(ERROR_CODES[body.code as keyof typeof ERROR_CODES].http).toBe(response.statusCode);
    }
  });
});
