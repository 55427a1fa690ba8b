import type { Readable } from 'node:stream';
import { NetintelError } from '../errors.js';
import { FdOutput, fdStat, isPipeOrFile, suitsFdOutput } from './fd-output.js';
import { isClosedReader } from './guarded-output.js';

/**
 * The part of a Writable the CLI writes through: process.stdout and
 * process.stderr, memory streams in tests, and FdOutput.
 */
export interface OutputStream {
  write(chunk: string | Uint8Array): boolean;
  on(event: 'error', listener: (error: NodeJS.ErrnoException) => void): unknown;
  on(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'error', listener: (error: NodeJS.ErrnoException) => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
  isTTY?: boolean;
  columns?: number; // the terminal's width, when stdout is one
  /** True when `write` is done with the chunk by the time it returns (nothing is queued). */
  readonly writesSynchronously?: boolean;
  /**
   * Writes bytes while the caller goes on (FdOutput): resolves once all
   * are written, rejects with the write's error. Nothing else may be
   * written, nor the bytes changed, until it settles.
   */
  writeInBackground?(bytes: Uint8Array): Promise<void>;
}

/**
 * The process surface a command may touch. `bin/netintel.js` passes the real
 * process (createProcessIo); tests pass memory streams and a fixed environment.
 */
export interface CliIo {
  stdin: Readable & { isTTY?: boolean };
  /**
   * Whether stdin brings a list (a pipe, a file, a socket). Unset: anything
   * but a terminal does (memory streams in tests).
   */
  readonly stdinPiped?: boolean;
  stdout: OutputStream;
  stderr: OutputStream;
  env: Readonly<Record<string, string | undefined>>;
}

/**
 * The real process surface. stdin is opened only when a command reads it
 * (an open stdin handle keeps the process waiting after a one-off lookup);
 * stdout and stderr are written with FdOutput when they are pipes or files,
 * and are Node's streams on a terminal.
 */
export function createProcessIo(): CliIo {
  let piped: boolean | undefined;
  let stdout: OutputStream | undefined;
  let stderr: OutputStream | undefined;
  // Each is looked at (fstat) on first use: a one-off lookup that prints
  // nothing on stderr does not pay for it.
  return {
    get stdin() {
      return process.stdin;
    },
    get stdinPiped() {
      return (piped ??= isPipedInput());
    },
    get stdout() {
      return (stdout ??= suitsFdOutput(1) ? new FdOutput(1) : process.stdout);
    },
    get stderr() {
      return (stderr ??= suitsFdOutput(2) ? new FdOutput(2) : process.stderr);
    },
    env: process.env,
  };
}

/**
 * True when targets are to be read from stdin. A terminal is not read (a
 * bare command would sit waiting for typed input), nor is /dev/null, the
 * stdin of cron jobs and services: `netintel ip` there looks up the
 * machine's public address instead of reading an empty list.
 */
export function stdinBringsList(io: CliIo): boolean {
  return io.stdinPiped ?? io.stdin.isTTY !== true;
}

function isPipedInput(): boolean {
  const stat = fdStat(0);
  return stat !== null && isPipeOrFile(stat);
}

/** Raised when the reader of stdout went away (`| head`): the run stops quietly. */
export class OutputClosed extends Error {
  constructor() {
    super('output closed');
  }
}

/**
 * The error a failed write of stdout ends the run with: `output_failed`
 * (exit 11), one line naming the system's reason (ENOSPC, EIO, ...).
 */
export function outputFailed(error: NodeJS.ErrnoException): NetintelError {
  return new NetintelError('output_failed', `cannot write to stdout: ${error.message}`, {
    cause: error,
    details: error.code === undefined ? {} : { code: error.code },
  });
}

/**
 * Writes to a stream with backpressure: resolves at once while the stream
 * buffers, waits for 'drain' when it is full. A closed pipe (EPIPE) becomes
 * OutputClosed so the run ends quietly; any other write error (a full disk)
 * becomes `output_failed`.
 */
export function createSink(stream: OutputStream): OutputSink {
  let closed = false;
  let failure: NetintelError | null = null;
  const record = (error: NodeJS.ErrnoException) => {
    closed = true;
    if (!isClosedReader(error)) failure ??= outputFailed(error);
  };
  stream.on('error', record);
  return {
    write(chunk: string | Uint8Array) {
      if (failure) throw failure;
      if (closed) throw new OutputClosed();
      if (chunk.length === 0) return;
      if (stream.write(chunk)) return;
      return new Promise<void>((resolve, reject) => {
        const done = () => {
          stream.off('drain', done);
          stream.off('close', onClose);
          if (failure) reject(failure);
          else if (closed) reject(new OutputClosed());
          else resolve();
        };
        const onClose = () => {
          closed = true;
          done();
        };
        stream.on('drain', done);
        stream.on('close', onClose);
      });
    },
    writeInBackground: stream.writeInBackground
      ? async (bytes: Uint8Array) => {
          if (failure) throw failure;
          if (closed) throw new OutputClosed();
          try {
            await stream.writeInBackground!(bytes);
          } catch (error) {
            record(error as NodeJS.ErrnoException);
            throw failure ?? new OutputClosed();
          }
        }
      : null,
    closed: () => closed,
  };
}

/** What createSink gives. */
export interface OutputSink {
  write(chunk: string | Uint8Array): Promise<void> | void;
  /** The stream's writeInBackground, with a closed pipe as OutputClosed; null when the stream has none. */
  writeInBackground: ((bytes: Uint8Array) => Promise<void>) | null;
  closed(): boolean;
}
