import { spawnSync } from 'node:child_process';
import { chmodSync, createReadStream, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { text } from 'node:stream/consumers';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeOutputFile } from '../src/cli/output-file.js';
import { NetintelError } from '../src/errors.js';
import { writeFileAtomically } from '../src/write-file-atomically.js';

describe('writeFileAtomically', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'netintel-atomic-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('replaces an existing file whole, with the mode asked, and leaves nothing else behind', async () => {
    const path = join(dir, 'map.svg');
    writeFileSync(path, 'old');
    await writeFileAtomically(path, '<svg/>', { mode: 0o600 });
    expect(readFileSync(path, 'utf8')).toBe('<svg/>');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['map.svg']);
  });

  it('replaces the file a symbolic link names and keeps the link', async () => {
    const real = join(dir, 'real.svg');
    const link = join(dir, 'link.svg');
    writeFileSync(real, 'old');
    symlinkSync(real, link);
    await writeFileAtomically(link, 'new');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, 'utf8')).toBe('new');
    expect(readdirSync(dir).sort()).toEqual(['link.svg', 'real.svg']);
  });

  it('keeps the permissions of the file it replaces: a private file stays private', async () => {
    const path = join(dir, 'private.svg');
    writeFileSync(path, 'secret', { mode: 0o600 });
    chmodSync(path, 0o600);
    await writeFileAtomically(path, '<svg/>');
    expect(readFileSync(path, 'utf8')).toBe('<svg/>');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    chmodSync(path, 0o640);
    await writeFileAtomically(path, 'again');
    expect(statSync(path).mode & 0o777).toBe(0o640);
  });

  it('gives a new file the default mode, as fs.writeFile does, under the umask in force', async () => {
    const before = process.umask(0o002);
    try {
      const ours = join(dir, 'new.svg');
      const theirs = join(dir, 'reference.svg');
      await writeFileAtomically(ours, '<svg/>');
      writeFileSync(theirs, '<svg/>');
      expect(statSync(ours).mode & 0o777).toBe(0o664);
      expect(statSync(ours).mode & 0o777).toBe(statSync(theirs).mode & 0o777);
    } finally {
      process.umask(before);
    }
  });

  it('follows a dangling symbolic link (relative, through another link) to create the file it names, and keeps the links', async () => {
    mkdirSync(join(dir, 'out'));
    const outer = join(dir, 'link.svg');
    symlinkSync('out/inner-link.svg', outer);
    symlinkSync('target.svg', join(dir, 'out', 'inner-link.svg'));
    await writeFileAtomically(outer, '<svg/>');
    expect(lstatSync(outer).isSymbolicLink()).toBe(true);
    expect(lstatSync(join(dir, 'out', 'inner-link.svg')).isSymbolicLink()).toBe(true);
    expect(lstatSync(join(dir, 'out', 'target.svg')).isFile()).toBe(true);
    expect(readFileSync(join(dir, 'out', 'target.svg'), 'utf8')).toBe('<svg/>');
    expect(readdirSync(dir).sort()).toEqual(['link.svg', 'out']);
    expect(readdirSync(join(dir, 'out')).sort()).toEqual(['inner-link.svg', 'target.svg']);
  });

  it('fails with ELOOP on a loop of symbolic links, leaving them as they were', async () => {
    symlinkSync('b.svg', join(dir, 'a.svg'));
    symlinkSync('a.svg', join(dir, 'b.svg'));
    await expect(writeFileAtomically(join(dir, 'a.svg'), 'x')).rejects.toMatchObject({ code: 'ELOOP' });
    expect(readdirSync(dir).sort()).toEqual(['a.svg', 'b.svg']);
    expect(lstatSync(join(dir, 'a.svg')).isSymbolicLink()).toBe(true);
  });

  it('writes into a FIFO in place instead of renaming a file over it', async () => {
    const fifo = join(dir, 'pipe');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const received = text(createReadStream(fifo));
    await writeFileAtomically(fifo, '<svg/>');
    expect(await received).toBe('<svg/>');
    expect(statSync(fifo).isFIFO()).toBe(true);
    expect(readdirSync(dir)).toEqual(['pipe']);
  });

  it('fails with the file system\'s error when a directory is in the way, leaving nothing behind', async () => {
    const path = join(dir, 'map.svg');
    mkdirSync(path);
    await expect(writeFileAtomically(path, 'x')).rejects.toMatchObject({ code: 'EISDIR' });
    expect(readdirSync(dir)).toEqual(['map.svg']);
  });
});

describe('writeOutputFile', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'netintel-output-file-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('fails with output_failed naming the file and the reason when the directory is missing', async () => {
    const path = join(dir, 'no-such-dir', 'map.svg');
    const failure = await writeOutputFile(path, 'x', 'the map').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(NetintelError);
    expect((failure as NetintelError).code).toBe('output_failed');
    expect((failure as NetintelError).message).toBe(`cannot write the map to ${path}: ENOENT (check that the directory exists and is writable, and the disk has room)`);
  });

  it('writes the file whole', async () => {
    const path = join(dir, 'map.svg');
    await writeOutputFile(path, '<svg/>', 'the map');
    expect(readFileSync(path, 'utf8')).toBe('<svg/>');
    expect(statSync(path).mode & 0o777).toBe(0o666 & ~process.umask());
  });
});
