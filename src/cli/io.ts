import { fstatSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { NetintelError } from '../errors.js';
import { isClosedReader } from './guarded-output.js';

/**
 * The part of a Writable the CLI writes through: process.stdout and
 * process.stderr, memory streams in tests.
 */
export interface OutputStream {
  write(chunk: string | Uint8Array): boolean;
  on(event: 'error', listener: (error: NodeJS.ErrnoException) => void): unknown;
  on(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'error', listener: (error: NodeJS.ErrnoException) => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
  isTTY?: boolean;
  /** The terminal's width, when the stream is a terminal. */
  columns?: number;
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
 * stdout and stderr are Node's streams.
 */
export function createProcessIo(): CliIo {
  let piped: boolean | undefined;
  return {
    get stdin() {
      return process.stdin;
    },
    get stdinPiped() {
      return (piped ??= isPipedInput());
    },
    get stdout() {
      return process.stdout;
    },
    get stderr() {
      return process.stderr;
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

/** A pipe (FIFO or socket) or a regular file on stdin. */
function isPipedInput(): boolean {
  try {
    const stat = fstatSync(0);
    return stat.isFIFO() || stat.isFile() || stat.isSocket();
  } catch {
    return false;
  }
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
      // Full: wait for room, or for the failure or close that ends the writing.
      return new Promise<void>((resolve, reject) => {
        const done = () => {
          stream.off('drain', done);
          stream.off('close', onClose);
          stream.off('error', done);
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
        // After `record`, which was listening first.
        stream.on('error', done);
      });
    },
    closed: () => closed,
  };
}

/** What createSink gives. */
export interface OutputSink {
  write(chunk: string | Uint8Array): Promise<void> | void;
  closed(): boolean;
}
