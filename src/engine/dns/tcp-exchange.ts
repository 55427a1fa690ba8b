import net from 'node:net';
import { prepareQuery, randomQueryId, type DnsQuestion, type EdnsMode } from './dns-message.js';
import { deadlineOutcome, malformedOutcome, takeReply, type ExchangeOutcome, type RepliesSeen } from './exchange-outcome.js';
import type { ResolverAddress } from './resolver-address.js';
import { unroutableReason } from './unroutable-address.js';

// A DNS message over TCP is at most 65535 octets plus its 2-octet length.
const MAX_FRAME = 2 + 0xffff;

/**
 * One query over its own TCP connection: each message is preceded by its
 * length as a 2-octet big-endian integer (RFC 1035 §4.2.2, RFC 7766 §8).
 * Frames whose id or question do not match are skipped, as over UDP; a
 * malformed frame (a zero-length one included) is remembered, and is the
 * outcome when no valid reply follows before the deadline or the close.
 * `timeoutMs` covers connecting and waiting for the answer. Never rejects.
 *
 * A connection per query is what dig does and suits the two uses here,
 * fallback after a truncated UDP reply and an explicit TCP mode; pipelining
 * many queries over one connection (RFC 7766 §6.2.1) is not done.
 */
export function tcpExchange(
  resolver: ResolverAddress,
  question: DnsQuestion,
  edns: EdnsMode,
  timeoutMs: number,
): Promise<ExchangeOutcome> {
  const query = prepareQuery(randomQueryId(), question, edns);
  const frame = lengthPrefixed(query.message);

  if (unroutableReason(resolver.host) !== null) return Promise.resolve({ kind: 'unreachable', code: 'ENETUNREACH' });

  return new Promise<ExchangeOutcome>((resolve) => {
    // A malformed frame is what the server said when nothing valid follows.
    const seen: RepliesSeen = { ignoredReplies: 0, malformed: null };
    let settled = false;

    let socket: net.Socket;
    try {
      socket = net.connect({ host: resolver.host, port: resolver.port, family: resolver.family });
    } catch (error) {
      // Invalid connect arguments throw at once; for the caller it is the
      // same as a connection that failed.
      resolve({ kind: 'unreachable', code: (error as NodeJS.ErrnoException).code ?? 'EINVAL' });
      return;
    }
    const timer = setTimeout(() => finish(deadlineOutcome(seen)), timeoutMs);

    function finish(outcome: ExchangeOutcome): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    }

    socket.setNoDelay(true);
    socket.on('error', (error: NodeJS.ErrnoException) => finish({ kind: 'unreachable', code: error.code ?? 'EIO' }));
    // The server closed the connection without a matching answer (after a malformed one, that one is its answer).
    socket.on('close', () => finish(seen.malformed !== null ? malformedOutcome(seen.malformed) : { kind: 'unreachable', code: 'ECONNRESET' }));
    const read = createFrameReader((message) => {
      // The connection is this query's own: a frame too short to carry an id is the server's malformed reply.
      if (message.length < 2) seen.malformed ??= frameProblem(message);
      else if (message.readUInt16BE(0) !== query.id) seen.ignoredReplies += 1;
      else {
        const reply = takeReply(seen, message, query);
        if (reply !== null) finish(reply);
      }
    });
    socket.on('data', (chunk: Buffer) => {
      if (!read(chunk)) finish({ kind: 'unreachable', code: 'EPROTO' });
    });
    socket.write(frame);
  });
}

/** What is wrong with a frame too short to be looked at further. */
export function frameProblem(message: Buffer): string {
  return message.length === 0 ? 'a zero-length TCP frame, not a DNS message' : `${message.length} octets, shorter than the 12-octet DNS header`;
}

/** A message with its 2-octet big-endian length in front (RFC 1035 §4.2.2; RFC 7858 §3.3 over TLS). */
export function lengthPrefixed(message: Buffer): Buffer {
  const frame = Buffer.alloc(2 + message.length);
  frame.writeUInt16BE(message.length, 0);
  message.copy(frame, 2);
  return frame;
}

/**
 * Reads length-prefixed messages out of a stream's chunks, calling
 * `onMessage` for each whole one. The returned function takes the next
 * chunk; it returns false when more is buffered than a few frames can
 * be, a stream that is not speaking DNS.
 */
export function createFrameReader(onMessage: (message: Buffer) => void): (chunk: Buffer) => boolean {
  let received: Buffer = Buffer.alloc(0);
  return (chunk) => {
    received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
    if (received.length > MAX_FRAME * 4) return false;
    while (received.length >= 2) {
      const length = received.readUInt16BE(0);
      if (received.length < 2 + length) return true;
      const message = received.subarray(2, 2 + length);
      received = received.subarray(2 + length);
      onMessage(message);
    }
    return true;
  };
}
