/**
 * `--trust-anchor FILE` reads at most its documented limit (1 MiB): a huge
 * file, /dev/zero or an endless pipe is a one-line usage error naming the
 * file and the limit, and pipes and FIFOs are read as they come. The
 * spawned runs need the built CLI (npm run build).
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, ftruncateSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TRUST_ANCHOR_FILE_MAX_BYTES } from '../../src/cli/trust-anchor-file.js';
import { BIN, isolatedEnv, runCli, spawnCli, tempDir } from '../support/cli.js';
import { closedPort, findExecutable } from '../support/peers.js';

const scratch = tempDir('netintel-anchor-');
afterAll(() => scratch.remove());

// A port this test closed: the anchor is refused before any question is asked.
const CLOSED = `127.0.0.1:${await closedPort()}`;
const RESOLVER = ['--resolver', CLOSED, '--retries', '0'];
const limitError = (file: string): string =>
  `netintel: the trust anchor file ${file} is larger than the limit of 1 MiB (1048576 bytes); give a file of DS or DNSKEY records to --trust-anchor\n`;

describe('--trust-anchor file size', () => {
  it('has the limit the docs state', () => {
    expect(TRUST_ANCHOR_FILE_MAX_BYTES).toBe(1024 * 1024);
  });

  it('refuses /dev/zero with one line naming the file and the limit, and exits 2 (the built CLI, not growing without end)', async () => {
    const run = await spawnCli(['dns', 'example.test', '--dnssec', '--trust-anchor', '/dev/zero', ...RESOLVER]);
    expect({ code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({ code: 2, stdout: '', stderr: limitError('/dev/zero') });
  });

  it('refuses a 24 MB file before reading it', async () => {
    const big = join(scratch.path, 'big.key');
    const fd = openSync(big, 'w');
    ftruncateSync(fd, 24 * 1000 * 1000);
    closeSync(fd);
    const run = await runCli(['dns', 'example.test', '--trust-anchor', big, ...RESOLVER]);
    expect(run).toEqual({ code: 2, stdout: '', stderr: limitError(big) });
  });

  it('reads the anchor from a pipe as bash process substitution gives it, and stops an endless pipe at the limit (the built CLI)', async () => {
    const viaPipe = (producer: string): Promise<{ code: number; stderr: string }> =>
      new Promise((resolve, reject) => {
        const script = `exec "$NODE" "$BIN" dns example.test --resolver ${CLOSED} --retries 0 --trust-anchor <(${producer})`;
        const child = spawn(findExecutable('bash')!, ['-c', script], { env: { PATH: process.env.PATH, NODE: process.execPath, BIN, ...isolatedEnv() }, stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code: code ?? -1, stderr }));
      });
    const text = await viaPipe(`printf 'test. IN A 192.0.2.1\\n'`);
    expect(text.code).toBe(2);
    expect(text.stderr).toMatch(/^netintel: the trust anchor file \/dev\/fd\/\d+ is not usable: no DS or DNSKEY record found/);
    const endless = await viaPipe('yes');
    expect(endless.code).toBe(2);
    expect(endless.stderr).toMatch(/^netintel: the trust anchor file \/dev\/fd\/\d+ is larger than the limit of 1 MiB \(1048576 bytes\); give a file of DS or DNSKEY records to --trust-anchor\n$/);
  });

  it('reads a FIFO whose writer opens it after netintel does, instead of blocking in open', async () => {
    const fifo = join(scratch.path, 'anchor.fifo');
    execFileSync('mkfifo', [fifo]);
    const writer = spawn('sh', ['-c', `printf 'test. IN A 192.0.2.1\\n' > '${fifo}'`], { stdio: 'ignore' });
    // Listened for at once: the writer may be gone before the run ends, and a later listener would wait forever.
    const written = new Promise((resolve) => writer.once('exit', resolve));
    const run = await runCli(['dns', 'example.test', '--trust-anchor', fifo, ...RESOLVER]);
    await written;
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^netintel: the trust anchor file .*anchor\.fifo is not usable: no DS or DNSKEY record found/);
  });
});
