/**
 * Hostile netintel servers for the remote-mode tests, on 127.0.0.1 (or
 * another loopback address) port 0, and a run of the built CLI against them
 * that measures what a user would feel: exit code, stderr, how long it took,
 * how much it printed and its peak memory.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, isolatedEnv, REPO_ROOT } from '../support/cli.js';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
}

export interface HostilePeer {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** What reached the peer, in order. */
  requests: SeenRequest[];
  close(): Promise<void>;
}

/** An HTTP server that answers every request with `handler`. */
export async function hostileHttpPeer(handler: (request: IncomingMessage, response: ServerResponse) => void, host = '127.0.0.1'): Promise<HostilePeer> {
  const requests: SeenRequest[] = [];
  const server: Server = createServer((request, response) => {
    requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers });
    response.on('error', () => {});
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://${host}:${port}`,
    requests,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A TCP server that writes what it likes: HTTP that never completes, or not HTTP at all. */
export async function hostileTcpPeer(onConnection: (socket: Socket) => void): Promise<HostilePeer> {
  const sockets = new Set<Socket>();
  const server: TcpServer = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests: [],
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Writes `chunk` for as long as the client reads, never ending the body (chunked transfer coding). */
export function writeForever(response: ServerResponse, chunk: Buffer | string, head?: string): void {
  if (head !== undefined) response.write(head);
  const pump = () => {
    while (!response.destroyed && response.write(chunk)) {
      // the socket's buffer takes more: go on
    }
  };
  response.on('drain', pump);
  response.on('close', () => response.off('drain', pump));
  pump();
}

export interface MeasuredRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  /** The first 64 KiB of stdout. */
  stdout: string;
  stdoutOctets: number;
  elapsedMs: number;
  /** Peak resident set size of the CLI process, in MiB. */
  peakRssMiB: number;
}

const PRELOAD = join(REPO_ROOT, 'test', 'remote', 'report-peak-rss.cjs');

/**
 * Runs the built CLI (`npm run build` first) with `args` and measures it.
 * The peak RSS is what the process reports at exit, or, for a run killed at
 * `killAfterMs`, the highest VmHWM seen while polling /proc.
 */
export async function runMeasured(args: readonly string[], options: { killAfterMs?: number; env?: Record<string, string> } = {}): Promise<MeasuredRun> {
  const dir = mkdtempSync(join(tmpdir(), 'netintel-rss-'));
  const rssFile = join(dir, 'rss');
  const started = Date.now();
  const child = spawn(process.execPath, ['--require', PRELOAD, BIN, ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, ...isolatedEnv(options.env), NETINTEL_TEST_RSS_FILE: rssFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let highWaterKiB = 0;
  const poll = setInterval(() => {
    try {
      const match = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (match) highWaterKiB = Math.max(highWaterKiB, Number(match[1]));
    } catch {
      // gone already
    }
  }, 50);
  const kill = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs ?? 30_000);
  const stdout: Buffer[] = [];
  let stdoutOctets = 0;
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    if (stdoutOctets < 64 * 1024) stdout.push(chunk);
    stdoutOctets += chunk.length;
  });
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < 64 * 1024) stderr += chunk.toString('utf8');
  });
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (...end) => resolve(end)));
  const elapsedMs = Date.now() - started;
  clearInterval(poll);
  clearTimeout(kill);
  let reportedKiB = 0;
  try {
    reportedKiB = Number(readFileSync(rssFile, 'utf8'));
  } catch {
    // killed: the poll's figure stands
  }
  rmSync(dir, { recursive: true, force: true });
  return {
    code,
    signal,
    stderr,
    stdout: Buffer.concat(stdout).toString('utf8').slice(0, 64 * 1024),
    stdoutOctets,
    elapsedMs,
    peakRssMiB: Math.round(Math.max(reportedKiB, highWaterKiB) / 1024),
  };
}
