/**
 * `netintel serve`'s log as the built program writes it: on a terminal (a
 * real pseudo-terminal from `script -qfec`) one readable line per request,
 * coloured unless NO_COLOR; into a pipe, pino's JSON lines.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, isolatedEnv, REPO_ROOT, spawnCli, tempDir } from '../support/cli.js';

const scratch = tempDir('netintel-serve-log-');
afterAll(() => scratch.remove());

interface Running {
  child: ChildProcess;
  output: () => string;
  url: string;
}

/** Starts serve (through `script` when `terminal`) and waits for its address line. */
async function startServe(terminal: boolean, env: Record<string, string> = {}, db = join(scratch.path, `keys-${Date.now()}.db`)): Promise<Running> {
  const argv = [BIN, 'serve', '--port', '0', '--db', db];
  const fullEnv = { PATH: process.env.PATH, ...isolatedEnv(env) };
  const child = terminal
    ? spawn('script', ['-qfec', [process.execPath, ...argv].map((arg) => `'${arg}'`).join(' '), '/dev/null'], { cwd: REPO_ROOT, env: fullEnv, stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(process.execPath, argv, { cwd: REPO_ROOT, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const url = await waitFor(() => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(text)?.[1]);
  return { child, output: () => text, url };
}

async function waitFor<T>(probe: () => T | undefined, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== null) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function stop(running: Running): Promise<void> {
  const exited = new Promise((resolve) => running.child.once('exit', resolve));
  running.child.kill('SIGTERM');
  await exited;
}

describe('serve logs', () => {
  it('writes one readable, coloured line per request on a terminal', async () => {
    const running = await startServe(true);
    try {
      expect((await fetch(`${running.url}/healthz`)).status).toBe(200);
      const line = await waitFor(() => running.output().split(/\r?\n/).find((text) => text.includes('GET /healthz')));
      expect(line).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] \x1b\[32mINFO\x1b\[39m: \x1b\[36mGET \/healthz 200 [\d.]+ ms\x1b\[39m$/);
      expect(running.output()).not.toMatch(/\{"level"/);
    } finally {
      await stop(running);
    }
  });

  it('leaves the colour out with NO_COLOR, and shows the key id of a keyed request', async () => {
    const db = join(scratch.path, 'keyed.db');
    const created = await spawnCli(['keys', 'create', '--plan', 'pro', '--db', db, '-f', 'json']);
    const { id, key } = JSON.parse(created.stdout) as { id: string; key: string };
    const running = await startServe(true, { NO_COLOR: '1' }, db);
    try {
      expect((await fetch(`${running.url}/api/quota`, { headers: { 'x-api-key': key } })).status).toBe(200);
      await fetch(`${running.url}/healthz`);
      const line = await waitFor(() => running.output().split(/\r?\n/).find((text) => text.includes('GET /healthz')));
      expect(line).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: GET \/healthz 200 [\d.]+ ms$/);
      await waitFor(() => (running.output().includes('GET /api/quota') ? true : undefined));
      expect(running.output()).toMatch(new RegExp(`INFO: GET /api/quota 200 [\\d.]+ ms key ${id}\r?\n`));
      expect(running.output()).not.toContain('\x1b[');
    } finally {
      await stop(running);
    }
  });

  it('writes JSON lines when stderr is not a terminal', async () => {
    const running = await startServe(false);
    try {
      await fetch(`${running.url}/healthz`);
      const line = await waitFor(() => running.output().split('\n').find((text) => text.includes('"/healthz"')));
      expect(JSON.parse(line)).toMatchObject({ level: 30, msg: 'request', method: 'GET', path: '/healthz', status: 200 });
    } finally {
      await stop(running);
    }
  });
});
