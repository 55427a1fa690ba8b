import { readFileSync, openSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FdOutput, suitsFdOutput } from '../../src/cli/fd-output.js';
import { createSink } from '../../src/cli/io.js';
import { spawnCli, tempDir } from '../support/cli.js';

describe('FdOutput: stdout and stderr written with write(2)', () => {
  /** What `write` writes through an FdOutput on a new file. */
  function writtenFile(write: (output: FdOutput) => void): string {
    const dir = tempDir();
    try {
      const path = join(dir.path, 'out.txt');
      const fd = openSync(path, 'w');
      write(new FdOutput(fd));
      closeSync(fd);
      return readFileSync(path, 'utf8');
    } finally {
      dir.remove();
    }
  }

  it('writes every byte of text and binary chunks, in order, to a file', () => {
    const big = 'x'.repeat(200_000);
    const text = writtenFile((output) => {
      expect(output.write('héllo ')).toBe(true);
      output.write(Buffer.from('wörld\n'));
      output.write(big);
    });
    expect(text).toBe(`héllo wörld\n${big}`);
  });

  it('writes text chunks of every size in order, a short one after a long one leaving nothing of it behind', () => {
    const chunks = ['a'.repeat(70_000), 'b', 'é😀東'.repeat(30_000), 'c'.repeat(400_000), 'ü', 'd'.repeat(10)];
    const text = writtenFile((output) => {
      for (const chunk of chunks) output.write(chunk);
    });
    expect(text).toBe(chunks.join(''));
  });

  it('reports a failed write as an error event with the system code, and writes nothing after it', async () => {
    const dir = tempDir();
    try {
      const fd = openSync(join(dir.path, 'gone.txt'), 'w');
      closeSync(fd);
      const output = new FdOutput(fd);
      const sink = createSink(output);
      const failure = new Promise<NodeJS.ErrnoException>((resolve) => output.on('error', resolve));
      sink.write('lost');
      expect((await failure).code).toBe('EBADF');
      expect(() => sink.write('more')).toThrow();
    } finally {
      dir.remove();
    }
  });

  it('is chosen for files and /dev/null, not for an unknown descriptor', () => {
    const dir = tempDir();
    try {
      const file = openSync(join(dir.path, 'f'), 'w');
      const devNull = openSync('/dev/null', 'w');
      expect(suitsFdOutput(file)).toBe(true);
      expect(suitsFdOutput(devNull)).toBe(true);
      closeSync(file);
      closeSync(devNull);
      expect(suitsFdOutput(file)).toBe(false);
    } finally {
      dir.remove();
    }
  });

  it('carries a large output through a pipe completely and in order, far more than a pipe buffer holds', async () => {
    const targets = Array.from({ length: 20_000 }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    const result = await spawnCli(['ip', '-f', 'ndjson'], { input: targets.join('\n') });
    expect(result.code).toBe(0);
    const rows = result.stdout.trimEnd().split('\n').map((line) => (JSON.parse(line) as { ip: string }).ip);
    expect(rows).toEqual(targets);
  });
});
