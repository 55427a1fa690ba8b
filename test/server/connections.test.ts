/**
 * Connection deadlines and the connection cap (docs/api.md, Safety), and
 * the answers given before routing (docs/api.md, Keys and the free tier),
 * against a real server on 127.0.0.1:0 with raw sockets.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONNECTION_DEFAULTS } from '../../src/server/build-server.js';
import { startTestServer, type TestServer } from './harness.js';

interface RawResult {
  /** Everything the server sent. */
  text: string;
  /** ms from the connection to its end. */
  ms: number;
  /** How it ended: the server closed it, or reset it. */
  ended: 'end' | 'reset';
}

function openSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Sends `data` on a new connection and collects what comes back until the server ends it. */
async function raw(port: number, data: string | Buffer): Promise<RawResult> {
  const socket = await openSocket(port);
  return collect(socket, data);
}

function collect(socket: Socket, data?: string | Buffer): Promise<RawResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    socket.removeAllListeners('error');
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('error', () => resolve({ text: Buffer.concat(chunks).toString('latin1'), ms: performance.now() - started, ended: 'reset' }));
    socket.once('close', () => resolve({ text: Buffer.concat(chunks).toString('latin1'), ms: performance.now() - started, ended: 'end' }));
    if (data !== undefined) socket.write(data);
  });
}

interface Parsed {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function parse(text: string): Parsed {
  const [head, ...rest] = text.split('\r\n\r\n');
  const [statusLine, ...lines] = head!.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine!.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
}

function expectProblem(response: Parsed, status: number): Record<string, unknown> {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(response.headers[name], name).toMatch(/^\d+$/);
  const body = JSON.parse(response.body) as Record<string, unknown>;
  expect(body).toMatchObject({ status, type: expect.any(String), title: expect.any(String), detail: expect.any(String), code: expect.any(String) });
  return body;
}

async function listen(server: TestServer): Promise<number> {
  await server.app.listen({ host: '127.0.0.1', port: 0 });
  return (server.app.server.address() as { port: number }).port;
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('connection deadlines and cap', () => {
  let server: TestServer;
  let port: number;
  const headersTimeoutMs = 600;
  const requestTimeoutMs = 1200;

  beforeAll(async () => {
    server = await startTestServer({ headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs: 500, maxConnections: 20 });
    port = await listen(server);
  });
  afterAll(() => server.close());

  it('uses defaults of 10 s for headers, 15 s for a whole request, 5 s keep-alive, 1024 connections', async () => {
    const defaults = await startTestServer();
    try {
      expect(CONNECTION_DEFAULTS).toEqual({ headersTimeoutMs: 10_000, requestTimeoutMs: 15_000, keepAliveTimeoutMs: 5_000, maxConnections: 1024 });
      expect(defaults.app.server.headersTimeout).toBe(10_000);
      expect(defaults.app.server.requestTimeout).toBe(15_000);
      expect(defaults.app.server.keepAliveTimeout).toBe(5_000);
      expect(defaults.app.server.maxConnections).toBe(1024);
    } finally {
      await defaults.close();
    }
  });

  it('drops slowloris connections sending partial headers at the headers deadline with 408, while a normal request succeeds', async () => {
    const sockets = await Promise.all(Array.from({ length: 10 }, () => openSocket(port)));
    const results = sockets.map((socket) => collect(socket, 'GET /api/ipinfo?ip=8.8.8.8 HTTP/1.1\r\nHost: x\r\n'));
    // Keeps them trickling: a byte of a header every 100 ms resets no deadline.
    const trickle = setInterval(() => sockets.forEach((socket) => socket.writable && socket.write('X')), 100);
    try {
      await settle(150);
      const normal = await fetch(`http://127.0.0.1:${port}/api/ipinfo?ip=8.8.8.8`);
      expect(normal.status).toBe(200);
      const dropped = await Promise.all(results);
      for (const result of dropped) {
        expect(result.ms).toBeGreaterThan(headersTimeoutMs - 100);
        expect(result.ms).toBeLessThan(headersTimeoutMs + 1000);
        expectProblem(parse(result.text), 408);
      }
    } finally {
      clearInterval(trickle);
    }
  });

  it('drops a connection whose body never completes at the request deadline', async () => {
    const request = 'POST /api/bulk HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"ips":[';
    const result = await raw(port, request);
    expect(result.ms).toBeGreaterThan(requestTimeoutMs - 200);
    expect(result.ms).toBeLessThan(requestTimeoutMs + 1000);
    expect(expectProblem(parse(result.text), 408).detail).toMatch(/whole request within 1200 ms/);
  });

  it('closes an idle keep-alive connection after the keep-alive timeout', async () => {
    const socket = await openSocket(port);
    const result = collect(socket, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    const done = await result;
    expect(parse(done.text).status).toBe(200);
    expect(done.ms).toBeGreaterThan(400);
    expect(done.ms).toBeLessThan(2500);
  });

  it('closes connections past the cap at once, and serves again once they are gone', async () => {
    const held = await Promise.all(Array.from({ length: 20 }, () => openSocket(port)));
    const heldResults = held.map((socket) => collect(socket));
    await settle(100);
    const extra = await raw(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n').catch(() => ({ text: '', ms: 0, ended: 'reset' as const }));
    expect(extra.text).toBe('');
    expect(extra.ms).toBeLessThan(500);
    for (const socket of held) socket.destroy();
    await Promise.all(heldResults);
    await settle(50);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });
});

describe('answers before routing and around it', () => {
  let server: TestServer;
  let port: number;
  let base: string;

  beforeAll(async () => {
    server = await startTestServer();
    port = await listen(server);
    base = `http://127.0.0.1:${port}`;
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

  it('refuses a repeated or bracketed query parameter rather than answering for the caller\'s own address', async () => {
    for (const query of ['ip[]=8.8.8.8', 'ip=1.1.1.1&ip=2.2.2.2', 'ip[0]=8.8.8.8', 'ip=8.8.8.8&ip=8.8.8.8']) {
      const response = await fetch(`${base}/api/ipinfo?${query}`);
      expect(response.status, query).toBe(400);
      const body = await response.json();
      expect(body.code).toBe('usage');
      expect(body.detail).toMatch(/query parameter "ip(\[0?\])?"/);
    }
    const dns = await fetch(`${base}/api/dns-lookup?domain=a.example&domain=b.example`);
    expect(dns.status).toBe(400);
  });

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
