import type { OutputStream } from './io.js';

/**
 * An output stream that never lets a write error escape as an exception or
 * an unhandled 'error' event, and remembers it instead: a reader that went
 * away (EPIPE) closes it quietly; any other error (ENOSPC on a full disk,
 * EIO, EBADF) is kept as `failure`, which the end of the run reports as one
 * `netintel: cannot write to stdout: ...` line and the `output_failed` exit
 * code (run-guard.ts). Either way nothing more is written. `transform`
 * rewrites text on its way (stderr's visible escapes).
 */
export class GuardedOutput implements OutputStream {
  /** The first write error other than a closed reader, if any. */
  failure: NodeJS.ErrnoException | null = null;
  /** True once a write failed or the reader went away. */
  closed = false;

  private opened: OutputStream | null = null;

  /**
   * `open` gives the stream on first use: Node makes process.stdout and
   * process.stderr when they are first read, and a pipe's or a terminal's
   * stream loads node:net and the stream modules, a sixth of a one-off
   * lookup's own start-up, for a stderr that a run without a diagnostic
   * never writes.
   */
  constructor(
    private readonly open: () => OutputStream,
    private readonly transform: ((text: string) => string) | null = null,
  ) {}

  private get inner(): OutputStream {
    if (this.opened === null) {
      this.opened = this.open();
      this.opened.on('error', (error) => this.record(error));
    }
    return this.opened;
  }

  get isTTY(): boolean | undefined {
    return this.inner.isTTY;
  }

  /** The terminal's width, when the stream is a terminal. */
  get columns(): number | undefined {
    return this.inner.columns;
  }

  write(chunk: string | Uint8Array): boolean {
    if (this.closed) return true;
    try {
      return this.inner.write(this.transform !== null && typeof chunk === 'string' ? this.transform(chunk) : chunk);
    } catch (error) {
      this.record(error as NodeJS.ErrnoException);
      return true;
    }
  }

  on(event: 'error', listener: (error: NodeJS.ErrnoException) => void): this;
  on(event: 'drain' | 'close', listener: () => void): this;
  on(event: string, listener: (...args: any[]) => void): this {
    this.inner.on(event as 'error', listener);
    return this;
  }

  off(event: 'error', listener: (error: NodeJS.ErrnoException) => void): this;
  off(event: 'drain' | 'close', listener: () => void): this;
  off(event: string, listener: (...args: any[]) => void): this {
    this.inner.off(event as 'error', listener);
    return this;
  }

  private record(error: NodeJS.ErrnoException): void {
    this.closed = true;
    if (!isClosedReader(error)) this.failure ??= error;
  }
}

/** The reader went away (`| head`): the quiet end of a run, not a failure. */
export function isClosedReader(error: NodeJS.ErrnoException): boolean {
  return error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED';
}
