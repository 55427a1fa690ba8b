import { randomBytes } from 'node:crypto';
import { open, readlink, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';

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
 * The new file keeps the permissions of the file it replaces (and, when
 * running as root, its owner and group), so a private file stays private;
 * a file that did not exist gets the default mode (0o666 less the umask,
 * as `fs.writeFile` gives). An explicit `mode` is used instead of either.
 *
 * A symbolic link is followed, so the file it names is replaced and the
 * link kept; a dangling link is followed too, creating the file it names
 * (at most 40 links in a row, the kernel's limit; more fail with ELOOP).
 * A target that is not a regular file (`/dev/stdout`, a FIFO, a
 * device) is written in place: there is no file to replace, and a rename
 * would put a file where the device was.
 */
export interface AtomicWriteOptions {
  /** The new file's permissions (default: the replaced file's, or 0o666 less the umask for a new file). */
  mode?: number;
  /** Reads the written temporary file before the rename; throwing keeps the old file. */
  check?: (written: string) => void | Promise<void>;
}

/** What a new file gets before the umask: read and write for all, as `fs.writeFile` asks. */
const DEFAULT_MODE = 0o666;

/** Symbolic links followed in a row before giving up, as the kernel does (MAXSYMLINKS, ELOOP). */
const MAX_LINKS = 40;

export async function writeFileAtomically(path: string, content: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const { mode, check } = options;
  const target = await linkTarget(path);
  const existing = await stat(target).catch(() => null);
  if (existing !== null && !existing.isFile()) {
    await writeFile(target, content);
    return;
  }
  const temporary = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    // Created with the default mode (the umask applies), or the one asked.
    const file = await open(temporary, 'wx', mode ?? DEFAULT_MODE);
    try {
      if (mode === undefined && existing !== null) {
        // The replaced file's owner, then its permissions whatever the umask (not set-id bits, which a write clears too).
        if (process.getuid?.() === 0 && (existing.uid !== 0 || existing.gid !== process.getgid?.())) await file.chown(existing.uid, existing.gid);
        await file.chmod(existing.mode & 0o777);
      }
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

/**
 * The file `path` names once its symbolic links are followed, each relative
 * to the directory of the link: an existing file, or the one a dangling link
 * names (to be created). A path that is not a link, or does not exist, is
 * itself. The directories on the way are left as written: the temporary file
 * goes beside the target through the same directories, on the same file system.
 */
async function linkTarget(path: string): Promise<string> {
  let current = path;
  for (let links = 0; links <= MAX_LINKS; links++) {
    let next: string;
    try {
      next = await readlink(current);
    } catch {
      // EINVAL: not a link; ENOENT: nothing there yet. Any other failure is met again, and worded, by the write.
      return current;
    }
    current = resolve(dirname(current), next);
  }
  throw Object.assign(new Error(`ELOOP: too many symbolic links encountered, open '${path}'`), { code: 'ELOOP', errno: -40, syscall: 'open', path });
}
