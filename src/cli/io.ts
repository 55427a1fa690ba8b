import type { Readable, Writable } from 'node:stream';

/**
 * The process surface a command may touch. `bin/netintel.js` passes the real
 * process streams; tests pass memory streams and a fixed environment.
 */
export interface CliIo {
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
  env: Readonly<Record<string, string | undefined>>;
}

/** Raised when the reader of stdout went away (`| head`): the run stops quietly. */
export class OutputClosed extends Error {
  constructor() {
    super('output closed');
  }
}

/**
 * Writes to a stream with backpressure: resolves at once while the stream
 * buffers, waits for 'drain' when it is full. A closed pipe (EPIPE) becomes
 * OutputClosed so the run ends quietly.
 */
export function createSink(stream: Writable): { write(chunk: string): Promise<void> | void; closed(): boolean } {
  let closed = false;
  let failure: Error | null = null;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    closed = true;
    if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') failure = error;
  });
  return {
    write(chunk: string) {
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
    closed: () => closed,
  };
}
