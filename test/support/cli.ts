/**
 * Runs netintel two ways for tests:
 *
 * - `runCli(argv, options)`: in-process through `main(argv, io)` with memory
 *   streams and a fixed environment, so a test sees exactly what went to
 *   stdout and to stderr and the exit code main returned.
 * - `spawnCli(argv, options)`: `node bin/netintel.js` as a child process (the
 *   built program in dist/; run `npm run build` first).
 *
 * Both isolate the run from the developer's machine: the environment holds
 * only what the test gives plus an empty XDG config dir and HOME, so neither a
 * real config file nor NETINTEL_* variables of the shell leak in.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { CliIo } from '../../src/cli/io.js';
import { main } from '../../src/app/main.js';
import { afterAll, expect } from 'vitest';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = join(REPO_ROOT, 'bin', 'netintel.js');

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** What stdin holds; stdin is a TTY (nothing piped) when omitted. */
  stdin?: string | Buffer | Array<string | Buffer>;
  /** Variables on top of the isolated base environment. */
  env?: Record<string, string | undefined>;
  /** Pretend stdout is a terminal (colour decisions). */
  stdoutIsTty?: boolean;
}

/** A scratch directory removed by the returned function. */
export function tempDir(prefix = 'netintel-test-'): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

let isolatedHome: string | undefined;

// Removed when the test file that made it is done: a worker's 'exit' event
// does not come for every file, and the directories would pile up in /tmp.
afterAll(() => {
  if (isolatedHome !== undefined) rmSync(isolatedHome, { recursive: true, force: true });
  isolatedHome = undefined;
});

/** An empty directory used as HOME and XDG_CONFIG_HOME unless a test gives its own. */
function emptyHome(): string {
  isolatedHome ??= mkdtempSync(join(tmpdir(), 'netintel-home-'));
  return isolatedHome;
}

/** The base environment of a run: no config file, no NETINTEL_* variables. */
export function isolatedEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  const home = emptyHome();
  return { HOME: home, XDG_CONFIG_HOME: home, ...extra };
}

/** Writes `config` as the netintel config file under a new XDG config dir and returns that dir. */
export function writeConfigFile(dir: string, config: unknown): string {
  const base = join(dir, 'xdg');
  mkdirSync(join(base, 'netintel'), { recursive: true });
  writeFileSync(join(base, 'netintel', 'config.json'), typeof config === 'string' ? config : JSON.stringify(config));
  return base;
}

class MemoryWritable extends Writable {
  readonly chunks: Buffer[] = [];
  isTTY?: boolean;

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    callback();
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

function memoryStdin(input: RunOptions['stdin']): Readable & { isTTY?: boolean } {
  if (input === undefined) {
    const tty = Readable.from([]) as Readable & { isTTY?: boolean };
    tty.isTTY = true;
    return tty;
  }
  const chunks = (Array.isArray(input) ? input : [input]).map((chunk) => (typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
  return Readable.from(chunks);
}

/** Runs netintel in-process with memory streams. */
export function runCli(argv: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  return runEntry(main, argv, options);
}

/** Runs a CLI entry (`main` of src/app/main.ts, or another with its signature) in-process with memory streams. */
export async function runEntry(entry: (argv: readonly string[], io: CliIo) => Promise<number>, argv: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  const stdout = new MemoryWritable();
  const stderr = new MemoryWritable();
  if (options.stdoutIsTty) stdout.isTTY = true;
  const code = await entry(argv, { stdin: memoryStdin(options.stdin), stdout, stderr, env: isolatedEnv(options.env) });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

export interface SpawnOptions {
  /** Written to the child's stdin, which is then closed (default: empty). */
  input?: string | Buffer;
  /** stdin is /dev/null, as for cron jobs and services (`input` is then ignored). */
  devNullStdin?: boolean;
  env?: Record<string, string | undefined>;
  /** Kill the child after this many milliseconds (default 15 s). */
  timeoutMs?: number;
  /**
   * The child's stdout: a pipe (default), a file opened for it (`/dev/full`),
   * or a pipe the parent closes after the first chunk (a reader like `head`).
   * Its text is kept for a pipe only.
   */
  stdout?: 'pipe' | { path: string } | 'close-after-first-chunk';
}

export interface SpawnResult extends RunResult {
  signal: NodeJS.Signals | null;
  durationMs: number;
}

/** Runs `node bin/netintel.js ...argv` as a child process. */
export function spawnCli(argv: readonly string[], options: SpawnOptions = {}): Promise<SpawnResult> {
  const started = Date.now();
  const env: Record<string, string | undefined> = { PATH: process.env.PATH, ...isolatedEnv(options.env) };
  const fd = typeof options.stdout === 'object' ? openSync(options.stdout.path, 'w') : null;
  const child = spawn(process.execPath, [BIN, ...argv], { cwd: REPO_ROOT, env, stdio: [options.devNullStdin ? 'ignore' : 'pipe', fd ?? 'pipe', 'pipe'] });
  if (fd !== null) closeSync(fd);
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout.push(chunk);
    if (options.stdout === 'close-after-first-chunk') child.stdout!.destroy();
  });
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  if (child.stdin) {
    child.stdin.on('error', () => {}); // the child may exit before reading all of it
    child.stdin.end(options.input ?? '');
  }
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 15_000);
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

/** Asserts that a run printed and ended as another did: a remote run against its local one. */
export function expectSameRun(expected: RunResult, actual: RunResult): void {
  expect(actual.stdout).toBe(expected.stdout);
  expect(actual.stderr).toBe(expected.stderr);
  expect(actual.code).toBe(expected.code);
}
