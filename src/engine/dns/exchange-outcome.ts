import { judgeReply, type DnsReply, type PreparedQuery } from './dns-message.js';

/**
 * How one attempt (one query to one resolver over one transport) ended.
 * Attempts never throw: the transport weighs the outcomes of all attempts
 * and turns the final failure into one NetintelError.
 */
export type ExchangeOutcome =
  /** A reply whose id and question match the query (kind `reply`). */
  | DnsReply
  /** No matching reply in time; `ignoredReplies` counts datagrams or frames that did not match. */
  | { kind: 'timeout'; ignoredReplies: number }
  /** The network said no: ICMP unreachable (ECONNREFUSED), reset, no route; `code` is the errno name. */
  | { kind: 'unreachable'; code: string }
  /**
   * The TLS handshake failed (`tls`: an untrusted or misnamed certificate, a
   * server that does not speak TLS), or the server's answer was not a DNS
   * message (`protocol`: an HTTP error status, another content type,
   * garbage, an HTTP/2 peer breaking the protocol), or the connect guard
   * refused the address a resolver's name resolved to (`refused`), all of
   * DNS over HTTPS or TLS; or, over any transport, the only replies with the
   * query's id were malformed (`malformed`: see messageProblem), none valid
   * by the deadline. `reason` says what, for the error message.
   */
  | { kind: 'failed'; failure: 'tls' | 'protocol' | 'refused' | 'malformed'; code: string; reason: string };

/** The outcome of a query whose replies were all malformed (`reason`: the first one's fault). */
export function malformedOutcome(reason: string): ExchangeOutcome {
  return { kind: 'failed', failure: 'malformed', code: 'EPROTO', reason };
}

/** What a query waiting on a shared channel (UDP, DNS over TLS) has been sent so far besides its reply. */
export interface RepliesSeen {
  /** Messages with its id that did not answer its question. */
  ignoredReplies: number;
  /** The first malformed reply's fault, null while none came. */
  malformed: string | null;
}

/**
 * A message carrying a waiting query's id: the reply that settles it, or
 * null when it is only noted in `seen` (another question's, or malformed: a
 * spoofed datagram must not beat the real answer, so a malformed one is
 * taken only at the deadline, by deadlineOutcome).
 */
export function takeReply(seen: RepliesSeen, message: Buffer, query: PreparedQuery): DnsReply | null {
  const reply = judgeReply(message, query);
  if (reply === null) {
    seen.ignoredReplies += 1;
    return null;
  }
  if (reply.kind === 'malformed') {
    seen.malformed ??= reply.reason;
    return null;
  }
  return reply;
}

/** How a query ends at its deadline: malformed when only malformed replies came, else a timeout. */
export function deadlineOutcome(seen: RepliesSeen): ExchangeOutcome {
  return seen.malformed !== null ? malformedOutcome(seen.malformed) : { kind: 'timeout', ignoredReplies: seen.ignoredReplies };
}
