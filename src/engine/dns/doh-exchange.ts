import http2 from 'node:http2';
import https from 'node:https';
import tls from 'node:tls';
import { guardedConnect, type ConnectGuard } from '../connect-guard.js';
import { judgeReply, prepareQuery, type DnsQuestion, type EdnsMode, type PreparedQuery } from './dns-message.js';
import { tlsOptions } from './dot-exchange.js';
import { malformedOutcome, type ExchangeOutcome } from './exchange-outcome.js';
import type { ResolverAddress } from './resolver-address.js';
import { tlsFailureOutcome } from './tls-failure.js';
import { unroutableReason } from './unroutable-address.js';

/** The media type of DNS messages over HTTPS (RFC 8484 §6). */
const DNS_MESSAGE = 'application/dns-message';

/** Connections to one HTTP/1.1-only resolver at once. */
const MAX_HTTP1_CONNECTIONS = 16;

/** A DNS message is at most 65535 octets; a longer body is not one. */
const MAX_BODY = 0xffff;

/** Queries to one DNS over HTTPS resolver; one client serves any number of concurrent queries. */
export interface DohClient {
  /** One query, ended within `timeoutMs` (connecting included). Never rejects. */
  exchange(question: DnsQuestion, edns: EdnsMode, timeoutMs: number): Promise<ExchangeOutcome>;
  /** Closes the connections; queries still waiting end as `unreachable`. */
  close(): void;
}

/** What ALPN chose for the resolver's connection. */
type Connection = H2Connection | { kind: 'http/1.1'; socket: tls.TLSSocket | null };

/** An HTTP/2 session, and how the peer broke the protocol when it did (the session is then closed). */
interface H2Connection {
  kind: 'h2';
  session: http2.ClientHttp2Session;
  violation: string | null;
}

/**
 * SETTINGS and PING frames a server may send in one second. Each asks for
 * an acknowledgement, so a peer that floods them makes the client work and
 * write without end (RFC 9113 §10.5); a server sends a few in a session's
 * life. Past the cap the session is closed as a protocol violation.
 */
const MAX_CONTROL_FRAMES_PER_SECOND = 100;

/**
 * A client of one DNS over HTTPS resolver (RFC 8484). The first query opens
 * a TLS connection offering HTTP/2 and HTTP/1.1 (ALPN): over HTTP/2 every
 * later query shares that connection as a stream of its own; over HTTP/1.1
 * the first query uses it and later ones go through a keep-alive agent.
 * The certificate is checked against the URL's host, with Node's CAs and
 * the resolver's own (`ca`).
 */
export function createDohClient(resolver: ResolverAddress, guard: ConnectGuard | null = null): DohClient {
  const target = dohTarget(resolver, guard);
  let connecting: Promise<Connection | ExchangeOutcome> | null = null;
  let established: Connection | null = null;
  let closed = false;
  const hooks: SessionHooks = {
    isClosed: () => closed,
    sessionClosed(made) {
      if (established === made) {
        established = null;
        connecting = null;
      }
    },
  };

  /** The connection, opened on first use; a failed or closed one is opened again by the next query. */
  function connection(timeoutMs: number): Promise<Connection | ExchangeOutcome> {
    connecting ??= connectDoh(target, timeoutMs, hooks).then((made) => {
      if (isConnection(made)) established = made;
      else connecting = null;
      return made;
    });
    return connecting;
  }

  async function exchange(question: DnsQuestion, edns: EdnsMode, timeoutMs: number): Promise<ExchangeOutcome> {
    if (closed) return { kind: 'unreachable', code: 'ECLOSED' };
    const started = Date.now();
    // RFC 8484 §4.1: id 0, so that identical queries are identical requests (HTTP caches).
    const query = prepareQuery(0, question, edns);
    const made = await connection(timeoutMs);
    if (!isConnection(made)) return made;
    const left = Math.max(1, timeoutMs - (Date.now() - started));
    if (made.kind === 'h2') return h2Request(target, made, query, left);
    const socket = made.socket;
    made.socket = null;
    return h1Request(target, query, left, socket);
  }

  return {
    exchange,
    close() {
      closed = true;
      for (const item of [...target.open]) item.destroy();
      target.open.clear();
      target.closeAgent();
      if (established?.kind === 'http/1.1') established.socket?.destroy();
      established = null;
      connecting = null;
    },
  };
}

/** One resolver's URL and method, the options of every connection to it, and what is open to it. */
interface DohTarget {
  readonly resolver: ResolverAddress;
  readonly url: URL;
  readonly method: 'GET' | 'POST';
  /** The connect guard's options for a connection to the resolver. */
  guardOptions(): ReturnType<typeof guardedConnect>;
  /** Sessions and requests in progress, ended by close(). */
  readonly open: Set<{ destroy(): void }>;
  /** The keep-alive agent of HTTP/1.1 requests after the first, made on first use. */
  http1Agent(): https.Agent;
  closeAgent(): void;
}

function dohTarget(resolver: ResolverAddress, guard: ConnectGuard | null): DohTarget {
  let agent: https.Agent | null = null;
  const guardOptions = () => guardedConnect(guard, resolver.host, { what: 'DNS resolver', port: resolver.port });
  return {
    resolver,
    url: new URL(resolver.url ?? `https://${resolver.host}/dns-query`),
    method: resolver.method ?? 'POST',
    guardOptions,
    open: new Set(),
    http1Agent() {
      // A bounded pool: a bulk run queues its queries rather than opening a connection for each.
      agent ??= new https.Agent({ keepAlive: true, maxSockets: MAX_HTTP1_CONNECTIONS, ...tlsOptions(resolver, ['http/1.1']), ...guardOptions() });
      return agent;
    },
    closeAgent() {
      agent?.destroy();
    },
  };
}

/** What a connection being made asks of its client. */
interface SessionHooks {
  /** Whether the client was closed while the connection was made. */
  isClosed(): boolean;
  /** An HTTP/2 session ended (GOAWAY, idle close by the server). */
  sessionClosed(made: H2Connection): void;
}

/** A TLS connection offering h2 and http/1.1; an HTTP/2 session on it when ALPN chose h2. */
function connectDoh(target: DohTarget, timeoutMs: number, hooks: SessionHooks): Promise<Connection | ExchangeOutcome> {
  const { resolver } = target;
  if (resolver.family !== 0 && unroutableReason(resolver.host) !== null) return Promise.resolve({ kind: 'unreachable', code: 'ENETUNREACH' });
  return new Promise((resolve) => {
    let socket: tls.TLSSocket;
    try {
      socket = tls.connect({ ...tlsOptions(resolver, ['h2', 'http/1.1']), ...target.guardOptions() });
    } catch (error) {
      resolve({ kind: 'unreachable', code: (error as NodeJS.ErrnoException).code ?? 'EINVAL' });
      return;
    }
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ kind: 'timeout', ignoredReplies: 0 });
    }, timeoutMs);
    // Stays attached: after the handshake the session or request that owns the socket reports its errors.
    socket.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(tlsFailureOutcome(error, resolver.host));
    });
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      if (hooks.isClosed()) {
        socket.destroy();
        resolve({ kind: 'unreachable', code: 'ECLOSED' });
        return;
      }
      resolve(socket.alpnProtocol === 'h2' ? h2Session(target, socket, hooks) : { kind: 'http/1.1', socket });
    });
  });
}

function h2Session(target: DohTarget, socket: tls.TLSSocket, hooks: SessionHooks): H2Connection {
  const session = http2.connect(target.url.origin, { createConnection: () => socket });
  const made: H2Connection = { kind: 'h2', session, violation: null };
  target.open.add(session);
  session.on('error', (error: NodeJS.ErrnoException) => {
    made.violation ??= http2Violation(error);
  });
  watchControlFrames(made);
  // A session that ends (GOAWAY, idle close by the server) is replaced on the next query.
  session.on('close', () => {
    target.open.delete(session);
    hooks.sessionClosed(made);
  });
  session.unref();
  return made;
}

/** The request path and headers of a query (RFC 8484 §4.1). */
function requestOf(target: DohTarget, query: PreparedQuery): { path: string; headers: Record<string, string>; body: Buffer | null } {
  const { url } = target;
  if (target.method === 'GET') {
    const address = new URL(url);
    address.searchParams.append('dns', query.message.toString('base64url'));
    return { path: address.pathname + address.search, headers: { accept: DNS_MESSAGE }, body: null };
  }
  return {
    path: url.pathname + url.search,
    headers: { accept: DNS_MESSAGE, 'content-type': DNS_MESSAGE, 'content-length': String(query.message.length) },
    body: query.message,
  };
}

function h2Request(target: DohTarget, connection: H2Connection, query: PreparedQuery, timeoutMs: number): Promise<ExchangeOutcome> {
  const { path, headers, body } = requestOf(target, query);
  const session = connection.session;
  // A stream that ends because the peer broke the protocol ends with that, not as an unreachable server.
  const broken = (error: NodeJS.ErrnoException | null): ExchangeOutcome => {
    const violation = connection.violation ?? (error === null ? null : http2Violation(error));
    return violation !== null ? { kind: 'failed', failure: 'protocol', code: 'EPROTO', reason: violation } : { kind: 'unreachable', code: error?.code ?? 'ECONNRESET' };
  };
  return new Promise((resolve) => {
    let stream: http2.ClientHttp2Stream;
    try {
      stream = session.request({ ':method': target.method, ':path': path, ...headers }, { endStream: body === null });
    } catch (error) {
      resolve({ kind: 'unreachable', code: (error as NodeJS.ErrnoException).code ?? 'ECONNRESET' });
      return;
    }
    session.ref();
    const settle = collect(target, query, timeoutMs, () => stream.close(http2.constants.NGHTTP2_CANCEL), (outcome) => {
      if (session.closed === false) session.unref();
      resolve(outcome);
    });
    stream.on('response', (responseHeaders) => settle.head(Number(responseHeaders[':status']), responseHeaders['content-type']));
    stream.on('data', (chunk: Buffer) => settle.data(chunk));
    // A session closed for a violation ends its streams, some with an empty 'end'.
    stream.on('end', () => (connection.violation !== null ? settle.fail(broken(null)) : settle.end()));
    stream.on('error', (error: NodeJS.ErrnoException) => settle.fail(broken(error)));
    stream.on('close', () => settle.fail(broken(null)));
    if (body !== null) stream.end(body);
  });
}

function h1Request(target: DohTarget, query: PreparedQuery, timeoutMs: number, socket: tls.TLSSocket | null): Promise<ExchangeOutcome> {
  const { path, headers, body } = requestOf(target, query);
  return new Promise((resolve) => {
    const client = https.request(
      {
        ...tlsOptions(target.resolver, ['http/1.1']),
        ...target.guardOptions(),
        path,
        method: target.method,
        headers,
        // The connection ALPN was chosen on serves the first request; with no agent given, Node uses createConnection.
        ...(socket !== null ? { createConnection: () => socket } : { agent: target.http1Agent() }),
      },
      (response) => {
        settle.head(response.statusCode ?? 0, response.headers['content-type']);
        response.on('data', (chunk: Buffer) => settle.data(chunk));
        response.on('end', () => settle.end());
        response.on('error', (error: NodeJS.ErrnoException) => settle.fail({ kind: 'unreachable', code: error.code ?? 'ECONNRESET' }));
      },
    );
    const settle = collect(target, query, timeoutMs, () => client.destroy(), resolve);
    client.on('error', (error: NodeJS.ErrnoException) => settle.fail(tlsFailureOutcome(error, target.resolver.host)));
    client.end(body ?? undefined);
  });
}

/**
 * Reads one response: status 200, the DNS media type, a body that is the
 * reply to `query`. Calls `done` once; `cancel` ends the request on a
 * timeout or a response that cannot be one.
 */
function collect(target: DohTarget, query: PreparedQuery, timeoutMs: number, cancel: () => void, done: (outcome: ExchangeOutcome) => void) {
  const chunks: Buffer[] = [];
  let size = 0;
  let settled = false;
  const entry = { destroy: () => settle({ kind: 'unreachable', code: 'ECLOSED' }) };
  target.open.add(entry);
  const timer = setTimeout(() => settle({ kind: 'timeout', ignoredReplies: 0 }), timeoutMs);
  function settle(outcome: ExchangeOutcome): void {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    target.open.delete(entry);
    if (outcome.kind !== 'reply') cancel();
    done(outcome);
  }
  const protocolFailure = (reason: string): ExchangeOutcome => ({ kind: 'failed', failure: 'protocol', code: 'EPROTO', reason });
  return {
    head(status: number, contentType: string | string[] | undefined) {
      if (status !== 200) settle(protocolFailure(`it answered HTTP ${status} instead of a DNS message`));
      const type = String(contentType ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== DNS_MESSAGE) settle(protocolFailure(`it answered ${type === '' ? 'without a content type' : `with ${JSON.stringify(type.slice(0, 60))}`}, not ${DNS_MESSAGE}`));
    },
    data(chunk: Buffer) {
      size += chunk.length;
      if (size > MAX_BODY) settle(protocolFailure(`its answer is longer than a DNS message can be (over ${MAX_BODY} octets)`));
      else chunks.push(chunk);
    },
    end() {
      const message = Buffer.concat(chunks);
      // One body is the whole answer: a malformed one is the resolver's reply, there is nothing to wait for.
      const reply = message.length >= 2 && message.readUInt16BE(0) === query.id ? judgeReply(message, query) : null;
      if (reply?.kind === 'malformed') settle(malformedOutcome(reply.reason));
      else settle(reply ?? protocolFailure(`its answer is not a DNS reply to the question (${message.length} octets)`));
    },
    fail: settle,
  };
}

/**
 * Counts the SETTINGS and PING frames of a session; past
 * MAX_CONTROL_FRAMES_PER_SECOND in a second the session is closed and the
 * violation recorded for the streams it ends.
 */
function watchControlFrames(connection: H2Connection): void {
  let windowStart = Date.now();
  const counts = { SETTINGS: 0, PING: 0 };
  const count = (frame: keyof typeof counts) => {
    const now = Date.now();
    if (now - windowStart >= 1000) {
      windowStart = now;
      counts.SETTINGS = 0;
      counts.PING = 0;
    }
    counts[frame] += 1;
    if (counts[frame] > MAX_CONTROL_FRAMES_PER_SECOND && connection.violation === null) {
      connection.violation = `it flooded the HTTP/2 connection with ${frame} frames (over ${MAX_CONTROL_FRAMES_PER_SECOND} in a second), a protocol violation by the peer (RFC 9113 §10.5)`;
      connection.session.destroy();
    }
  };
  connection.session.on('remoteSettings', () => count('SETTINGS'));
  connection.session.on('ping', () => count('PING'));
}

/** A protocol violation by the peer in an HTTP/2 error (nghttp2's flood detection among them), or null for other errors. */
function http2Violation(error: NodeJS.ErrnoException): string | null {
  if (error.code !== 'ERR_HTTP2_ERROR') return null;
  return /flood/i.test(error.message)
    ? 'it flooded the HTTP/2 connection with frames, a protocol violation by the peer (RFC 9113 §10.5)'
    : `it broke the HTTP/2 protocol (${error.message})`;
}

function isConnection(made: Connection | ExchangeOutcome): made is Connection {
  return made.kind === 'h2' || made.kind === 'http/1.1';
}
