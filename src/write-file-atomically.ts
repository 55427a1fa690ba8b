import { randomBytes } from 'node:crypto';
import { open, realpath, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Writes a whole file the way a reader can trust: into a temporary file
 * beside it (created new, with `mode`), flushed to disk, then renamed over
 * the target. A reader (a cron job's next step, a mail viewer) sees the old
 * file or the new one, never half of one. On failure (full disk, no
 * permission, a directory in the way) the temporary file is removed and the
 * file system's error is thrown for the caller to word.
 *
 * `check` reads the written temporary file before it takes the target's
 * place (a compiled index opened and verified): if it throws, the target is
 * left as it was.
 *
 * A symbolic link is followed, so the file it names is replaced and the
 * link kept. A target that is not a regular file (`/dev/stdout`, a FIFO, a
 * device) is written in place: there is no file to replace, and a rename
 * would put a file where the device was.
 */
export interface AtomicWriteOptions {
  /** The new file's permissions (default 0o644). */
  mode?: number;
  /** Reads the written temporary file before the rename; throwing keeps the old file. */
  check?: (written: string) => void | Promise<void>;
}

export async function writeFileAtomically(path: string, content: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const { mode = 0o644, check } = options;
  const target = await realpath(path).catch(() => path);
  const existing = await stat(target).catch(() => null);
  if (existing !== null && !existing.isFile()) {
    await writeFile(target, content);
    return;
  }
  const temporary = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const file = await open(temporary, 'wx', mode);
    try {
      await file.writeFile(content);
      await file.sync();
    } finally {
      await file.close();
    }
    await check?.(temporary);
    await rename(temporary, target);
  } catch (error) {
    await unlink(temporary).catch(() => {});
    throw error;
  }
}
