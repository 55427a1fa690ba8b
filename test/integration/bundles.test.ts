/**
 * The built CLI's bundles (dist/bundle/main.cjs, and mail.cjs with the mail
 * libraries) as bin/netintel.js loads them (bin/load-bundle.js): with the
 * code cache the build wrote, the engine code a command does not use left
 * uninitialised, mail.cjs read only by the commands that use it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, copyFileSync, cpSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import type { Script } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, REPO_ROOT, tempDir } from '../support/cli.js';
import { startDnsServer } from '../support/dns-server.js';

const require = createRequire(import.meta.url);
const { loadCli, loadBundle, BUNDLE, CODE_CACHE, MAIL } = require('../../bin/load-bundle.js') as {
  loadCli(): CliBundle;
  loadBundle(env?: NodeJS.ProcessEnv, bundle?: BundleFiles): { exports: CliBundle; script: Script };
  BUNDLE: string;
  CODE_CACHE: string;
  MAIL: BundleFiles;
};

interface BundleFiles {
  name: string;
  file: string;
  codeCache: string;
  id: string;
}

const LOADER = join(REPO_ROOT, 'bin', 'load-bundle.js');
const FIXTURES = join(REPO_ROOT, 'test', 'engine', 'mail', 'fixtures');

/** Runs a process without blocking this one, whose DNS server must answer it. */
function runAsync(args: string[], env: NodeJS.ProcessEnv): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

interface CliBundle {
  main(argv: string[], io: unknown): Promise<number>;
}

class Memory extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

async function run(bundle: CliBundle, argv: string[]) {
  const stdout = new Memory();
  const stderr = new Memory();
  const stdin = Object.assign(Readable.from([]), { isTTY: true });
  const code = await bundle.main(argv, { stdin, stdout, stderr, env: isolatedEnv() });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

const built = existsSync(BUNDLE);

describe('the bundle (bin/load-bundle.js)', () => {
  it.skipIf(!built)('has a code cache from the build that this Node accepts, for main.cjs and for mail.cjs', () => {
    expect(existsSync(CODE_CACHE)).toBe(true);
    expect(loadBundle().script.cachedDataRejected).toBe(false);
    expect(existsSync(MAIL.codeCache)).toBe(true);
    expect(loadBundle(process.env, MAIL).script.cachedDataRejected).toBe(false);
  });

  it.skipIf(!built)('reads mail.cjs, with its code cache, for a message that needs the mail libraries (encoded words), not for one that does not, nor for dkim --message, which needs only the address parser', async () => {
    const server = await startDnsServer({ records: [] });
    try {
      // main.cjs asks the loader's mailLibrary for each library as it first needs it: counted by wrapping it.
      const probe = (argv: string[]) => `
        const loader = require(${JSON.stringify(LOADER)});
        const asked = [];
        const mailLibrary = loader.mailLibrary;
        loader.mailLibrary = (specifier) => (asked.push(specifier), mailLibrary(specifier));
        const { Readable, Writable } = require('node:stream');
        let text = '';
        const stdout = new Writable({ write(chunk, _e, cb) { text += chunk; cb(); } });
        const sink = new Writable({ write(_c, _e, cb) { cb(); } });
        loader.loadCli().main(${JSON.stringify(argv)}, { stdin: Readable.from([]), stdout, stderr: sink, env: { HOME: '/nonexistent' } }).then((code) => {
          const mail = loader.loadedMailBundle();
          process.stdout.write(JSON.stringify({ code, mail: mail === null ? null : { rejected: mail.script.cachedDataRejected }, asked, from: JSON.parse(text).message?.from ?? null }));
        });`;
      const dns = ['--resolver', server.address, '--retries', '0', '-t', '2000', '-f', 'json'];
      const headers = await runAsync(['-e', probe(['headers', join(FIXTURES, 'headers-signed.eml'), ...dns])], isolatedEnv());
      // The message's keys are not published here: the DKIM verdicts say so, and the header block is read all the same.
      // One public hop, no encoded word: neither the public-suffix list nor libmime is needed.
      expect(JSON.parse(headers.stdout), headers.stderr).toMatchObject({ mail: null, asked: [], from: 'Alice <alice@headers.test>' });
      const encoded = await runAsync(['-e', probe(['headers', join(FIXTURES, 'headers-relayed.eml'), ...dns])], isolatedEnv());
      expect(JSON.parse(encoded.stdout), encoded.stderr).toMatchObject({ mail: { rejected: false }, from: 'Alice André <alice@example.com>' });
      expect(JSON.parse(encoded.stdout).asked).toContain('libmime');
      const dkim = await runAsync(['-e', probe(['dkim', '--message', join(FIXTURES, 'dkim-signed.eml'), ...dns])], isolatedEnv());
      expect(JSON.parse(dkim.stdout), dkim.stderr).toMatchObject({ mail: null });
    } finally {
      await server.close();
    }
  });

  it.skipIf(!built)('loads no network, process, thread, crypto, performance or promised-file module of Node, nor mail.cjs, for a one-off lookup', () => {
    const script = `
      const before = new Set(process.moduleLoadList);
      const loader = require(${JSON.stringify(`${REPO_ROOT}bin/load-bundle.js`)});
      const cli = loader.loadCli();
      const { Readable, Writable } = require('node:stream');
      const sink = new Writable({ write(_c, _e, cb) { cb(); } });
      cli.main(['ip', '8.8.8.8', '-f', 'json'], { stdin: Readable.from([]), stdout: sink, stderr: sink, env: { HOME: '/nonexistent' } }).then((code) => {
        const loaded = process.moduleLoadList.filter((name) => !before.has(name) && /^NativeModule (net|dgram|tls|https|child_process|worker_threads|crypto|perf_hooks|fs\\/promises)$/.test(name));
        process.stdout.write(JSON.stringify({ code, loaded, mail: loader.loadedMailBundle() !== null }));
      });`;
    const child = spawnSync(process.execPath, ['-e', script], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(JSON.parse(child.stdout), child.stderr).toEqual({ code: 0, loaded: [], mail: false });
  });

  it.skipIf(!built)('leaves stderr unmade when a one-off writes nothing there: a pipe on stderr loads no node:net (cron: stdout a file)', () => {
    const out = tempDir('netintel-oneoff-');
    try {
      // The process surface bin/netintel.js gives; the report goes out on fd 3.
      const script = `
        const cli = require(${JSON.stringify(`${REPO_ROOT}bin/load-bundle.js`)}).loadCli();
        cli.main(['ip', '8.8.8.8', '-f', 'json'], cli.createProcessIo()).then((code) => {
          const loaded = process.moduleLoadList.filter((name) => /^NativeModule (net|tty)$/.test(name));
          require('node:fs').writeSync(3, JSON.stringify({ code, loaded }));
        });`;
      const stdoutFile = join(out.path, 'out.json');
      const fd = openSync(stdoutFile, 'w');
      const child = spawnSync(process.execPath, ['-e', script], { cwd: REPO_ROOT, env: isolatedEnv(), stdio: ['ignore', fd, 'pipe', 'pipe'], encoding: 'utf8' });
      closeSync(fd);
      const [, , stderr, report] = child.output as (string | null)[];
      expect(JSON.parse(report ?? ''), stderr ?? '').toEqual({ code: 0, loaded: [] });
      expect(JSON.parse(readFileSync(stdoutFile, 'utf8')).ip).toBe('8.8.8.8');
      expect(stderr).toBe('');
    } finally {
      out.remove();
    }
  });

  it.skipIf(!built)('resolves host names (dns-packet) for ip', async () => {
    const server = await startDnsServer({
      records: [
        { name: 'dual.test', type: 'A', data: '8.8.8.8' },
        { name: 'dual.test', type: 'AAAA', data: '2001:4860:4860::8888' },
      ],
    });
    try {
      const argv = ['ip', 'dual.test', '--resolver', server.address, '--retries', '0', '-t', '2000', '-f', 'ndjson'];
      const result = await run(loadCli(), argv);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.trim().split('\n').map((line) => JSON.parse(line).ip)).toEqual(['8.8.8.8', '2001:4860:4860::8888']);
    } finally {
      await server.close();
    }
  });

  it.skipIf(!built)('under a Node the build made no cache for, leaves one in the user cache directory on the first run and loads it on the next', async () => {
    // The package as another Node sees it: bin/ and the bundle without the build's cache.
    const pkg = tempDir('netintel-package-');
    const cacheHome = tempDir('netintel-cache-home-');
    try {
      cpSync(join(REPO_ROOT, 'bin'), join(pkg.path, 'bin'), { recursive: true });
      const bundleDir = join(pkg.path, 'dist', 'bundle');
      mkdirSync(bundleDir, { recursive: true });
      for (const name of readdirSync(dirname(BUNDLE))) if (!name.endsWith('.cache')) copyFileSync(join(dirname(BUNDLE), name), join(bundleDir, name));
      for (const name of ['data', 'node_modules', 'package.json']) symlinkSync(join(REPO_ROOT, name), join(pkg.path, name));
      const v8 = process.versions.v8;
      const id = readFileSync(`${BUNDLE}.sha256`, 'latin1').trim().slice(0, 16);
      const cacheDir = join(cacheHome.path, 'netintel');
      mkdirSync(cacheDir);
      // An earlier build's cache for this V8 is replaced; one for another V8 stays.
      writeFileSync(join(cacheDir, `main-0123456789abcdef-v8-${v8}.cache`), 'stale');
      writeFileSync(join(cacheDir, 'main-0123456789abcdef-v8-1.2.3.cache'), 'another Node');
      const env = { ...isolatedEnv(), XDG_CACHE_HOME: cacheHome.path };
      const lookup = () => spawnSync(process.execPath, [join(pkg.path, 'bin', 'netintel.js'), 'ip', '8.8.8.8', '-f', 'json'], { env, encoding: 'utf8' });
      const expected = spawnSync(process.execPath, [join(REPO_ROOT, 'bin', 'netintel.js'), 'ip', '8.8.8.8', '-f', 'json'], { env: isolatedEnv(), encoding: 'utf8' }).stdout;

      const first = lookup();
      expect(first.status, first.stderr).toBe(0);
      expect(first.stdout).toBe(expected);
      const own = join(cacheDir, `main-${id}-v8-${v8}.cache`);
      expect(readdirSync(cacheDir).sort()).toEqual([`main-${id}-v8-${v8}.cache`, 'main-0123456789abcdef-v8-1.2.3.cache'].sort());
      const written = statSync(own).mtimeMs;

      const probe = `const { script } = require(${JSON.stringify(join(pkg.path, 'bin', 'load-bundle.js'))}).loadBundle(); process.stdout.write(String(script.cachedDataRejected));`;
      expect(spawnSync(process.execPath, ['-e', probe], { env, encoding: 'utf8' }).stdout).toBe('false');
      const second = lookup();
      expect(second.stdout).toBe(expected);
      expect(statSync(own).mtimeMs).toBe(written);

      // A damaged cache is rejected by V8, costs nothing but the time, and is written anew.
      for (const damaged of [Buffer.alloc(0), randomBytes(4096), readFileSync(own).subarray(0, 1000)]) {
        writeFileSync(own, damaged);
        expect(lookup().stdout).toBe(expected);
        expect(spawnSync(process.execPath, ['-e', probe], { env, encoding: 'utf8' }).stdout).toBe('false');
      }

      // mail.cjs gets a cache of its own, from the first run that reads it.
      const server = await startDnsServer({ records: [] });
      try {
        const mailId = readFileSync(MAIL.id, 'latin1').trim().slice(0, 16);
        const headers = () =>
          runAsync([join(pkg.path, 'bin', 'netintel.js'), 'headers', join(FIXTURES, 'headers-relayed.eml'), '--resolver', server.address, '--retries', '0', '-t', '2000', '-f', 'json'], env);
        const firstHeaders = await headers();
        // Its From is an encoded word: libmime, in mail.cjs, decodes it.
        expect(JSON.parse(firstHeaders.stdout).message.from, firstHeaders.stderr).toBe('Alice André <alice@example.com>');
        expect(readdirSync(cacheDir)).toContain(`mail-${mailId}-v8-${v8}.cache`);
        const mailProbe = `const loader = require(${JSON.stringify(join(pkg.path, 'bin', 'load-bundle.js'))}); process.stdout.write(String(loader.loadBundle(process.env, loader.MAIL).script.cachedDataRejected));`;
        expect(spawnSync(process.execPath, ['-e', mailProbe], { env, encoding: 'utf8' }).stdout).toBe('false');
        expect((await headers()).stdout).toBe(firstHeaders.stdout);
      } finally {
        await server.close();
      }

      // A cache directory that cannot be written costs the cache, not the run.
      chmodSync(cacheDir, 0o500);
      const readOnly = spawnSync(process.execPath, [join(pkg.path, 'bin', 'netintel.js'), 'ip', '8.8.8.8', '-f', 'json'], { env: { ...env, XDG_CACHE_HOME: join(cacheDir, 'sub') }, encoding: 'utf8' });
      expect([readOnly.status, readOnly.stdout, readOnly.stderr]).toEqual([0, expected, '']);
    } finally {
      chmodSync(join(cacheHome.path, 'netintel'), 0o700);
      pkg.remove();
      cacheHome.remove();
    }
  });
});
