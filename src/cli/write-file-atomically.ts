import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { NetintelError } from '../errors.js';

/**
 * Writes a whole output file the way a reader can trust: into a temporary
 * file beside it, flushed to disk, then renamed over the target. A reader
 * (or a cron job's next step) sees the old file or the new one, never half
 * of one, and a failed write (full disk, no permission) leaves no debris.
 */
export async function writeFileAtomically(path: string, content: string | Uint8Array, what: string): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const file = await open(temporary, 'wx', 0o644);
    try {
      await file.writeFile(content);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => {});
    const reason = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
    throw new NetintelError('output_failed', `cannot write ${what} to ${path}: ${reason} (check that the directory exists and is writable, and the disk has room)`, {
      details: { path },
    });
  }
}
