import dgram from 'node:dgram';
import { answersQuestion, decodeMessage, encodeQuery, randomQueryId, type DnsQuestion } from './dns-message.js';
import type { ExchangeOutcome } from './exchange-outcome.js';
import type { ResolverAddress } from './resolver-address.js';

/**
 * One UDP socket to one resolver, shared by every query in flight to it.
 *
 * The socket is connected (connect(2)), so the kernel drops datagrams from
 * other sources and reports ICMP port/host unreachable as ECONNREFUSED /
 * EHOSTUNREACH, which a plain sendto() socket never sees. Replies are routed
 * to their query by message id; a reply is accepted only if its question
 * matches too (RFC 5452 §9.1), anything else is ignored and the query keeps
 * waiting until its own deadline.
 */
export interface UdpChannel {
  /** Sends `question` once and waits up to `timeoutMs` for the matching reply. Never rejects. */
  exchange(question: DnsQuestion, edns: boolean, timeoutMs: number): Promise<ExchangeOutcome>;
  /** Queries currently waiting for a reply. */
  readonly inFlight: number;
  /** Ends every waiting query as unreachable (`ECLOSED`) and closes the socket. */
  close(): Promise<void>;
}

interface Pending {
  id: number;
  question: DnsQuestion;
  timer: NodeJS.Timeout;
  ignoredReplies: number;
  settled: boolean;
  resolve(outcome: ExchangeOutcome): void;
}

// The id space is 16 bits. Leaving a margin keeps random draws cheap and
// ids unguessable; further queries wait for a free slot.
const MAX_IN_FLIGHT = 50_000;

// Bulk runs receive bursts of replies; a larger kernel buffer avoids drops.
// The kernel caps this at net.core.rmem_max, which is fine.
const RECEIVE_BUFFER_BYTES = 4 * 1024 * 1024;

/** Creates the channel; the socket is opened on the first exchange. */
export function createUdpChannel(resolver: ResolverAddress): UdpChannel {
  const pending = new Map<number, Pending>();
  const waitingForSlot: Array<() => void> = [];
  let socket: dgram.Socket | null = null;
  let ready: Promise<dgram.Socket> | null = null;
  let closed = false;

  function settle(entry: Pending, outcome: ExchangeOutcome): void {
    if (entry.settled) return;
    entry.settled = true;
    clearTimeout(entry.timer);
    if (pending.get(entry.id) === entry) pending.delete(entry.id);
    waitingForSlot.shift()?.();
    entry.resolve(outcome);
  }

  function onMessage(message: Buffer): void {
    if (message.length < 12) return;
    const entry = pending.get(message.readUInt16BE(0));
    if (!entry) return;
    const packet = decodeMessage(message);
    if (!packet || !answersQuestion(packet, entry.question)) {
      entry.ignoredReplies += 1;
      return;
    }
    settle(entry, { kind: 'reply', packet });
  }

  function onError(error: NodeJS.ErrnoException): void {
    // An ICMP error cannot be tied to one query: it says the resolver's port
    // or host is unreachable, which holds for every query waiting on it.
    const code = error.code ?? 'EIO';
    for (const entry of [...pending.values()]) settle(entry, { kind: 'unreachable', code });
  }

  function open(): Promise<dgram.Socket> {
    ready ??= new Promise<dgram.Socket>((resolve, reject) => {
      const created = dgram.createSocket({ type: resolver.family === 6 ? 'udp6' : 'udp4' });
      const failConnect = (error: Error): void => reject(error);
      created.once('error', failConnect);
      created.connect(resolver.port, resolver.host, () => {
        created.off('error', failConnect);
        if (closed) {
          created.close();
          reject(Object.assign(new Error('channel closed'), { code: 'ECLOSED' }));
          return;
        }
        created.on('error', onError);
        created.on('message', onMessage);
        try {
          created.setRecvBufferSize(RECEIVE_BUFFER_BYTES);
        } catch {
          // Keep the system default.
        }
        // Pending timers keep the process alive while queries wait; an idle
        // channel must not.
        created.unref();
        socket = created;
        resolve(created);
      });
    });
    return ready;
  }

  function freeId(): number {
    let id = randomQueryId();
    while (pending.has(id)) id = randomQueryId();
    return id;
  }

  return {
    get inFlight() {
      return pending.size;
    },

    async exchange(question, edns, timeoutMs) {
      if (closed) return { kind: 'unreachable', code: 'ECLOSED' };
      let connected: dgram.Socket;
      try {
        connected = await open();
      } catch (error) {
        ready = null;
        return { kind: 'unreachable', code: (error as NodeJS.ErrnoException).code ?? 'EIO' };
      }
      while (pending.size >= MAX_IN_FLIGHT) {
        await new Promise<void>((resolve) => waitingForSlot.push(resolve));
      }
      if (closed) return { kind: 'unreachable', code: 'ECLOSED' };

      const id = freeId();
      const query = encodeQuery(id, question, edns);
      return new Promise<ExchangeOutcome>((resolve) => {
        const entry: Pending = {
          id,
          question,
          ignoredReplies: 0,
          settled: false,
          resolve,
          timer: setTimeout(() => settle(entry, { kind: 'timeout', ignoredReplies: entry.ignoredReplies }), timeoutMs),
        };
        pending.set(id, entry);
        // Without a callback Node sends at once (uv_udp_try_send) instead of
        // queueing a request per datagram; a send error then arrives as an
        // 'error' event, which fails the waiting queries like an ICMP error.
        connected.send(query);
      });
    },

    async close() {
      closed = true;
      for (const entry of [...pending.values()]) settle(entry, { kind: 'unreachable', code: 'ECLOSED' });
      waitingForSlot.splice(0).forEach((wake) => wake());
      const current = socket;
      socket = null;
      ready = null;
      if (current) await new Promise<void>((resolve) => current.close(() => resolve()));
    },
  };
}
