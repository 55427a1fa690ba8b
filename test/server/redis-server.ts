/**
 * A real redis-server for tests (Debian's redis-server), on a free loopback
 * port, without persistence. `findRedisServer()` is null when it is not
 * installed: the tests that need it skip and say so.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { PeerExited, startOnFreePort } from '../support/peers.js';

export function findRedisServer(): string | null {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : null;
}

export interface RedisTestServer {
  url: string;
  /** Sends the server a signal: SIGSTOP makes it hang (connections stay open, nothing answers), SIGCONT wakes it. */
  signal(signal: NodeJS.Signals): void;
  stop(): Promise<void>;
}

/**
 * A redis-server on `port`, or on a free one (started again on another if
 * the port is taken before it binds; give the port of one stopped to start
 * it again there).
 */
export async function startRedisServer(binary: string, port?: number): Promise<RedisTestServer> {
  return port === undefined ? startOnFreePort((free) => startRedisServerOn(binary, free)) : startRedisServerOn(binary, port);
}

async function startRedisServerOn(binary: string, port: number): Promise<RedisTestServer> {
  const child: ChildProcess = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${output}`)), 10_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new PeerExited(`redis-server exited with ${code}: ${output}`));
    });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    signal: (signal) => void child.kill(signal),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        // A stopped server takes no SIGTERM until it runs again.
        child.kill('SIGCONT');
        child.kill('SIGTERM');
      }),
  };
}

/** A RESP2 value a scripted peer answers with. */
export type RespValue = { simple: string } | { error: string } | number | string | null | RespValue[];

/** `value` in RESP2, as a Redis server writes it. */
export function encodeResp(value: RespValue): Buffer {
  if (value === null) return Buffer.from('$-1\r\n');
  if (typeof value === 'number') return Buffer.from(`:${value}\r\n`);
  if (typeof value === 'string') return Buffer.concat([Buffer.from(`$${Buffer.byteLength(value)}\r\n`), Buffer.from(value), Buffer.from('\r\n')]);
  if (Array.isArray(value)) return Buffer.concat([Buffer.from(`*${value.length}\r\n`), ...value.map(encodeResp)]);
  return Buffer.from('simple' in value ? `+${value.simple}\r\n` : `-${value.error}\r\n`);
}

export interface ScriptedRedis {
  url: string;
  /** The commands received, each as its words. */
  commands: string[][];
  stop(): Promise<void>;
}

/**
 * A peer that speaks Redis's protocol and answers each command with what
 * `answer` gives: a stand-in for a Redis, or something in front of one, that
 * answers in forms a real server never would. The commands are read with
 * redis-parser, the RESP reader ioredis itself uses.
 */
export async function startScriptedRedis(answer: (command: string[]) => RespValue): Promise<ScriptedRedis> {
  const { default: Parser } = await import('redis-parser');
  const commands: string[][] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    const parser = new Parser({
      returnReply: (command: string[]) => {
        commands.push(command);
        socket.write(encodeResp(answer(command)));
      },
      returnError: () => socket.destroy(),
    });
    socket.on('data', (chunk) => parser.execute(chunk));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    commands,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
