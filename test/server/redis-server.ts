/**
 * A real redis-server for tests (Debian's redis-server), on a free loopback
 * port, without persistence. `findRedisServer()` is null when it is not
 * installed: the tests that need it skip and say so.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';

export function findRedisServer(): string | null {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const port = (probe.address() as net.AddressInfo).port;
      probe.close(() => resolve(port));
    });
  });
}

export interface RedisTestServer {
  url: string;
  /** Sends the server a signal: SIGSTOP makes it hang (connections stay open, nothing answers), SIGCONT wakes it. */
  signal(signal: NodeJS.Signals): void;
  stop(): Promise<void>;
}

/** A redis-server on `port` (a free one by default: give the port of one stopped to start it again). */
export async function startRedisServer(binary: string, port?: number): Promise<RedisTestServer> {
  port ??= await freePort();
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
      reject(new Error(`redis-server exited with ${code}: ${output}`));
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
