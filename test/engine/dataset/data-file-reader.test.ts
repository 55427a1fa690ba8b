/**
 * The data-file module the binary readers share: positioned reads and whole
 * reads agree with the file's bytes in both modes, also when the system
 * returns fewer bytes than asked; every way of not reaching the bytes is a
 * `data_unavailable` error naming the file.
 */
import { mkdirSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { dataFileOfBytes, openDataFile, type DataFileMode } from '../../../src/engine/dataset/data-file-reader.js';
import { NetintelError } from '../../../src/errors.js';
import { tempDir } from '../../support/cli.js';
import { netintelErrorOf } from '../../support/netintel-error.js';

/** When set, every readSync returns at most this many bytes, as a signal or a network file system may. */
const io = vi.hoisted(() => ({ maxChunk: 0, reads: 0 }));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const readSync = (fd: number, buffer: NodeJS.ArrayBufferView, offset: number, length: number, position: number | null): number => {
    io.reads += 1;
    return fs.readSync(fd, buffer, offset, io.maxChunk > 0 ? Math.min(length, io.maxChunk) : length, position);
  };
  return { ...fs, readSync };
});

const MODES: DataFileMode[] = ['pread', 'memory'];
const NAMES = { kind: 'test index', remedy: 'rebuild it' };

const scratch = tempDir();
afterAll(() => scratch.remove());
afterEach(() => {
  io.maxChunk = 0;
});

let files = 0;
function fileOf(bytes: Uint8Array): string {
  const path = join(scratch.path, `file-${files++}.bin`);
  writeFileSync(path, bytes);
  return path;
}

function expectDataUnavailable(action: () => unknown, path: string): NetintelError {
  const error = netintelErrorOf(action);
  expect(error.code).toBe('data_unavailable');
  expect(error.message).toContain(path);
  expect(error.message).toContain('test index');
  expect(error.details).toEqual({ path });
  return error;
}

/** A file's bytes and reads inside it. */
const fileAndReads = fc.uint8Array({ minLength: 0, maxLength: 3000 }).chain((bytes) =>
  fc.tuple(
    fc.constant(bytes),
    fc.array(
      fc.nat({ max: bytes.length }).chain((position) => fc.tuple(fc.constant(position), fc.nat({ max: bytes.length - position }))),
      { maxLength: 8 },
    ),
    fc.integer({ min: 0, max: 7 }),
  ),
);

describe('openDataFile', () => {
  it.each(MODES)('reads exactly the bytes asked for, whatever the read sizes the system returns (%s mode)', (mode) => {
    fc.assert(
      fc.property(fileAndReads, ([bytes, reads, chunk]) => {
        const path = fileOf(bytes);
        io.maxChunk = chunk;
        const file = openDataFile(path, mode, NAMES);
        try {
          expect(file.size).toBe(bytes.length);
          expect(file.mode).toBe(mode);
          for (const [position, length] of reads) {
            expect(file.read(position, length)).toEqual(Buffer.from(bytes.subarray(position, position + length)));
          }
          expect(file.whole()).toEqual(Buffer.from(bytes));
        } finally {
          io.maxChunk = 0;
          file.close();
        }
      }),
      { numRuns: 60 },
    );
  });

  it('reads in pread mode only the bytes asked for, when asked', () => {
    const path = fileOf(new Uint8Array(1 << 20).fill(7));
    io.reads = 0;
    const file = openDataFile(path, 'pread', NAMES);
    expect(io.reads).toBe(0);
    expect(file.read(4096, 16)).toEqual(Buffer.alloc(16, 7));
    expect(io.reads).toBe(1);
    file.close();
  });

  it('returns views of one copy read at open in memory mode', () => {
    const path = fileOf(Buffer.from('0123456789'));
    const file = openDataFile(path, 'memory', NAMES);
    io.reads = 0;
    const whole = file.whole();
    expect(file.read(2, 3).toString()).toBe('234');
    expect(file.read(2, 3).buffer).toBe(whole.buffer);
    expect(io.reads).toBe(0);
    file.close();
  });

  it.each(MODES)('gives data_unavailable naming the file for a read past its end (%s mode)', (mode) => {
    fc.assert(
      fc.property(fc.nat({ max: 64 }), fc.nat({ max: 64 }), fc.integer({ min: 1, max: 64 }), (size, position, beyond) => {
        const path = fileOf(new Uint8Array(size));
        const file = openDataFile(path, mode, NAMES);
        try {
          const length = Math.max(0, size - position) + beyond;
          expect(expectDataUnavailable(() => file.read(position, length), path).message).toContain('truncated');
        } finally {
          file.close();
        }
      }),
      { numRuns: 40 },
    );
  });

  it('gives data_unavailable when the file shrinks after it was opened (pread mode)', () => {
    const path = fileOf(new Uint8Array(8192).fill(1));
    const file = openDataFile(path, 'pread', NAMES);
    truncateSync(path, 100);
    expect(file.read(0, 50)).toEqual(Buffer.alloc(50, 1));
    expect(expectDataUnavailable(() => file.read(4096, 16), path).message).toContain('truncated');
    file.close();
  });

  it.each(MODES)('gives data_unavailable naming a missing file, with the remedy (%s mode)', (mode) => {
    const path = join(scratch.path, 'missing.bin');
    const error = expectDataUnavailable(() => openDataFile(path, mode, NAMES), path);
    expect(error.message).toBe(`test index ${path} does not exist; rebuild it`);
  });

  it.each(MODES)('gives data_unavailable for a directory (%s mode)', (mode) => {
    const path = join(scratch.path, `directory-${mode}`);
    mkdirSync(path);
    expect(expectDataUnavailable(() => openDataFile(path, mode, NAMES), path).message).toContain('cannot be read');
  });

  it.each(MODES)('refuses reads once closed, and closes only once (%s mode)', (mode) => {
    const path = fileOf(Buffer.from('abc'));
    const file = openDataFile(path, mode, NAMES);
    file.close();
    file.close();
    expect(netintelErrorOf(() => file.read(0, 1)).code).toBe('internal');
    expect(netintelErrorOf(() => file.whole()).code).toBe('internal');
  });

  it.each(MODES)('refuses a negative or fractional position or length as a bug (%s mode)', (mode) => {
    const file = openDataFile(fileOf(Buffer.from('abcdef')), mode, NAMES);
    for (const [position, length] of [[-1, 1], [0, -1], [0.5, 1], [0, Number.NaN]] as const) {
      expect(netintelErrorOf(() => file.read(position, length)).code).toBe('internal');
    }
    file.close();
  });
});

describe('dataFileOfBytes', () => {
  it('reads bytes already held like a file opened in memory mode', () => {
    const bytes = new Uint8Array([9, 8, 7, 6, 5]);
    const file = dataFileOfBytes('compiled.idx', bytes.subarray(1), NAMES);
    expect(file.mode).toBe('memory');
    expect(file.size).toBe(4);
    expect([...file.read(1, 2)]).toEqual([7, 6]);
    expect(expectDataUnavailable(() => file.read(3, 2), 'compiled.idx').message).toContain('truncated');
  });
});
