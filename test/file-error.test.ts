/**
 * The reason of a file error in words (fileErrorReason), over Node's own
 * errors: real ones, made by opening missing paths (whatever their names
 * hold: quotes, commas, the words of Node's own text), directories, paths
 * under a file, names too long, files without read permission, renames
 * with two paths; and over anything else, which keeps its message.
 */
import { chmodSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { fileErrorReason } from '../src/file-error.js';
import { tempDir } from './support/cli.js';

const scratch = tempDir('netintel-file-error-');
afterAll(() => scratch.remove());

/** The error `action` throws (it must throw one). */
function thrown(action: () => unknown): NodeJS.ErrnoException {
  try {
    action();
  } catch (error) {
    return error as NodeJS.ErrnoException;
  }
  throw new Error('expected an error, nothing was thrown');
}

/** A file name as a user may give one: any characters but the separator and NUL, and Node's own words. */
const fileName = fc.oneof(
  // Within the 255 bytes a name may have, so that the path is missing, not too long.
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).filter((name) => !/[/\0]/.test(name) && name !== '.' && name !== '..' && Buffer.byteLength(name) <= 200),
  fc.constantFrom("a, open 'b'", "ENOENT: no such file or directory, open 'x'", "it's", 'a -> b', "'", ', open'),
);

/** The reason the property expects: Node's text between the code and the call. */
function checkReason(error: NodeJS.ErrnoException): string {
  const reason = fileErrorReason(error);
  expect(reason.length).toBeGreaterThan(0);
  expect(reason).toMatch(/^[a-z][a-z ,'-]*$/);
  expect(error.message.startsWith(`${error.code}: ${reason}, ${error.syscall}`)).toBe(true);
  return reason;
}

describe("fileErrorReason over Node's own errors", () => {
  it('gives "no such file or directory" for a missing path of any name', () => {
    fc.assert(
      fc.property(fileName, (name) => {
        const missing = join(scratch.path, 'missing', name);
        expect(checkReason(thrown(() => readFileSync(missing)))).toBe('no such file or directory');
        expect(checkReason(thrown(() => openSync(missing, 'r')))).toBe('no such file or directory');
      }),
      { numRuns: 200 },
    );
  });

  it('gives the reason alone for a directory, a path under a file, a name too long, an existing directory made again and a rename of two paths', () => {
    const directory = join(scratch.path, 'a directory, open');
    mkdirSync(directory);
    const file = join(scratch.path, "it's a file");
    writeFileSync(file, 'x');
    expect(checkReason(thrown(() => readFileSync(directory)))).toBe('illegal operation on a directory');
    expect(checkReason(thrown(() => openSync(join(file, 'below'), 'r')))).toBe('not a directory');
    expect(checkReason(thrown(() => openSync(join(scratch.path, 'n'.repeat(300)), 'r')))).toBe('name too long');
    expect(checkReason(thrown(() => mkdirSync(directory)))).toBe('file already exists');
    const rename = thrown(() => renameSync(join(scratch.path, 'gone'), join(scratch.path, 'there')));
    expect(rename.dest).toBeDefined();
    expect(checkReason(rename)).toBe('no such file or directory');
  });

  it('gives "permission denied" for a file that cannot be read (where the permission is enforced)', () => {
    const locked = join(scratch.path, 'locked');
    writeFileSync(locked, 'x');
    chmodSync(locked, 0o000);
    let error: NodeJS.ErrnoException | null = null;
    try {
      readFileSync(locked);
    } catch (caught) {
      error = caught as NodeJS.ErrnoException;
    }
    // The superuser reads it anyway: then there is no error to word.
    if (error !== null) expect(checkReason(error)).toBe('permission denied');
  });

  it('words the errors of the promise API alike', async () => {
    const error = await readFile(join(scratch.path, 'missing.log')).then(
      () => null,
      (caught: unknown) => caught as NodeJS.ErrnoException,
    );
    expect(checkReason(error!)).toBe('no such file or directory');
  });
});

describe('fileErrorReason over anything else', () => {
  it('gives the message of an error that is not a system error, and the text of a value that is no error', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        expect(fileErrorReason(new Error(text))).toBe(text);
        expect(fileErrorReason(text)).toBe(text);
      }),
    );
  });

  it('gives the whole message of a system error whose message is not in Node\'s form', () => {
    fc.assert(
      fc.property(fc.string(), fc.constantFrom('ENOENT', 'EACCES', 'EISDIR'), fc.constantFrom('open', 'read', 'stat'), (text, code, syscall) => {
        const error = Object.assign(new Error(text), { code, syscall });
        const reason = fileErrorReason(error);
        // Only Node's exact form is cut: `CODE: reason, syscall`, with a reason.
        if (text.startsWith(`${code}: `) && text.endsWith(`, ${syscall}`) && text.length > code.length + syscall.length + 4) {
          expect(`${code}: ${reason}, ${syscall}`).toBe(text);
        } else {
          expect(reason).toBe(text);
        }
      }),
    );
  });
});
