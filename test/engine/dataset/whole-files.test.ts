import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { adoptWholeFiles, readWholeFile, wholeFilesRead, type WholeFile } from '../../../src/engine/dataset/whole-files.js';
import { tempDir } from '../../support/cli.js';

const scratch = tempDir();
afterAll(() => scratch.remove());

describe('readWholeFile', () => {
  it('reads the file into shared memory and offers it to worker threads', () => {
    const path = join(scratch.path, 'a.bin');
    writeFileSync(path, 'abcdef');
    const bytes = readWholeFile(path);
    expect(bytes.toString()).toBe('abcdef');
    expect(bytes.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(wholeFilesRead().get(path)?.memory).toBe(bytes.buffer);
  });

  it('uses an adopted copy of the very same file, and reads a replaced file afresh', () => {
    const path = join(scratch.path, 'b.bin');
    writeFileSync(path, 'original');
    const read = readWholeFile(path);
    const copy = wholeFilesRead().get(path)!;
    // Another thread's copy: same identity, its own memory (marked to tell it apart).
    const memory = new SharedArrayBuffer(copy.memory.byteLength);
    Buffer.from(memory).set(read);
    Buffer.from(memory)[0] = 'O'.charCodeAt(0);
    adoptWholeFiles(new Map<string, WholeFile>([[path, { identity: copy.identity, memory }]]));
    const adopted = readWholeFile(path);
    expect(adopted.buffer).toBe(memory);
    expect(adopted.toString()).toBe('Original');

    // `netintel data update` installs a new version by renaming: another inode.
    const next = join(scratch.path, 'b.next');
    writeFileSync(next, 'replaced!');
    renameSync(next, path);
    const fresh = readWholeFile(path);
    expect(fresh.buffer).not.toBe(memory);
    expect(fresh.toString()).toBe('replaced!');
  });

  it('throws the error of a missing file', () => {
    expect(() => readWholeFile(join(scratch.path, 'missing.bin'))).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });
});
