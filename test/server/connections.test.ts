/**
 * Connection deadlines and the connection cap (docs/api.md, Safety), and
 * query parameters given once, against a real server on 127.0.0.1:0 with
 * raw sockets. The answers given before routing are tested with the
 * plugins that give them (test/server/plugins/).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONNECTION_DEFAULTS } from '../../src/server/build-server.js';
import { startTestServer, type TestServer } from './harness.js';
import { collect, expectProblem, openSocket, parse, raw, settle } from './raw-http.js';

async function listen(server: TestServer): Promise<number> {
  await server.app.listen({ host: '127.0.0.1', port: 0 });
  return (server.app.server.address() as { port: number }).port;
}

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

describe('query parameters of the API routes', () => {
  let server: TestServer;
  let base: string;

  beforeAll(async () => {
    server = await startTestServer();
    base = `http://127.0.0.1:${await listen(server)}`;
  });
  afterAll(() => server.close());

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
});
