import type { Socket } from 'node:net';

/** What a STARTTLS preamble may read from a peer before the handshake: more is not a server of the protocol. */
export const MAX_PREAMBLE_BYTES = 64 * 1024;

/**
 * Bytes of a plain connection as they arrive, bounded in size and in time:
 * a STARTTLS preamble reads lines (or an XML stream, or a BER message) from
 * it, then hands the socket to the handshake with `release()`, dropping
 * whatever came after the server's go-ahead.
 */
export class PeerReader {
  private buffer: Buffer = Buffer.alloc(0);
  private ended: string | null = null;
  private wake: (() => void) | null = null;
  private readonly onData = (chunk: Buffer) => {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    if (this.buffer.length > MAX_PREAMBLE_BYTES) this.end(`the server sent more than ${MAX_PREAMBLE_BYTES} bytes before TLS`);
    this.wake?.();
  };
  private readonly onEnd = () => this.end('the server closed the connection');
  private readonly onError = (error: NodeJS.ErrnoException) => this.end(error.code ?? error.message);

  constructor(readonly socket: Socket) {
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('close', this.onEnd);
    socket.on('error', this.onError);
  }

  write(data: string | Buffer): void {
    if (!this.socket.destroyed) this.socket.write(data);
  }

  /**
   * Waits until `take` finds what it looks for in the bytes received so far
   * (it returns the value and how many bytes it used), or the deadline or
   * the end of the connection comes first.
   *
   * @throws Error saying why nothing was found.
   */
  async read<T>(take: (bytes: Buffer) => { value: T; used: number } | null, deadline: number): Promise<T> {
    for (;;) {
      const found = take(this.buffer);
      if (found) {
        this.buffer = this.buffer.subarray(found.used);
        return found.value;
      }
      if (this.ended !== null) throw new Error(this.ended);
      const left = deadline - performance.now();
      if (left <= 0) throw new Error('the server did not answer in time');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          this.wake = null;
          resolve();
        };
      });
    }
  }

  /** The next line (CRLF or LF ended), without its ending, as latin1 text. */
  line(deadline: number): Promise<string> {
    return this.read((bytes) => {
      const newline = bytes.indexOf(0x0a);
      if (newline === -1) return null;
      return { value: bytes.subarray(0, newline).toString('latin1').replace(/\r$/, ''), used: newline + 1 };
    }, deadline);
  }

  /** Stops reading: the socket is the handshake's from here; what was left unread is dropped. */
  release(): Socket {
    this.socket.off('data', this.onData);
    this.socket.off('end', this.onEnd);
    this.socket.off('close', this.onEnd);
    this.socket.off('error', this.onError);
    this.buffer = Buffer.alloc(0);
    return this.socket;
  }

  private end(reason: string): void {
    this.ended ??= reason;
    this.wake?.();
  }
}
