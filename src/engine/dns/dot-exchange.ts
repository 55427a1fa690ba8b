import tls from 'node:tls';
import { guardedConnect, type ConnectGuard } from '../connect-guard.js';
import { decodeMessage, prepareQuery, randomQueryId, type DnsQuestion, type EdnsMode, type PreparedQuery } from './dns-message.js';
import { deadlineOutcome, takeReply, type ExchangeOutcome, type RepliesSeen } from './exchange-outcome.js';
import type { ResolverAddress } from './resolver-address.js';
import { createFrameReader, lengthPrefixed } from './tcp-exchange.js';
import { tlsFailureOutcome } from './tls-failure.js';
import { unroutableReason } from './unroutable-address.js';

/** Queries to one DNS over TLS resolver; one client serves any number of concurrent queries. */
export interface DotClient {
  /** One query, ended within `timeoutMs` (connecting included). Never rejects. */
  exchange(question: DnsQuestion, edns: EdnsMode, timeoutMs: number): Promise<ExchangeOutcome>;
  /** Closes the connection; queries still waiting end as `unreachable`. */
  close(): void;
}

/** A query waiting on the connection. */
interface Waiting extends RepliesSeen {
  question: DnsQuestion;
  edns: EdnsMode;
  query: PreparedQuery;
  timer: NodeJS.Timeout;
  /** Sent again once already, after a reused connection closed under it. */
  resent: boolean;
  done: (outcome: ExchangeOutcome) => void;
}

/** One TLS connection and the queries sent on it, by message id. */
interface Connection {
  socket: tls.TLSSocket;
  ready: boolean;
  /** Frames written once the handshake is done. */
  unsent: Buffer[];
  waiting: Map<number, Waiting>;
  /** An answer came on it: it worked, so a close under later queries is the server's idle close. */
  answered: boolean;
}

/** What a client does when a connection is gone (see createDotClient's end). */
type ConnectionEnd = (connection: Connection, outcome: ExchangeOutcome) => void;

/**
 * A client of one DNS over TLS resolver (RFC 7858): one TLS connection to
 * the resolver's port (853 by default), opened on first use and reused by
 * every later query, several in flight at once and answered in any order,
 * matched by message id (RFC 7858 §3.3, §3.4; RFC 7766 §6.2.1). Messages
 * carry the TCP framing of RFC 1035 §4.2.2. The certificate is checked
 * against the host as written, a name or an IP address (the strict
 * privacy profile, RFC 8310 §5), with Node's CAs and the resolver's own
 * (`ca`). A connection the server closes is opened again by the next query;
 * queries it took down with it are sent once more on the new one when it
 * had answered before (the server's idle close, RFC 7766 §6.2.3).
 */
export function createDotClient(resolver: ResolverAddress, guard: ConnectGuard | null = null): DotClient {
  let current: Connection | null = null;
  let closed = false;

  /** The connection is gone: its queries end with `outcome`, or go again on a new one. */
  function end(connection: Connection, outcome: ExchangeOutcome): void {
    if (current === connection) current = null;
    connection.socket.destroy();
    const again = connection.answered && outcome.kind === 'unreachable' && !closed;
    for (const entry of [...connection.waiting.values()]) {
      connection.waiting.delete(entry.query.id);
      if (again && !entry.resent) {
        entry.resent = true;
        send(entry);
      } else {
        clearTimeout(entry.timer);
        entry.done(outcome);
      }
    }
  }

  function send(entry: Waiting): void {
    if (current === null) {
      try {
        current = openConnection(resolver, guard, end);
      } catch (error) {
        clearTimeout(entry.timer);
        entry.done({ kind: 'unreachable', code: (error as NodeJS.ErrnoException).code ?? 'EINVAL' });
        return;
      }
    }
    const connection = current;
    let id = randomQueryId();
    while (connection.waiting.has(id)) id = randomQueryId();
    entry.query = prepareQuery(id, entry.question, entry.edns);
    connection.waiting.set(id, entry);
    connection.socket.ref();
    const frame = lengthPrefixed(entry.query.message);
    if (connection.ready) connection.socket.write(frame);
    else connection.unsent.push(frame);
    // The deadline stays the first send's; it follows the query to whichever connection carries it.
    timers.set(entry, connection);
  }

  // Which connection a query waits on, for its timer.
  const timers = new WeakMap<Waiting, Connection>();

  return {
    exchange(question, edns, timeoutMs) {
      if (closed) return Promise.resolve({ kind: 'unreachable', code: 'ECLOSED' });
      if (resolver.family !== 0 && unroutableReason(resolver.host) !== null) return Promise.resolve({ kind: 'unreachable', code: 'ENETUNREACH' });
      return new Promise((resolve) => {
        const entry: Waiting = {
          question,
          edns,
          query: prepareQuery(0, question, edns),
          ignoredReplies: 0,
          malformed: null,
          resent: false,
          done: resolve,
          timer: setTimeout(() => {
            const connection = timers.get(entry);
            if (!connection) return;
            settleWaiting(connection, entry, deadlineOutcome(entry));
            // A handshake that never ends is given up, so that the next query connects afresh.
            if (!connection.ready && connection.waiting.size === 0) end(connection, { kind: 'timeout', ignoredReplies: 0 });
          }, timeoutMs),
        };
        send(entry);
      });
    },
    close() {
      closed = true;
      const connection = current;
      current = null;
      if (connection) end(connection, { kind: 'unreachable', code: 'ECLOSED' });
    },
  };
}

/**
 * Opens a TLS connection to the resolver; replies are routed to the
 * queries waiting on it, and `end` is called when it fails or closes.
 */
function openConnection(resolver: ResolverAddress, guard: ConnectGuard | null, end: ConnectionEnd): Connection {
  const socket = tls.connect({ ...tlsOptions(resolver, []), ...guardedConnect(guard, resolver.host, { what: 'DNS resolver', port: resolver.port }) });
  const connection: Connection = { socket, ready: false, unsent: [], waiting: new Map(), answered: false };
  socket.setNoDelay(true);
  const read = createFrameReader((message) => routeFrame(connection, message, end));
  socket.on('data', (chunk: Buffer) => {
    if (!read(chunk)) end(connection, { kind: 'unreachable', code: 'EPROTO' });
  });
  socket.once('secureConnect', () => {
    connection.ready = true;
    for (const frame of connection.unsent.splice(0)) socket.write(frame);
  });
  socket.on('error', (error: NodeJS.ErrnoException) => end(connection, tlsFailureOutcome(error, resolver.host)));
  socket.on('close', () => end(connection, { kind: 'unreachable', code: 'ECONNRESET' }));
  return connection;
}

/** Hands one framed message to the query it answers. */
function routeFrame(connection: Connection, message: Buffer, end: ConnectionEnd): void {
  const entry = message.length >= 12 ? connection.waiting.get(message.readUInt16BE(0)) : undefined;
  if (!entry) {
    // Over a connection of its own, a frame that is not DNS at all is a server not speaking DNS over TLS.
    if (decodeMessage(message) === null) {
      end(connection, { kind: 'failed', failure: 'protocol', code: 'EPROTO', reason: `it sent ${message.length} octets that are not a DNS message` });
    }
    return;
  }
  const reply = takeReply(entry, message, entry.query);
  if (reply === null) return;
  connection.answered = true;
  settleWaiting(connection, entry, reply);
}

function settleWaiting(connection: Connection, entry: Waiting, outcome: ExchangeOutcome): void {
  if (connection.waiting.get(entry.query.id) !== entry) return;
  connection.waiting.delete(entry.query.id);
  clearTimeout(entry.timer);
  // An idle connection must not keep the process alive.
  if (connection.waiting.size === 0) connection.socket.unref();
  entry.done(outcome);
}

/** The TLS options of a connection to an encrypted resolver: host, SNI, trusted CAs, ALPN. */
export function tlsOptions(resolver: ResolverAddress, alpn: string[]): tls.ConnectionOptions {
  return {
    host: resolver.host,
    port: resolver.port,
    ...(resolver.family === 0 ? { servername: resolver.host } : {}),
    // `ca` replaces Node's store: the resolver's own CAs are added to it.
    ...(resolver.ca !== undefined && resolver.ca.length > 0 ? { ca: [...tls.rootCertificates, ...resolver.ca] } : {}),
    ...(alpn.length > 0 ? { ALPNProtocols: alpn } : {}),
  };
}
