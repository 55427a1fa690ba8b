import type { DnsReply } from './dns-message.js';

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
