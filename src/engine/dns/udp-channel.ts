import dgram from 'node:dgram';
import { prepareQuery, randomQueryId, type DnsQuestion, type EdnsMode, type PreparedQuery } from './dns-message.js';
import { deadlineOutcome, takeReply, type ExchangeOutcome, type RepliesSeen } from './exchange-outcome.js';
import type { ResolverAddress } from './resolver-address.js';
import { unroutableReason } from './unroutable-address.js';

/**
 * One UDP socket to one resolver, shared by every query in flight to it.
 *
 * The socket is connected (connect(2)), so the kernel drops datagrams from
 * other sources and reports ICMP port/host unreachable as ECONNREFUSED /
 * EHOSTUNREACH, which a plain sendto() socket never sees. Replies are routed
 * to their query by message id; a reply is accepted only if its question
 * matches too (RFC 5452 §9.1), anything else is ignored and the query keeps
 * waiting until its own deadline. A malformed datagram with the query's id
 * is remembered, not taken: when no valid reply has come by the deadline,
 * the query ends as `malformed` instead of `timeout`.
 */
export interface UdpChannel {
  /**
   * Sends `question` once and calls `done` exactly once: with the matching
   * reply, or after the channel's timeout, or when the network refuses.
   * `done` may be called before `send` returns (a closed channel).
   */
  send(question: DnsQuestion, edns: EdnsMode, done: (outcome: ExchangeOutcome) => void): void;
  /** {@link UdpChannel.send} as a promise. Never rejects. */
  exchange(question: DnsQuestion, edns: EdnsMode): Promise<ExchangeOutcome>;
  /** Queries currently waiting for a reply. */
  readonly inFlight: number;
  /** Ends every waiting query as unreachable (`ECLOSED`) and closes the socket. */
  close(): Promise<void>;
}

/**
 * A query waiting for its reply. Waiting queries form a list in the order
 * they were sent, which is also the order of their deadlines (one timeout
 * per channel), so one timer at the head's deadline serves them all: a
 * bulk run does not create, arm and cancel a timer per query.
 */
class Waiting implements RepliesSeen {
  prev: Waiting | null = null;
  next: Waiting | null = null;
  ignoredReplies = 0;
  /** What was wrong with the first malformed reply that carried this query's id, null while none came. */
  malformed: string | null = null;

  constructor(
    readonly query: PreparedQuery,
    readonly deadline: number,
    public done: ((outcome: ExchangeOutcome) => void) | null,
  ) {}
}

/** A send that waits for the socket to open or for a free id. */
type Deferred = [question: DnsQuestion, edns: EdnsMode, done: (outcome: ExchangeOutcome) => void];

// The id space is 16 bits. Leaving a margin keeps random draws cheap and
// ids unguessable; further queries wait for a free slot.
const MAX_IN_FLIGHT = 50_000;

// Bulk runs receive bursts of replies; a larger kernel buffer avoids drops.
// The kernel caps this at net.core.rmem_max, which is fine.
const RECEIVE_BUFFER_BYTES = 4 * 1024 * 1024;

/**
 * The queries waiting for their reply: by id, and as a list in the order
 * they were sent, with the one timer that ends them at their deadline.
 */
class WaitingQueries {
  private readonly byId = new Map<number, Waiting>();
  private head: Waiting | null = null;
  private tail: Waiting | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly sweepDue = (): void => this.sweep();
  count = 0;

  /** `freed` runs when a query has ended, before its `done`: a query waiting for a slot may go. */
  constructor(
    private readonly timeoutMs: number,
    private readonly freed: () => void,
  ) {}

  /** Prepares the query under a free id and starts its wait. */
  add(question: DnsQuestion, edns: EdnsMode, done: (outcome: ExchangeOutcome) => void): PreparedQuery {
    const query = prepareQuery(this.freeId(), question, edns);
    const entry = new Waiting(query, performance.now() + this.timeoutMs, done);
    this.byId.set(query.id, entry);
    if (this.tail === null) this.head = entry;
    else {
      this.tail.next = entry;
      entry.prev = this.tail;
    }
    this.tail = entry;
    this.count += 1;
    if (this.timer === null) this.arm(this.timeoutMs);
    return query;
  }

  withId(id: number): Waiting | undefined {
    return this.byId.get(id);
  }

  all(): Waiting[] {
    const list: Waiting[] = [];
    for (let entry = this.head; entry !== null; entry = entry.next) list.push(entry);
    return list;
  }

  settle(entry: Waiting, outcome: ExchangeOutcome): void {
    const done = entry.done;
    if (done === null) return;
    entry.done = null;
    const id = entry.query.id;
    if (this.byId.get(id) === entry) this.byId.delete(id);
    if (entry.prev) entry.prev.next = entry.next;
    else this.head = entry.next;
    if (entry.next) entry.next.prev = entry.prev;
    else this.tail = entry.prev;
    entry.prev = null;
    entry.next = null;
    this.count -= 1;
    if (this.count === 0 && this.timer !== null) {
      // Nothing waits: the timer must not keep the process alive.
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.freed();
    done(outcome);
  }

  /** Ends the queries whose deadline has passed; runs at the head's deadline. */
  private sweep(): void {
    this.timer = null;
    const now = performance.now();
    while (this.head !== null && this.head.deadline <= now) {
      const head = this.head;
      // No valid reply came: a malformed one is what the resolver said (a spoofed one must not beat the real answer, so it is not taken earlier).
      this.settle(head, deadlineOutcome(head));
    }
    if (this.head !== null && this.timer === null) this.arm(this.head.deadline - now);
  }

  private arm(delayMs: number): void {
    // Timers may fire a little early against performance.now(); sweep()
    // re-arms for the rest instead of ending a query before its deadline.
    this.timer = setTimeout(this.sweepDue, Math.max(1, Math.ceil(delayMs)));
  }

  private freeId(): number {
    let id = randomQueryId();
    while (this.byId.has(id)) id = randomQueryId();
    return id;
  }
}

/** What opening a channel's socket reports back to the channel. */
interface SocketHooks {
  /** Whether the channel was closed while the socket connected. */
  isClosed(): boolean;
  /** Whether `socket` is still the channel's: errors of an abandoned socket are not the waiting queries'. */
  isCurrent(socket: dgram.Socket): boolean;
  onMessage(message: Buffer): void;
  onError(error: NodeJS.ErrnoException): void;
  /** The socket is connected, its replies go to onMessage. */
  opened(socket: dgram.Socket): void;
  /** No socket: the errno name, or `ECLOSED` when the channel was closed meanwhile. */
  failed(code: string): void;
}

/** Creates a UDP socket connected to the resolver and reports to `hooks` exactly once, opened or failed. */
function connectUdpSocket(resolver: ResolverAddress, hooks: SocketHooks): void {
  if (unroutableReason(resolver.host) !== null) {
    // Reported after the caller's send returns, as a connect error would be.
    queueMicrotask(() => hooks.failed('ENETUNREACH'));
    return;
  }
  const created = dgram.createSocket({ type: resolver.family === 6 ? 'udp6' : 'udp4' });
  const failConnect = (error: NodeJS.ErrnoException): void => {
    try {
      created.close();
    } catch {
      // Already closed.
    }
    hooks.failed(error.code ?? 'EIO');
  };
  let connecting = true;
  // Stays attached: a second 'error' (connect failing after bind failed,
  // or an error after close) must never become an uncaught exception.
  created.on('error', (error: NodeJS.ErrnoException) => {
    if (connecting) {
      connecting = false;
      failConnect(error);
    } else if (hooks.isCurrent(created)) {
      hooks.onError(error);
    }
  });
  // dgram hands a connect error to this callback, not to 'error' (Node's
  // doConnect): ignoring it meant sending on an unconnected socket, whose
  // send() then threw ERR_SOCKET_BAD_PORT inside this callback, an
  // uncaught exception (a link-local resolver without a zone, fe80::1;
  // an IPv6 resolver on a host without IPv6).
  const connected = (error?: Error | null): void => {
    if (!connecting) return;
    connecting = false;
    if (error) {
      failConnect(error as NodeJS.ErrnoException);
      return;
    }
    if (hooks.isClosed()) {
      created.close();
      hooks.failed('ECLOSED');
      return;
    }
    created.on('message', hooks.onMessage);
    try {
      created.setRecvBufferSize(RECEIVE_BUFFER_BYTES);
    } catch {
      // Keep the system default.
    }
    // The timer keeps the process alive while queries wait; an idle
    // channel must not.
    created.unref();
    hooks.opened(created);
  };
  try {
    created.connect(resolver.port, resolver.host, connected);
  } catch (error) {
    // A synchronous throw (a bad zone index, an address the family
    // cannot take) means the same as an asynchronous connect error.
    connecting = false;
    failConnect(error as NodeJS.ErrnoException);
  }
}

/** Sends `messages` on the connected `socket`; a send that fails goes to `failed`, which ends the waiting queries. */
function sendEach(socket: dgram.Socket, messages: readonly Buffer[], failed: (error: NodeJS.ErrnoException) => void): void {
  // The callback is needed to see a send error at all: without one, Node
  // drops an error that sendmsg(2) returns synchronously. On a connected
  // socket the kernel reports an earlier ICMP port unreachable as the
  // ECONNREFUSED of the next send (and only once), so two queries sent
  // back to back (A and AAAA, TXT and SPF) lost the refusal and waited for
  // their timeout, where a single query failed fast.
  const sent = (error: Error | null): void => {
    if (error) failed(error as NodeJS.ErrnoException);
  };
  for (const message of messages) {
    try {
      socket.send(message, sent);
    } catch (error) {
      // dgram throws at once on a socket it considers closed or on bad
      // arguments; for the waiting queries that is a failed send.
      failed(error as NodeJS.ErrnoException);
    }
  }
}

/**
 * Creates the channel; the socket is opened on the first send. Each query
 * waits up to `timeoutMs` milliseconds for its reply.
 */
export function createUdpChannel(resolver: ResolverAddress, timeoutMs: number): UdpChannel {
  const waitingForSlot: Deferred[] = [];
  let waitingForSocket: Deferred[] = [];
  let socket: dgram.Socket | null = null;
  /** The queries of this turn of the event loop, sent together at its end (sendOutgoing). */
  let outgoing: Buffer[] = [];
  let opening = false;
  let closed = false;
  const waiting = new WaitingQueries(timeoutMs, () => {
    const deferred = waitingForSlot.shift();
    if (deferred) send(deferred[0], deferred[1], deferred[2]);
  });

  function onMessage(message: Buffer): void {
    if (message.length < 2) return;
    const entry = waiting.withId((message[0]! << 8) | message[1]!);
    if (!entry) return;
    const reply = takeReply(entry, message, entry.query);
    if (reply !== null) waiting.settle(entry, reply);
  }

  function onError(error: NodeJS.ErrnoException): void {
    // An ICMP error cannot be tied to one query: it says the resolver's port
    // or host is unreachable, which holds for every query waiting on it.
    const code = error.code ?? 'EIO';
    for (const entry of waiting.all()) waiting.settle(entry, { kind: 'unreachable', code });
  }

  function open(): void {
    if (opening) return;
    opening = true;
    connectUdpSocket(resolver, {
      isClosed: () => closed,
      isCurrent: (candidate) => socket === candidate,
      onMessage,
      onError,
      opened(created) {
        opening = false;
        socket = created;
        const ready = waitingForSocket;
        waitingForSocket = [];
        for (const [question, edns, done] of ready) send(question, edns, done);
      },
      failed(code) {
        opening = false;
        const failed = waitingForSocket;
        waitingForSocket = [];
        for (const [, , done] of failed) done({ kind: 'unreachable', code });
      },
    });
  }

  function send(question: DnsQuestion, edns: EdnsMode, done: (outcome: ExchangeOutcome) => void): void {
    if (closed) {
      done({ kind: 'unreachable', code: 'ECLOSED' });
      return;
    }
    if (socket === null) {
      waitingForSocket.push([question, edns, done]);
      open();
      return;
    }
    if (waiting.count >= MAX_IN_FLIGHT) {
      waitingForSlot.push([question, edns, done]);
      return;
    }
    const query = waiting.add(question, edns, done);
    outgoing.push(query.message);
    if (outgoing.length === 1) setImmediate(sendOutgoing);
  }

  /**
   * Sends the queries of one turn of the event loop together, at its end:
   * a resolver woken by the first reads the rest while it is awake. Sent
   * one by one as replies arrived, each query woke the resolver again:
   * against a local resolver those sends were a quarter of a bulk run's
   * main-thread time (bench/README.md, History).
   */
  function sendOutgoing(): void {
    const messages = outgoing;
    outgoing = [];
    // Otherwise close() has ended their queries already.
    if (!closed && socket !== null) sendEach(socket, messages, onError);
  }

  return {
    get inFlight() {
      return waiting.count;
    },

    send,

    exchange(question, edns) {
      return new Promise<ExchangeOutcome>((resolve) => send(question, edns, resolve));
    },

    async close() {
      closed = true;
      for (const entry of waiting.all()) waiting.settle(entry, { kind: 'unreachable', code: 'ECLOSED' });
      for (const [, , done] of waitingForSlot.splice(0)) done({ kind: 'unreachable', code: 'ECLOSED' });
      const current = socket;
      socket = null;
      if (current) await new Promise<void>((resolve) => current.close(() => resolve()));
    },
  };
}
