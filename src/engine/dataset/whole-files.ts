import { closeSync, fstatSync, openSync, readSync, type Stats } from 'node:fs';

/**
 * Datasets read whole (the in-memory mode of bulk runs), read into shared
 * memory. A bulk run's worker threads adopt the main thread's copies
 * instead of reading their own: every thread walks the same bytes, and a
 * second thread costs no second copy of a 63 MB database. A copy is used
 * only for the file it was read from, unchanged (same inode, size and
 * modification time): `netintel data update` replaces files by renaming,
 * so an updated dataset is always read afresh.
 */
export interface WholeFile {
  identity: string;
  memory: SharedArrayBuffer;
}

/** The latest copy read in this thread, by path: what worker threads get. */
const readHere = new Map<string, WholeFile>();
/** Copies another thread read, by path. */
const adopted = new Map<string, WholeFile>();

function identityOf(stats: Stats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}`;
}

/** The whole file as a Buffer over shared memory: an adopted copy of this very file, else read now. */
export function readWholeFile(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    const stats = fstatSync(fd);
    const identity = identityOf(stats);
    const copy = adopted.get(path);
    if (copy !== undefined && copy.identity === identity) return Buffer.from(copy.memory);
    const memory = new SharedArrayBuffer(stats.size);
    const target = Buffer.from(memory);
    for (let done = 0; done < stats.size; ) {
      const n = readSync(fd, target, done, stats.size - done, done);
      if (n === 0) throw Object.assign(new Error(`${path} ended after ${done} of ${stats.size} bytes`), { code: 'EIO' });
      done += n;
    }
    readHere.set(path, { identity, memory });
    return target;
  } finally {
    closeSync(fd);
  }
}

/** The files this thread has read whole, to hand to worker threads. */
export function wholeFilesRead(): ReadonlyMap<string, WholeFile> {
  return readHere;
}

/** Takes the copies another thread read (see {@link wholeFilesRead}) for files this thread reads whole. */
export function adoptWholeFiles(files: ReadonlyMap<string, WholeFile>): void {
  for (const [path, file] of files) adopted.set(path, file);
}
