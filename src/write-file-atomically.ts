import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Writes a whole file the way a reader can trust: into a temporary file
 * beside it (created new, with `mode`), flushed to disk, then renamed over
 * the target. A reader (a cron job's next step, a mail viewer) sees the old
 * file or the new one, never half of one. On failure (full disk, no
 * permission, a directory in the way) the temporary file is removed and the
 * file system's error is thrown for the caller to word.
 */
export async function writeFileAtomically(path: string, content: string | Uint8Array, mode = 0o644): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const file = await open(temporary, 'wx', mode);
    try {
      await file.writeFile(content);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => {});
    throw error;
  }
}
