/**
 * The one way the binary dataset readers (mmdb, ASN index, signal index)
 * reach their files:
 *
 * - `pread`: keeps a file descriptor and reads only the bytes asked for, with
 *   positioned reads. For one-off lookups, which need a few KiB of a file of
 *   tens of MB.
 * - `memory`: reads the whole file once (through {@link readWholeFile}, so a
 *   bulk run's worker threads share one copy); reads are then views of it.
 *
 * Every failure to reach the bytes (missing file, I/O error, a file shorter
 * than a read needs, a file that shrank since it was opened) becomes a
 * `data_unavailable` error naming the file, here and nowhere else. Whether the
 * bytes make sense is the reader's business.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { NetintelError } from '../../errors.js';
import { readWholeFile } from './whole-files.js';

/** How a {@link DataFile} reaches its bytes: positioned reads, or one Buffer holding the file. */
export type DataFileMode = 'pread' | 'memory';

/** How a {@link DataFile}'s errors name the file. */
export interface DataFileNames {
  /** What the file is, as messages call it: `MaxMind DB file`, `ASN index`. */
  kind: string;
  /** What a user can do about a missing or unreadable file, appended to the message. */
  remedy?: string;
}

/** An open data file. */
export interface DataFile {
  readonly path: string;
  readonly mode: DataFileMode;
  /** Size of the file in bytes, as it was when opened. */
  readonly size: number;
  /**
   * Exactly `length` bytes at file `position`. In `pread` mode a buffer of
   * their own; in `memory` mode a view of the loaded file (do not write to it).
   *
   * @throws NetintelError `data_unavailable` (details.path) when the bytes lie
   *   past the end of the file or cannot be read; `internal` for a negative or
   *   fractional position or length, or after {@link DataFile.close}.
   */
  read(position: number, length: number): Buffer;
  /**
   * The whole file. In `memory` mode the loaded copy; in `pread` mode read now,
   * not kept (for a one-time full check such as an index's `verify`).
   *
   * @throws NetintelError as {@link DataFile.read}.
   */
  whole(): Buffer;
  /** Releases the descriptor or the loaded copy; later reads throw `internal`. Idempotent. */
  close(): void;
}

/**
 * Opens a data file: `pread` mode opens a descriptor and reads nothing yet,
 * `memory` mode reads the whole file now.
 *
 * @throws NetintelError `data_unavailable` (details.path) when the file is
 *   missing, not a regular file, or cannot be read.
 */
export function openDataFile(path: string, mode: DataFileMode, names: DataFileNames): DataFile {
  if (mode === 'memory') {
    let bytes: Buffer;
    try {
      bytes = readWholeFile(path);
    } catch (error) {
      throw unreadable(path, names, error);
    }
    return new Reader(path, names, 'memory', bytes.length, -1, bytes);
  }
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    throw unreadable(path, names, error);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'EISDIR' });
    return new Reader(path, names, 'pread', stat.size, fd, null);
  } catch (error) {
    closeSync(fd);
    throw unreadable(path, names, error);
  }
}

/**
 * A `memory`-mode data file over bytes already held (an index compiled in
 * this process, before it is written), so that it reads like an opened one.
 */
export function dataFileOfBytes(path: string, bytes: Uint8Array, names: DataFileNames): DataFile {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return new Reader(path, names, 'memory', buffer.length, -1, buffer);
}

class Reader implements DataFile {
  private closed = false;

  constructor(
    readonly path: string,
    private readonly names: DataFileNames,
    readonly mode: DataFileMode,
    readonly size: number,
    private readonly fd: number,
    private bytes: Buffer | null,
  ) {}

  read(position: number, length: number): Buffer {
    if (this.closed) {
      throw new NetintelError('internal', `${this.names.kind} ${this.path} is already closed`, { details: { path: this.path } });
    }
    if (!Number.isSafeInteger(position) || !Number.isSafeInteger(length) || position < 0 || length < 0) {
      throw new NetintelError('internal', `a read of ${length} bytes at byte ${position} of ${this.path}`, {
        details: { path: this.path },
      });
    }
    if (position + length > this.size) throw this.truncated(position, length);
    if (this.bytes !== null) return this.bytes.subarray(position, position + length);
    const target = Buffer.allocUnsafe(length);
    // A positioned read may return fewer bytes than asked (a signal, a network
    // file system); 0 means the file now ends before the bytes asked for.
    for (let done = 0; done < length; ) {
      let n: number;
      try {
        n = readSync(this.fd, target, done, length - done, position + done);
      } catch (error) {
        throw unreadable(this.path, this.names, error);
      }
      if (n === 0) throw this.truncated(position, length);
      done += n;
    }
    return target;
  }

  whole(): Buffer {
    return this.read(0, this.size);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.bytes = null;
    if (this.fd >= 0) closeSync(this.fd);
  }

  private truncated(position: number, length: number): NetintelError {
    return new NetintelError(
      'data_unavailable',
      `${this.names.kind} ${this.path} is truncated: it ends before the ${length} bytes at byte ${position}${remedyOf(this.names)}`,
      { details: { path: this.path } },
    );
  }
}

function unreadable(path: string, names: DataFileNames, error: unknown): NetintelError {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const message =
    code === 'ENOENT'
      ? `${names.kind} ${path} does not exist`
      : `${names.kind} ${path} cannot be read (${code ?? (error instanceof Error ? error.message : String(error))})`;
  return new NetintelError('data_unavailable', message + remedyOf(names), { cause: error, details: { path } });
}

function remedyOf(names: DataFileNames): string {
  return names.remedy === undefined ? '' : `; ${names.remedy}`;
}
