/**
 * The server's lifecycle (src/server/lifecycle.ts) in this process, with
 * signals the test sends: listening and saying where, finishing requests
 * in flight within the grace, ending those left after it or at a second
 * signal, the usage error of a port in use, and what it closes. The built
 * `netintel serve` under real signals is tested with the command
 * (test/commands/serve.test.ts).
 */
import { EventEmitter } from 'node:events';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createEngineContext, type EngineContext } from '../../src/engine/context.js';
import { NetintelError } from '../../src/errors.js';
import { loadPlanTable } from '../../src/keys/plans.js';
import type { ApiRoute } from '../../src/server/api-route.js';
import { runServer, type ServeHost, type ServeSettings } from '../../src/server/lifecycle.js';

/** Routes a test waits on: one answering after 300 ms, one whose work holds a connection to `peerPort` and never ends. */
function testRoutes(peerPort: number): ApiRoute[] {
  const route = (url: string, handler: ApiRoute['handler']): ApiRoute => ({
    method: 'GET',
    url,
    operationId: url.replace(/\W/g, ''),
    summary: url,
    description: url,
    feature: null,
    responseDescription: url,
    handler,
  });
  return [
    route('/test/slow', () => new Promise((resolve) => setTimeout(() => resolve({ ok: true }), 300))),
    route('/test/hang', () => {
      connect({ host: '127.0.0.1', port: peerPort }).on('error', () => {});
      return new Promise(() => {});
    }),
  ];
}

interface Running {
  url: string;
  done: Promise<void>;
  signals: EventEmitter;
  logs: Array<Record<string, unknown>>;
  stdout: string[];
  ctx: EngineContext;
  /** The far ends of the connections the hanging route opened. */
  peers: Socket[];
}

let peer: Server | undefined;

afterEach(async () => {
  await new Promise((resolve) => (peer ? peer.close(resolve) : resolve(undefined)));
  peer = undefined;
});

async function start(settings: Partial<ServeSettings> = {}): Promise<Running> {
  const peers: Socket[] = [];
  peer = createServer((socket) => peers.push(socket));
  await new Promise<void>((resolve) => peer!.listen(0, '127.0.0.1', resolve));
  const peerPort = (peer.address() as AddressInfo).port;
  const signals = new EventEmitter();
  const logs: Array<Record<string, unknown>> = [];
  const stdout: string[] = [];
  const ctx = createEngineContext({ timeoutMs: 2000, dnsRetries: 0 });
  let listened!: (url: string) => void;
  const listening = new Promise<string>((resolve) => {
    listened = resolve;
  });
  const done = runServer(
    {
      host: '127.0.0.1',
      port: 0,
      db: ':memory:',
      accounts: false,
      server: {
        ctx,
        plans: loadPlanTable(),
        dataMode: 'pread',
        logger: { level: 'info', stream: { write: (line: string) => logs.push(JSON.parse(line) as Record<string, unknown>) } },
        routes: (routes) => [...routes, ...testRoutes(peerPort)],
      },
      ...settings,
    },
    {
      stdout: {
        write: (text: string) => {
          stdout.push(text);
          listened(/listening on (\S+)/.exec(text)![1]!);
        },
      },
      processEvents: signals as unknown as ServeHost['processEvents'],
    },
  );
  return { url: await listening, done, signals, logs, stdout, ctx, peers };
}

const messages = (running: Running) => running.logs.map((line) => line.msg);

describe('the server\'s lifecycle', () => {
  it('listens, says where on stdout and in the log, serves until SIGTERM, then stops and lets go of the process\'s events', async () => {
    const running = await start();
    expect(running.stdout).toEqual([`listening on ${running.url}\n`]);
    expect((await fetch(`${running.url}/healthz`)).status).toBe(200);
    expect(running.logs.find((line) => line.msg === 'listening')).toMatchObject({
      url: running.url,
      limits: 'memory',
      keys: ':memory:',
      accounts: false,
      connections: { headersTimeoutMs: 10_000, requestTimeoutMs: 15_000, keepAliveTimeoutMs: 5_000, maxConnections: 1024, shutdownGraceMs: 2000 },
    });
    expect(running.signals.listenerCount('uncaughtException')).toBe(1);
    running.signals.emit('SIGTERM', 'SIGTERM');
    await running.done;
    expect(messages(running).slice(-2)).toEqual(['shutting down: finishing requests in flight', 'stopped']);
    expect(running.signals.listenerCount('uncaughtException')).toBe(0);
    expect(running.signals.listenerCount('unhandledRejection')).toBe(0);
    expect(running.ctx.signal?.aborted).toBe(true);
    await expect(fetch(`${running.url}/healthz`)).rejects.toThrow();
  });

  it('lets a request in flight finish within the grace', async () => {
    const running = await start({ graceMs: 2000 });
    const answer = fetch(`${running.url}/test/slow`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    running.signals.emit('SIGTERM', 'SIGTERM');
    const response = await answer;
    expect(response.status).toBe(200);
    expect(response.headers.get('connection')).toBe('close');
    await running.done;
    expect(messages(running)).not.toContain('shutting down: ending the requests still in flight');
  });

  it('after the grace, answers the requests left 503 and cuts the connections their work opened', async () => {
    const running = await start({ graceMs: 200 });
    const answer = fetch(`${running.url}/test/hang`);
    while (running.peers.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const cut = new Promise((resolve) => running.peers[0]!.once('close', resolve));
    const signalled = performance.now();
    running.signals.emit('SIGTERM', 'SIGTERM');
    const response = await answer;
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(((await response.json()) as { details: unknown }).details).toEqual({ reason: 'shutdown' });
    await cut;
    await running.done;
    expect(performance.now() - signalled).toBeGreaterThan(150);
    expect(performance.now() - signalled).toBeLessThan(1500);
    expect(messages(running).slice(-4)).toEqual(['shutting down: finishing requests in flight', 'shutting down: ending the requests still in flight', 'request', 'stopped']);
  });

  it('ends the requests left at once on a second signal, whatever the grace', async () => {
    const running = await start({ graceMs: 60_000 });
    const answer = fetch(`${running.url}/test/hang`);
    while (running.peers.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    running.signals.emit('SIGTERM', 'SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const second = performance.now();
    running.signals.emit('SIGINT', 'SIGINT');
    expect((await answer).status).toBe(503);
    await running.done;
    expect(performance.now() - second).toBeLessThan(1500);
  });

  it('refuses a port in use with a usage error that names --port', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    const ctx = createEngineContext({ timeoutMs: 2000, dnsRetries: 0 });
    try {
      const failed = runServer(
        { host: '127.0.0.1', port, db: ':memory:', accounts: false, server: { ctx, plans: loadPlanTable(), dataMode: 'pread', logger: false } },
        { stdout: { write: () => true }, processEvents: new EventEmitter() as unknown as ServeHost['processEvents'] },
      );
      const error = await failed.then(() => null, (caught: unknown) => caught);
      expect(error).toBeInstanceOf(NetintelError);
      expect(error).toMatchObject({ code: 'usage', message: `port ${port} is in use (127.0.0.1:${port}): choose another with --port (0 takes any free port)` });
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
