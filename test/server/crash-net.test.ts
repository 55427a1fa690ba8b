/**
 * The crash net of `netintel serve` (src/server/crash-net.ts): an error that
 * escapes every handler is logged with its request, answered 500 where the
 * request is still open, and the process keeps serving.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';
import { serve, type Served } from '../support/served.js';
import { tempDir } from '../support/cli.js';
import { closedPort } from '../support/peers.js';

interface Child {
  child: ChildProcess;
  url: string;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function startFixture(): Promise<Child> {
  const child = spawn(process.execPath, [join(REPO_ROOT, 'test', 'support', 'crash-net-server.mjs')], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(stdout);
      if (match) resolve(match[1]!);
    });
    void exit.then(() => reject(new Error(`the fixture exited: ${stderr}`)));
  });
  return { child, url, stderr: () => stderr, exit };
}

function logLines(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the crash net: an error no handler caught', () => {
  let server: Child;
  beforeAll(async () => {
    server = await startFixture();
  });
  afterAll(async () => {
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
  });

  it('logs an orphaned rejection after the answer with the request it came from, and keeps serving', async () => {
    const response = await fetch(`${server.url}/test/orphan-rejection?x=1`);
    expect(response.status).toBe(400);
    await settle(100);
    const logged = logLines(server.stderr()).find((line) => line.msg === 'unhandled rejection while answering a request; still serving');
    expect(logged).toMatchObject({ method: 'GET', url: '/test/orphan-rejection?x=1', err: { message: 'orphaned sibling rejection' } });
    expect(logged!.reqId).toEqual(expect.any(String));
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it('answers 500 internal (problem+json, X-RateLimit-*) to the request whose callback threw, and keeps serving', async () => {
    const response = await fetch(`${server.url}/test/throw-in-callback`);
    expect(response.status).toBe(500);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(response.headers.get('x-ratelimit-limit')).not.toBeNull();
    expect(await response.json()).toMatchObject({ status: 500, code: 'internal', instance: '/test/throw-in-callback' });
    expect(logLines(server.stderr()).find((line) => line.msg === 'uncaught exception while answering a request; still serving')).toMatchObject({
      url: '/test/throw-in-callback',
      err: { message: 'thrown from a callback' },
    });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it('knows the request after its JSON body was read too, also one sent in parts', async () => {
    const response = await fetch(`${server.url}/test/post-throw-in-callback`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(response.status).toBe(500);
    expect((await response.json()).code).toBe('internal');
    const { port } = new URL(server.url);
    const socket = connect({ host: '127.0.0.1', port: Number(port) });
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.write('POST /test/post-throw-in-callback HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 7\r\nConnection: close\r\n\r\n{"a"');
    await settle(100);
    socket.write(':1}');
    await new Promise((resolve) => socket.on('close', resolve));
    expect(answer).toMatch(/^HTTP\/1\.1 500 /);
    expect(logLines(server.stderr()).find((line) => (line.err as { message?: string } | undefined)?.message === 'thrown from a callback after the body')).toMatchObject({
      method: 'POST',
      url: '/test/post-throw-in-callback',
    });
  });

  it('answers 500 to the request whose rejection nobody handled, many times over, and keeps serving', async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, () => fetch(`${server.url}/test/rejection-while-open`)));
    expect(answers.map((response) => response.status)).toEqual(Array(10).fill(500));
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(server.child.exitCode).toBeNull();
  });
});

describe('netintel serve with the net, against inputs that killed it', () => {
  const dir = tempDir('netintel-crash-');
  let served: Served;
  beforeAll(async () => {
    served = await serve(['--db', join(dir.path, 'keys.db'), '--resolver', `127.0.0.1:${await closedPort()}`, '--timeout', '500', '--log-level', 'warn']);
  });
  afterAll(async () => {
    if (served.child.exitCode === null) served.child.kill('SIGKILL');
    dir.remove();
  });

  it('answers each of them and is still serving afterwards', async () => {
    for (const path of ['/api/email-tests?domain=.', '/api/dns-lookup?domain=example.com&resolver=1::8.8.8.8', '/api/email-tests?type=spf&domain=.']) {
      const response = await fetch(`${served.url}${path}`);
      expect(response.status, path).toBeGreaterThanOrEqual(200);
      await response.arrayBuffer();
      await settle(100);
      expect((await fetch(`${served.url}/healthz`)).status, `after ${path}`).toBe(200);
    }
    expect(served.child.exitCode).toBeNull();
  });
});
