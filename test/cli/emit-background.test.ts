/**
 * Bulk rows written in the background (FdOutput.writeInBackground): the
 * next batch renders while one is written, rows stay in input order, a
 * buffer is never rendered into while its write is in flight, and a reader
 * that went away ends the run quietly.
 */
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { emitOutcomes } from '../../src/cli/emit.js';
import { FdOutput } from '../../src/cli/fd-output.js';
import type { CliIo, OutputStream } from '../../src/cli/io.js';
import { optionsFromValues } from '../../src/cli/global-options.js';
import type { Outcome } from '../../src/engine/outcome.js';
import { NetintelError } from '../../src/errors.js';
import type { RecordSchema } from '../../src/output/record-schema.js';
import { tempDir } from '../support/cli.js';

const SCHEMA: RecordSchema = { kind: 'row', columns: ['n', 'text'], groups: {}, identity: ['n'], tableColumns: ['n', 'text'] };

/** A stdout whose background writes take a few milliseconds each, checking what it is given. */
function backgroundStream(options: { failAt?: number; failure?: NodeJS.ErrnoException } = {}) {
  const written: string[] = [];
  const problems: string[] = [];
  let inFlight = false;
  const stream: OutputStream = {
    write(chunk) {
      if (inFlight) problems.push('write during a background write');
      written.push(Buffer.from(chunk).toString('utf8'));
      return true;
    },
    on: () => stream,
    off: () => stream,
    writesSynchronously: true,
    async writeInBackground(bytes) {
      if (inFlight) problems.push('two background writes at once');
      inFlight = true;
      const copy = Buffer.from(bytes).toString('utf8');
      await sleep(3);
      inFlight = false;
      // The bytes must be as they were when the write began.
      if (Buffer.from(bytes).toString('utf8') !== copy) problems.push('bytes changed while being written');
      if (options.failAt === written.length) throw options.failure;
      written.push(copy);
    },
  };
  return { stream, written, problems };
}

function batchesOf(count: number, size: number): Array<Array<Outcome<unknown>>> {
  return Array.from({ length: count }, (_, b) =>
    Array.from({ length: size }, (_, i): Outcome<unknown> => {
      const n = b * size + i;
      return n % 97 === 0
        ? { ok: false, query: `q${n}`, error: new NetintelError('invalid_input', `bad ${n}`) }
        : { ok: true, query: `q${n}`, value: { n, text: `row ${n} ${'x'.repeat(n % 50)}` } };
    }),
  );
}

function ioWith(stdout: OutputStream): CliIo {
  const stderr: OutputStream = { write: () => true, on: () => stderr, off: () => stderr };
  return { stdin: null as unknown as CliIo['stdin'], stdout, stderr, env: {} };
}

const csv = () => optionsFromValues({ format: 'csv', quiet: true }, {}, false, null);

describe('emitOutcomes with background writes', () => {
  it('writes every row once, in order, one batch at a time, never touching bytes in flight', async () => {
    const background = backgroundStream();
    const code = await emitOutcomes(ioWith(background.stream), csv(), SCHEMA, batchesOf(30, 400), { single: false, bulk: true });
    const expected = { stream: backgroundStream().stream, written: [] as string[] };
    expected.stream.writeInBackground = undefined;
    expected.stream.write = (chunk) => {
      expected.written.push(Buffer.from(chunk).toString('utf8'));
      return true;
    };
    await emitOutcomes(ioWith(expected.stream), csv(), SCHEMA, batchesOf(30, 400), { single: false, bulk: true });
    expect(background.problems).toEqual([]);
    expect(background.written.join('')).toBe(expected.written.join(''));
    expect(code).toBe(7);
  });

  it('ends quietly when the reader went away (EPIPE), writing nothing after it', async () => {
    const background = backgroundStream({ failAt: 3, failure: Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }) });
    await expect(emitOutcomes(ioWith(background.stream), csv(), SCHEMA, batchesOf(30, 100), { single: false, bulk: true })).resolves.toBe(7);
    // The header and two batches; the third failed, and nothing came after it.
    expect(background.written).toHaveLength(3);
    expect(background.problems).toEqual([]);
  });

  it('rethrows any other write error', async () => {
    const background = backgroundStream({ failAt: 2, failure: Object.assign(new Error('write EIO'), { code: 'EIO' }) });
    await expect(emitOutcomes(ioWith(background.stream), csv(), SCHEMA, batchesOf(10, 100), { single: false, bulk: true })).rejects.toThrow('EIO');
  });
});

describe('FdOutput.writeInBackground', () => {
  it('writes all the bytes to a file, in order after what was written before', async () => {
    const dir = tempDir();
    try {
      const path = join(dir.path, 'out.bin');
      const fd = openSync(path, 'w');
      const output = new FdOutput(fd);
      const big = Buffer.alloc(3_000_000, 'a');
      output.write('head\n');
      await output.writeInBackground(big);
      await output.writeInBackground(Buffer.from('tail\n'));
      await output.writeInBackground(new Uint8Array(0));
      closeSync(fd);
      expect(readFileSync(path, 'latin1')).toBe(`head\n${big.toString('latin1')}tail\n`);
    } finally {
      dir.remove();
    }
  });

  it('rejects with the system error, and refuses writes after it', async () => {
    const dir = tempDir();
    try {
      const fd = openSync(join(dir.path, 'gone.txt'), 'w');
      closeSync(fd);
      const output = new FdOutput(fd);
      await expect(output.writeInBackground(Buffer.from('lost'))).rejects.toMatchObject({ code: 'EBADF' });
      await expect(output.writeInBackground(Buffer.from('more'))).rejects.toBeTruthy();
    } finally {
      dir.remove();
    }
  });
});
