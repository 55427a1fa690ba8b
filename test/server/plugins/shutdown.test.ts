/**
 * The shutdown plugin (src/server/plugins/shutdown.ts): requests in flight
 * answered 503 and their outbound connections cut by abortInFlight,
 * requests arriving while closing answered 503, answers while closing
 * ending their connection, and the request scope the handling runs in.
 * When these happen (signals, the grace) is the lifecycle's
 * (test/server/lifecycle.test.ts).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { rateLimit } from '../../../src/server/plugins/rate-limit.js';
import { shutdown } from '../../../src/server/plugins/shutdown.js';
import { requestScope } from '../../../src/server/request-scope.js';
import { parse, raw, settle } from '../raw-http.js';
import { deferred, pluginServer, type PluginServer } from './plugin-server.js';

let server: PluginServer;

afterEach(async () => {
  await server.app.close();
});

function withShutdown(): PluginServer {
  server = pluginServer();
  void server.app.register(shutdown, { callers: server.callers });
  return server;
}

function expectShuttingDown(response: { statusCode: number; headers: Record<string, unknown>; body: string }, instance: string): void {
  expect(response.statusCode).toBe(503);
  expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  expect(response.headers['retry-after']).toBe('1');
  expect(response.headers.connection).toBe('close');
  expect(JSON.parse(response.body)).toEqual({
    type: '/docs#problem-unreachable',
    title: 'Connection refused, reset, or no route',
    status: 503,
    detail: 'the server is shutting down and did not finish this request; retry it',
    code: 'unreachable',
    instance,
    details: { reason: 'shutdown' },
  });
}

describe('the shutdown plugin', () => {
  it('answers a request still unanswered 503 at abortInFlight, and drops the answer its handler gives later', async () => {
    const { app, logs } = withShutdown();
    const entered = deferred();
    const finish = deferred<{ late: true }>();
    app.get('/wait', async () => {
      entered.resolve();
      return finish.promise;
    });
    const response = app.inject({ url: '/wait?x=1' });
    await entered.promise;
    app.abortInFlight();
    expectShuttingDown(await response, '/wait');
    finish.resolve({ late: true });
    await settle(20);
    expect(logs.filter((line) => (line.level as number) >= 40)).toEqual([]);
  });

  it('answers 503 exactly the requests still in flight, after others came and went before them (their places taken again)', async () => {
    const { app, logs } = withShutdown();
    const answers = new Map<string, (value: { n: string }) => void>();
    const entered = new Map<string, () => void>();
    app.get('/wait/:n', async (request) => {
      const { n } = request.params as { n: string };
      const answer = deferred<{ n: string }>();
      answers.set(n, answer.resolve);
      entered.get(n)!();
      return answer.promise;
    });
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const start = async (n: string) => {
      const inside = deferred();
      entered.set(n, inside.resolve);
      const response = fetch(`${address}/wait/${n}`).then(async (answer) => ({ status: answer.status, body: await answer.text() }));
      await inside.promise;
      // Wrapped, so that awaiting the start does not wait for the answer.
      return { response };
    };
    const [a, b, c, d] = (await Promise.all(['a', 'b', 'c', 'd'].map(start))).map((started) => started.response);
    answers.get('b')!({ n: 'b' });
    answers.get('d')!({ n: 'd' });
    expect(await b).toEqual({ status: 200, body: '{"n":"b"}' });
    expect(await d).toEqual({ status: 200, body: '{"n":"d"}' });
    await settle(20);
    const [e, f] = (await Promise.all(['e', 'f'].map(start))).map((started) => started.response);
    app.abortInFlight();
    for (const response of [a, c, e, f]) expect((await response).status).toBe(503);
    for (const answer of answers.values()) answer({ n: 'late' });
    await settle(20);
    expect(logs.filter((line) => (line.level as number) >= 40)).toEqual([]);
  });

  it('answers 503 to a request that arrives after abortInFlight, with the caller known for its X-RateLimit-*', async () => {
    const { app } = withShutdown();
    void app.register(rateLimit, { limits: server.limits, now: server.now });
    let handled = false;
    app.get('/fast', async () => {
      handled = true;
      return { ok: true };
    });
    await app.ready();
    app.abortInFlight();
    const response = await app.inject({ url: '/fast' });
    expectShuttingDown(response, '/fast');
    expect(response.headers['x-ratelimit-limit']).toBe('1000');
    expect(handled).toBe(false);
  });

  it('cuts the connections a request\'s work opened, so that a probe ends now rather than at its own timeout', async () => {
    const { app } = withShutdown();
    const peer: Server = createServer();
    const accepted = new Promise<Socket>((resolve) => peer.once('connection', resolve));
    await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
    const port = (peer.address() as { port: number }).port;
    app.get('/probe', () => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.on('error', () => {});
      return new Promise(() => {});
    });
    try {
      const response = app.inject({ url: '/probe' });
      const far = await accepted;
      const closed = new Promise<void>((resolve) => far.once('close', () => resolve()));
      app.abortInFlight();
      expect((await response).statusCode).toBe(503);
      await closed;
    } finally {
      peer.close();
    }
  });

  it('ends the connection of an answer given while the server closes, so that keep-alive clients do not hold the shutdown', async () => {
    const { app } = withShutdown();
    const entered = deferred();
    const finish = deferred();
    app.get('/slow', async () => {
      entered.resolve();
      await finish.promise;
      return { ok: true };
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.server.address() as { port: number }).port;
    const answer = raw(port, 'GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await entered.promise;
    const closing = app.close();
    await settle(20);
    finish.resolve();
    const response = parse((await answer).text);
    expect(response.status).toBe(200);
    expect(response.headers.connection).toBe('close');
    await closing;
  });

  it('runs the rest of a request\'s handling in its request scope', async () => {
    const { app } = withShutdown();
    app.post('/scope', async (request) => {
      await settle(1);
      const scope = requestScope.getStore();
      return { id: scope?.id === request.id, method: scope?.method, url: scope?.url };
    });
    const response = await app.inject({ method: 'POST', url: '/scope?q=1', payload: { a: 1 } });
    expect(JSON.parse(response.body)).toEqual({ id: true, method: 'POST', url: '/scope?q=1' });
  });
});
