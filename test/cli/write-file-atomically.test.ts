import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileAtomically } from '../../src/cli/write-file-atomically.js';
import { NetintelError } from '../../src/errors.js';

describe('writeFileAtomically', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'netintel-atomic-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('replaces an existing file whole and leaves nothing else behind', async () => {
    const path = join(dir, 'map.svg');
    writeFileSync(path, 'old');
    await writeFileAtomically(path, '<svg/>', 'the map');
    expect(readFileSync(path, 'utf8')).toBe('<svg/>');
    expect(readdirSync(dir)).toEqual(['map.svg']);
  });

  it('fails with output_failed naming the file when the directory is missing', async () => {
    const path = join(dir, 'no-such-dir', 'map.svg');
    const failure = await writeFileAtomically(path, 'x', 'the map').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(NetintelError);
    expect((failure as NetintelError).code).toBe('output_failed');
    expect((failure as NetintelError).message).toBe(`cannot write the map to ${path}: ENOENT (check that the directory exists and is writable, and the disk has room)`);
  });

  it('removes its temporary file when the final rename fails (the target is a directory)', async () => {
    const path = join(dir, 'map.svg');
    mkdirSync(path);
    await expect(writeFileAtomically(path, 'x', 'the map')).rejects.toMatchObject({ code: 'output_failed', message: expect.stringContaining('EISDIR') });
    expect(readdirSync(dir)).toEqual(['map.svg']);
  });
});
