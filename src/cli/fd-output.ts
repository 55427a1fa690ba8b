import { fstatSync, statSync, write, writeSync, type Stats } from 'node:fs';

// Listener arguments are whatever the event carries, as for an EventEmitter.
type Listener = (...args: any[]) => void;

/** A short pause without a timer: the writer is synchronous by design. */
const pauseCell = new Int32Array(new SharedArrayBuffer(4));
const EAGAIN_PAUSE_MS = 1;

/**
 * Standard output or error written with write(2) on the file descriptor,
 * for pipes, sockets, files and /dev/null. Node's process.stdout loads its stream
 * and socket machinery first (about a fifth of a one-off lookup's run time,
 * bench/profile-startup.js); a CLI that prints a few lines and exits does
 * not need it. Writes are synchronous, as Node's own stdout is for pipes
 * and files on Linux, so there is no buffering and nothing to drain: a
 * slow reader slows the writer, like any Unix filter.
 *
 * The surface is the part of a Writable the CLI uses (write, on/off/once
 * for 'error', 'drain', 'close'); a reader that went away (EPIPE) is an
 * 'error' event with that code, which the CLI's sinks turn into a quiet end.
 * A bulk run writes its batches with `writeInBackground` instead, so that
 * the next batch is rendered while one is written.
 */
export class FdOutput {
  readonly isTTY = false;
  readonly writesSynchronously = true;
  private readonly listeners = new Map<string, Listener[]>();
  private closed = false;

  constructor(private readonly fd: number) {}

  write(chunk: string | Uint8Array, encodingOrCallback?: unknown, callback?: unknown): boolean {
    const done = typeof encodingOrCallback === 'function' ? encodingOrCallback : callback;
    if (!this.closed) {
      try {
        this.writeAll(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
      } catch (error) {
        this.closed = true;
        this.fail(error as NodeJS.ErrnoException);
      }
    }
    if (typeof done === 'function') process.nextTick(done as () => void);
    return true;
  }

  /**
   * Writes all of `bytes` on a libuv thread and resolves when they are
   * written, or rejects with the write's error (EPIPE: the reader went
   * away), after which nothing more is written. Until it settles the caller
   * must neither change the bytes nor write anything else.
   */
  writeInBackground(bytes: Uint8Array): Promise<void> {
    if (this.closed) return Promise.reject(Object.assign(new Error('write after a failed write'), { code: 'EPIPE' }));
    return new Promise<void>((resolve, reject) => {
      const from = (offset: number): void => {
        write(this.fd, bytes, offset, bytes.length - offset, null, (error, written) => {
          // A descriptor some other process left non-blocking: wait for room.
          if (error?.code === 'EAGAIN') return void setTimeout(from, EAGAIN_PAUSE_MS, offset);
          if (error) {
            this.closed = true;
            return reject(error);
          }
          if (offset + written < bytes.length) from(offset + written);
          else resolve();
        });
      };
      if (bytes.length === 0) resolve();
      else from(0);
    });
  }

  end(chunk?: string | Uint8Array): this {
    if (chunk !== undefined) this.write(chunk);
    return this;
  }

  on(event: string, listener: Listener): this {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
    return this;
  }

  addListener(event: string, listener: Listener): this {
    return this.on(event, listener);
  }

  once(event: string, listener: Listener): this {
    const wrapped: Listener = (...args) => {
      this.off(event, wrapped);
      listener(...args);
    };
    return this.on(event, wrapped);
  }

  off(event: string, listener: Listener): this {
    this.listeners.set(event, (this.listeners.get(event) ?? []).filter((known) => known !== listener));
    return this;
  }

  removeListener(event: string, listener: Listener): this {
    return this.off(event, listener);
  }

  private writeAll(bytes: Uint8Array): void {
    let offset = 0;
    while (offset < bytes.length) {
      try {
        offset += writeSync(this.fd, bytes, offset, bytes.length - offset);
      } catch (error) {
        // A descriptor some other process left non-blocking: wait for room.
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
        Atomics.wait(pauseCell, 0, 0, EAGAIN_PAUSE_MS);
      }
    }
  }

  /** Reports a failed write the way a stream does: an 'error' event on the next tick. */
  private fail(error: NodeJS.ErrnoException): void {
    process.nextTick(() => {
      const listeners = this.listeners.get('error') ?? [];
      if (listeners.length === 0) {
        if (error.code === 'EPIPE') return; // nobody reads any more: nothing to say
        throw error;
      }
      for (const listener of listeners) listener(error);
    });
  }
}

/**
 * Whether `fd` can be written with FdOutput: a pipe (a FIFO, or the socket
 * pair a parent process such as Node's spawn() uses), a regular file or
 * /dev/null. Terminals keep Node's stream (it knows their width and
 * colours), and so does anything unknown.
 */
export function suitsFdOutput(fd: number): boolean {
  const stat = fdStat(fd);
  if (stat === null) return false;
  return isPipeOrFile(stat) || (stat.isCharacterDevice() && stat.rdev === statSync('/dev/null').rdev);
}

/** A pipe (FIFO or socket) or a regular file: what a list is read from, and what FdOutput writes to. */
export function isPipeOrFile(stat: Stats): boolean {
  return stat.isFIFO() || stat.isFile() || stat.isSocket();
}

/** fstat(2) of `fd`, or null when it is not open. */
export function fdStat(fd: number): Stats | null {
  try {
    return fstatSync(fd);
  } catch {
    return null;
  }
}
