import { spawn, type ChildProcess } from 'node:child_process';
import { BIN, isolatedEnv, REPO_ROOT } from './cli.js';

/** A running `netintel serve` process and the URL it listens on. */
export interface Served {
  child: ChildProcess;
  url: string;
  /** What it has written to stdout so far (the address lines). */
  stdout: () => string;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `netintel serve --port 0 ...args` (the built program: run `npm run build` first); resolves once it listens. */
export async function serve(args: string[], env: Record<string, string> = {}): Promise<Served> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, ...isolatedEnv(env) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${stderr}`)), 15_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    void exit.then(() => reject(new Error(`serve exited: ${stderr}`)));
  });
  return { child, url, stdout: () => stdout, stderr: () => stderr, exit };
}

