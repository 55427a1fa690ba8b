/**
 * The built CLI's three entry paths (bin/load-bundle.js: the direct bundle
 * for plain ip/asn/vpn lookups, the lookup bundle for the other ip/asn/vpn
 * runs, the main bundle for every other command), and a child-process runner
 * whose stdout is any descriptor (/dev/full) or a pipe the parent closes
 * after the first bytes.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { BIN, isolatedEnv, REPO_ROOT, type SpawnResult } from './cli.js';

export type EntryPath = 'direct' | 'lookup' | 'main';

const require = createRequire(import.meta.url);

/** Which bundle bin/netintel.js runs for these arguments and this environment (isolated as spawnCli's). */
export function entryPathOf(argv: readonly string[], env: Record<string, string | undefined> = {}): EntryPath {
  const { loadCli } = require('../../bin/load-bundle.js') as { loadCli: (argv: readonly string[], env: object) => object };
  const cli = loadCli(argv, isolatedEnv(env));
  if ('ALL_COMMANDS' in cli) return 'main';
  return 'LOOKUP_COMMAND_NAMES' in cli ? 'lookup' : 'direct';
}

export interface SpawnToOptions {
  /** A file opened for the child's stdout (`/dev/full`), or a pipe closed by the parent after the first chunk. */
  stdout: { path: string } | 'close-after-first-chunk' | 'pipe';
  input?: string | Buffer;
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
}

/** Runs `node bin/netintel.js ...argv` with the given stdout; stdout text is only kept for a pipe. */
export function spawnTo(argv: readonly string[], options: SpawnToOptions): Promise<SpawnResult> {
  const started = Date.now();
  const env: Record<string, string | undefined> = { PATH: process.env.PATH, ...isolatedEnv(options.env) };
  const fd = typeof options.stdout === 'object' ? openSync(options.stdout.path, 'w') : null;
  const child = spawn(process.execPath, [BIN, ...argv], { cwd: REPO_ROOT, env, stdio: ['pipe', fd ?? 'pipe', 'pipe'] });
  if (fd !== null) closeSync(fd);
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout.push(chunk);
    if (options.stdout === 'close-after-first-chunk') child.stdout!.destroy();
  });
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  child.stdin.on('error', () => {});
  child.stdin.end(options.input ?? '');
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        code: code ?? -1,
        signal,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
        durationMs: Date.now() - started,
      });
    });
  });
}
