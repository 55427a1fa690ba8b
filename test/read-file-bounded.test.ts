/**
 * The bounded reader of files named on the command line: never more than
 * the limit plus one byte read, whatever the file (a huge one, /dev/zero),
 * and never a wait without end (a FIFO nobody writes to).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readBoundedFileSync } from '../src/read-file-bounded.js';
import { NetintelError } from '../src/errors.js';
import { tempDir } from './support/cli.js';

const scratch = tempDir('netintel-bounded-');
afterAll(() => scratch.remove());

const options = { maxBytes: 16, what: 'test file', hint: 'give a small file' };

function failure(run: () => unknown): NetintelError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(NetintelError);
    return error as NetintelError;
  }
  throw new Error('expected a NetintelError');
}

describe('readBoundedFileSync', () => {
  it('reads a file up to the limit, and refuses one byte more naming the file and the limit', () => {
    const exact = join(scratch.path, 'exact');
    const over = join(scratch.path, 'over');
    writeFileSync(exact, 'x'.repeat(16));
    writeFileSync(over, 'x'.repeat(17));
    expect(readBoundedFileSync(exact, options).toString()).toBe('x'.repeat(16));
    const error = failure(() => readBoundedFileSync(over, options));
    expect(error.code).toBe('usage');
    expect(error.message).toBe(`the test file ${over} is larger than the limit of 16 bytes; give a small file`);
    expect(error.details).toEqual({ path: over, limit_bytes: 16 });
  });

  it('stops reading /dev/zero after the limit instead of reading for ever', () => {
    const error = failure(() => readBoundedFileSync('/dev/zero', { ...options, maxBytes: 1024 * 1024 }));
    expect(error.message).toBe('the test file /dev/zero is larger than the limit of 1 MiB (1048576 bytes); give a small file');
  });

  it('reads /dev/null as empty', () => {
    expect(readBoundedFileSync('/dev/null', options)).toEqual(Buffer.alloc(0));
  });

  it('names the errno of a file that cannot be read', () => {
    const missing = join(scratch.path, 'missing');
    expect(failure(() => readBoundedFileSync(missing, options)).message).toBe(`cannot read the test file ${missing} (ENOENT: give a small file)`);
    const directory = join(scratch.path, 'dir');
    mkdirSync(directory);
    expect(failure(() => readBoundedFileSync(directory, options)).message).toBe(`cannot read the test file ${directory} (EISDIR: give a small file)`);
  });

  it('gives up on a FIFO that no writer opens, instead of waiting in open() for ever', () => {
    const fifo = join(scratch.path, 'silent.fifo');
    execFileSync('mkfifo', [fifo]);
    const error = failure(() => readBoundedFileSync(fifo, { ...options, idleMs: 200 }));
    expect(error.message).toBe(`nothing came from the test file ${fifo} for 0.2 s; give a small file`);
  });

  it('reads a FIFO whose writer comes after it is opened, and stops a writer that does not stop at the limit', async () => {
    const fifo = join(scratch.path, 'written.fifo');
    execFileSync('mkfifo', [fifo]);
    // The writer blocks in open() until the reader opens the FIFO, then writes and closes.
    const writer = spawn('sh', ['-c', `printf 'anchor text' > '${fifo}'`], { stdio: 'ignore' });
    expect(readBoundedFileSync(fifo, options).toString()).toBe('anchor text');
    await new Promise((resolve) => writer.once('exit', resolve));

    const endless = spawn('sh', ['-c', `exec yes > '${fifo}'`], { stdio: 'ignore' });
    try {
      expect(failure(() => readBoundedFileSync(fifo, options)).message).toBe(`the test file ${fifo} is larger than the limit of 16 bytes; give a small file`);
    } finally {
      endless.kill('SIGKILL');
    }
  });
});
