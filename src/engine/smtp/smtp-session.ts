/**
 * One SMTP conversation over a raw socket (node:net, then node:tls).
 *
 * Why not nodemailer's SMTPConnection: its `connect()` runs the greeting,
 * EHLO, STARTTLS and the second EHLO as one step, so the stages cannot be
 * timed, stopped after (`--quit-after banner|ehlo`) or reported one by one;
 * it turns a non-220 greeting into an exception, falls back to HELO on its
 * own, keeps only the extensions of the last EHLO (the AUTH mechanisms
 * offered before TLS are lost), and with verification off it does not say
 * why the certificate would have failed. A probe has to see each reply as
 * data, so it speaks the protocol itself: this class reads replies
 * (RFC 5321 §4.2), sends single-line commands, upgrades to TLS (RFC 3207)
 * and writes the transcript.
 */
import type { Socket } from 'node:net';
import type tls from 'node:tls';
import { NetintelError } from '../../errors.js';
import { tlsHandshake } from '../tls/tls-handshake.js';
import type { SmtpReply, SmtpTranscriptLine } from './smtp-result.js';

/** RFC 5321 §4.5.3.1.5 allows 512 octets per reply line; servers that exceed it a little still work. */
const MAX_LINE_OCTETS = 8192;
/** A reply of more lines than this is not an SMTP server talking. */
const MAX_REPLY_LINES = 200;

/** A full reply with its raw lines, or why none came. */
export type ReplyOutcome =
  | { kind: 'reply'; reply: SmtpReply; lines: string[] }
  | { kind: 'timeout' }
  | { kind: 'closed'; error: string | null }
  | { kind: 'protocol'; line: string; reason: string };

/**
 * Escapes what must not reach a terminal raw (C0/C1 controls but TAB,
 * bidirectional overrides, line separators): the server's text is data.
 */
export function escapeControls(text: string): string {
  return text.replace(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g, (char) => {
    const code = char.codePointAt(0) ?? 0;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** Splits `250-2.1.0 Ok` into its parts (RFC 5321 §4.2, RFC 3463 §2). */
function parseLine(line: string): { code: number; last: boolean; text: string } | null {
  const match = /^([2-5][0-9][0-9])(?:([ -])(.*))?$/s.exec(line);
  if (!match) return null;
  return { code: Number(match[1]), last: match[2] !== '-', text: match[3] ?? '' };
}

function enhancedCodeOf(code: number, text: string): string | null {
  const match = /^([245])\.(\d{1,3})\.(\d{1,3})(?:\s|$)/.exec(text);
  return match && Number(match[1]) === Math.floor(code / 100) ? `${match[1]}.${match[2]}.${match[3]}` : null;
}

export interface SmtpSessionOptions {
  socket: Socket;
  /** performance.now() when the probe started: transcript times count from it. */
  startedAt: number;
  /** Strings that must never appear in the transcript or a reply text (credentials and their encodings). */
  secrets?: readonly string[];
}

/**
 * The conversation state: a socket (plain, then TLS), a reply parser, the
 * transcript. Replies are queued in arrival order; `readReply` takes the
 * next one or waits for it, bounded by a timeout.
 */
export class SmtpSession {
  private socket: Socket;
  private pending: Buffer = Buffer.alloc(0);
  private replyLines: string[] = [];
  private readonly queue: ReplyOutcome[] = [];
  private waiter: ((outcome: ReplyOutcome) => void) | null = null;
  private closedOutcome: ReplyOutcome | null = null;
  private socketError: string | null = null;
  private readonly startedAt: number;
  private readonly secrets: readonly string[];
  readonly transcript: SmtpTranscriptLine[] = [];
  /** The conversation now runs inside TLS. */
  secure = false;

  private readonly onData = (chunk: Buffer) => this.receive(chunk);
  private readonly onError = (error: NodeJS.ErrnoException) => {
    this.socketError ??= error.code ?? error.message;
  };
  private readonly onClose = () => this.closeWith({ kind: 'closed', error: this.socketError });

  constructor(options: SmtpSessionOptions) {
    this.socket = options.socket;
    this.startedAt = options.startedAt;
    this.secrets = (options.secrets ?? []).filter((secret) => secret.length > 0);
    this.attach(this.socket);
  }

  /** Milliseconds since the probe started, 0.1 ms resolution. */
  elapsed(): number {
    return Math.round((performance.now() - this.startedAt) * 10) / 10;
  }

  /** Adds a note of netintel's own (`=== ...` in the text form) to the transcript. */
  note(text: string): void {
    this.transcript.push({ at_ms: this.elapsed(), direction: 'info', tls: this.secure, text: this.redact(text) });
  }

  /**
   * Sends one command line. `shown` replaces the line in the transcript
   * (credentials). A command holding CR, LF or NUL is refused: input is
   * validated before a probe starts, so reaching here with one is a bug.
   */
  send(line: string, shown: string = line): void {
    if (/[\r\n\0]/.test(line)) {
      throw new NetintelError('internal', 'refusing to send an SMTP command holding CR, LF or NUL');
    }
    this.transcript.push({ at_ms: this.elapsed(), direction: 'sent', tls: this.secure, text: this.redact(shown) });
    if (!this.socket.destroyed && this.socket.writable) this.socket.write(`${line}\r\n`);
  }

  /** Sends a command and waits for its reply. */
  async command(line: string, timeoutMs: number, shown: string = line): Promise<ReplyOutcome> {
    this.discardUnsolicited();
    this.send(line, shown);
    return this.readReply(timeoutMs);
  }

  /** The next reply, or timeout/closed/protocol, whichever comes first. */
  readReply(timeoutMs: number): Promise<ReplyOutcome> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    if (this.closedOutcome) return Promise.resolve(this.closedOutcome);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        resolve({ kind: 'timeout' });
      }, timeoutMs);
      this.waiter = (outcome) => {
        clearTimeout(timer);
        this.waiter = null;
        resolve(outcome);
      };
    });
  }

  /**
   * Upgrades the connection to TLS on its socket (after `220` to STARTTLS,
   * or at once for implicit TLS). Bytes the server sent after the STARTTLS
   * reply and before the handshake are dropped, never read as replies
   * inside TLS (the STARTTLS response-injection flaw, CVE-2011-0411
   * mirrored on the client side); their count is returned.
   */
  async startTls(
    options: tls.ConnectionOptions,
    timeoutMs: number,
  ): Promise<{ ok: true; socket: tls.TLSSocket; discardedBytes: number } | { ok: false; error: string; discardedBytes: number }> {
    const { socket: plain, discardedBytes } = this.release();
    const outcome = await tlsHandshake(plain, options, timeoutMs);
    if (!outcome.ok) {
      this.closeWith({ kind: 'closed', error: outcome.error });
      return { ok: false, error: outcome.error, discardedBytes };
    }
    this.socket = outcome.socket;
    this.secure = true;
    this.attach(outcome.socket);
    return { ok: true, socket: outcome.socket, discardedBytes };
  }

  /**
   * Hands the plain socket over for a TLS handshake (after `220` to
   * STARTTLS): the session stops reading it, and bytes the server sent after
   * the STARTTLS reply are dropped, never read as replies inside TLS (the
   * STARTTLS response-injection flaw, CVE-2011-0411 mirrored on the client
   * side); their count is returned.
   */
  release(): { socket: Socket; discardedBytes: number } {
    const lineBytes = (lines: readonly string[]) => lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 2, 0);
    const discardedBytes =
      this.pending.length +
      lineBytes(this.replyLines) +
      this.queue.reduce((sum, outcome) => sum + (outcome.kind === 'reply' ? lineBytes(outcome.lines) : 0), 0);
    this.pending = Buffer.alloc(0);
    this.replyLines = [];
    this.queue.length = 0;
    this.detach(this.socket);
    return { socket: this.socket, discardedBytes };
  }

  /** The socket in use (TLS once upgraded). */
  current(): Socket {
    return this.socket;
  }

  /** Closes the connection at once and releases the socket. */
  destroy(): void {
    this.socket.destroy();
  }

  /** Ends the connection politely (after QUIT) and destroys it if the server lingers. */
  async end(graceMs = 250): Promise<void> {
    const socket = this.socket;
    if (socket.destroyed) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        socket.destroy();
        resolve();
      }, graceMs);
      socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      socket.end();
    });
  }

  private attach(socket: Socket): void {
    socket.on('data', this.onData);
    socket.on('error', this.onError);
    socket.on('close', this.onClose);
    socket.on('end', this.onClose);
  }

  private detach(socket: Socket): void {
    socket.off('data', this.onData);
    socket.off('error', this.onError);
    socket.off('close', this.onClose);
    socket.off('end', this.onClose);
  }

  private receive(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let newline: number;
    while ((newline = this.pending.indexOf(0x0a)) !== -1) {
      let end = newline;
      if (end > 0 && this.pending[end - 1] === 0x0d) end -= 1;
      const line = this.pending.subarray(0, end).toString('utf8');
      this.pending = this.pending.subarray(newline + 1);
      this.line(line);
      if (this.closedOutcome) return;
    }
    if (this.pending.length > MAX_LINE_OCTETS) {
      this.protocolError(this.pending.subarray(0, 200).toString('utf8'), `a reply line longer than ${MAX_LINE_OCTETS} octets`);
    }
  }

  private line(raw: string): void {
    const text = this.redact(escapeControls(raw));
    this.transcript.push({ at_ms: this.elapsed(), direction: 'received', tls: this.secure, text });
    const parsed = parseLine(raw);
    if (!parsed) {
      this.protocolError(text, 'a line that is not an SMTP reply');
      return;
    }
    this.replyLines.push(raw);
    const first = this.replyLines.length > 1 ? parseLine(this.replyLines[0]!) : null;
    if (first !== null && first.code !== parsed.code) {
      // RFC 5321 §4.2.1: every line of a multi-line reply carries the same code; a reply that changes it midway has no one meaning.
      this.protocolError(text, `a multi-line reply whose lines carry different codes (${first.code}, then ${parsed.code}), where RFC 5321 §4.2.1 gives every line of a reply the same code`);
      return;
    }
    if (this.replyLines.length > MAX_REPLY_LINES) {
      this.protocolError(text, `a reply of more than ${MAX_REPLY_LINES} lines`);
      return;
    }
    if (!parsed.last) return;
    const lines = this.replyLines;
    this.replyLines = [];
    const texts = lines.map((line) => parseLine(line)?.text ?? '');
    const joined = this.redact(texts.map(escapeControls).join('\n'));
    const reply: SmtpReply = { code: parsed.code, enhanced_code: enhancedCodeOf(parsed.code, texts[0] ?? ''), text: joined };
    this.deliver({ kind: 'reply', reply, lines: lines.map((line) => this.redact(escapeControls(line))) });
  }

  private protocolError(line: string, reason: string): void {
    const outcome: ReplyOutcome = { kind: 'protocol', line, reason };
    this.deliver(outcome);
    // Nothing after a malformed line can be trusted to belong to a reply.
    this.detach(this.socket);
    this.socket.on('error', () => {});
    this.socket.destroy();
    this.closedOutcome = { kind: 'closed', error: null };
  }

  private deliver(outcome: ReplyOutcome): void {
    if (this.waiter) this.waiter(outcome);
    else this.queue.push(outcome);
  }

  private closeWith(outcome: ReplyOutcome): void {
    if (this.closedOutcome) return;
    this.closedOutcome = outcome;
    if (this.waiter) this.waiter(outcome);
  }

  /** Replies nobody asked for (a server answering twice) are noted and dropped, so replies stay paired with commands. */
  private discardUnsolicited(): void {
    while (this.queue.length > 0 && this.queue[0]!.kind === 'reply') {
      this.queue.shift();
      this.note('an unsolicited reply was ignored');
    }
  }

  private redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) {
      if (out.includes(secret)) out = out.split(secret).join('[redacted]');
    }
    return out;
  }
}
