import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { byteSizeText } from './byte-size.js';
import { NetintelError } from './errors.js';

/** What a bounded read accepts, and the words its errors use. */
export interface BoundedFileOptions {
  /** The largest content accepted, in bytes. */
  maxBytes: number;
  /** What the file is, for messages: `trust anchor file`. */
  what: string;
  /** What the user should give instead, ending each message: `give a file of DS or DNSKEY records to --trust-anchor`. */
  hint: string;
  /** How long a pipe or FIFO may stay silent before the read gives up, in milliseconds (10 000 by default). */
  idleMs?: number;
}

const CHUNK_BYTES = 64 * 1024;
const DEFAULT_IDLE_MS = 10_000;
const POLL_MS = 10;

/**
 * Reads a file named on the command line, refusing one larger than
 * `maxBytes` without reading more than `maxBytes + 1` bytes of it, so
 * `/dev/zero`, `/dev/urandom` or a runaway file cost no more memory than the
 * limit. A regular file whose size is already over the limit is refused
 * before any read.
 *
 * The file is opened non-blocking, so opening never waits: a pipe
 * (`<(command)`, `/dev/stdin`) and a named FIFO are read as their data comes,
 * and a named FIFO whose writer has not come yet is waited for, each for as
 * long as nothing stays silent for `idleMs`; then the read fails instead of
 * hanging.
 *
 * @returns the bytes read, at most `maxBytes`.
 * @throws NetintelError `usage`, one line naming the file: it cannot be
 *   opened or read (the errno code), it is larger than the limit (naming the
 *   limit; `details.limit_bytes`), or a pipe stayed silent for `idleMs`.
 */
export function readBoundedFileSync(path: string, options: BoundedFileOptions): Buffer {
  const { maxBytes, what, hint } = options;
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  const fail = (message: string, extra: Record<string, unknown> = {}): NetintelError =>
    new NetintelError('usage', message, { details: { path, ...extra } });
  const tooLarge = (): NetintelError =>
    fail(`the ${what} ${path} is larger than the limit of ${describeBytes(maxBytes)}; ${hint}`, { limit_bytes: maxBytes });
  const unreadable = (error: unknown): NetintelError =>
    fail(`cannot read the ${what} ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)}: ${hint})`);

  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw unreadable(error);
  }
  try {
    const stats = fstatSync(fd);
    if (stats.isFile() && stats.size > maxBytes) throw tooLarge();
    // A named FIFO reads as at its end until a writer opens it; a pipe's end is its end.
    let awaitingWriter = stats.isFIFO() && isNamedFifo(path);
    const chunks: Buffer[] = [];
    let total = 0;
    let silentSince: number | null = null;
    const waitForData = (): void => {
      silentSince ??= Date.now();
      if (Date.now() - silentSince >= idleMs) throw fail(`nothing came from the ${what} ${path} for ${idleMs / 1000} s; ${hint}`);
      Atomics.wait(SLEEPER, 0, 0, POLL_MS);
    };
    let chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, maxBytes + 1));
    for (;;) {
      let read: number;
      try {
        read = readSync(fd, chunk, 0, Math.min(chunk.length, maxBytes + 1 - total), null);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw unreadable(error);
        // A writer is there and has not written yet.
        awaitingWriter = false;
        waitForData();
        continue;
      }
      if (read === 0 && !awaitingWriter) break;
      if (read === 0) {
        waitForData();
        continue;
      }
      awaitingWriter = false;
      silentSince = null;
      chunks.push(chunk.subarray(0, read));
      chunk = chunk.subarray(read).length > 0 ? chunk.subarray(read) : Buffer.allocUnsafe(Math.min(CHUNK_BYTES, maxBytes + 1));
      total += read;
      if (total > maxBytes) throw tooLarge();
    }
    return Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}

const SLEEPER = new Int32Array(new SharedArrayBuffer(4));

/** True when `path` leads to a FIFO in the file system (mkfifo), not to an anonymous pipe (`/dev/fd/N`, `/dev/stdin`). */
function isNamedFifo(path: string): boolean {
  try {
    return lstatSync(realpathSync(path)).isFIFO();
  } catch {
    return false;
  }
}

/** `1 MiB (1048576 bytes)`, `64 KiB (65536 bytes)`, `1000 bytes`. */
function describeBytes(bytes: number): string {
  const text = byteSizeText(bytes);
  return text.endsWith(' bytes') ? text : `${text} (${bytes} bytes)`;
}
