/**
 * A real DNS server for tests: UDP and TCP on 127.0.0.1 (or ::1), one port (chosen by
 * the system), answering from a zone given as data. Names can be told to
 * misbehave (SERVFAIL, REFUSED, silence, truncation, stray replies) so that
 * resolver code is tested against the wire, not against mocks.
 *
 *   const server = await startDnsServer({
 *     records: [
 *       { name: 'example.test', type: 'A', ttl: 300, data: '192.0.2.1' },
 *       { name: 'example.test', type: 'MX', data: { preference: 10, exchange: 'mx.example.test' } },
 *       { name: 'example.test', type: 'TXT', data: ['v=spf1 ', '-all'] },
 *     ],
 *     behaviours: { 'broken.example.test': 'servfail' },
 *   });
 *   // server.address === '127.0.0.1:<port>'; server.queries lists what arrived.
 *
 * `data` is dns-packet's form of each type: a string for A, AAAA, NS,
 * CNAME, PTR; a string or array of strings for TXT (one element per
 * character string); objects for MX, SOA, SRV, CAA.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket, Packet, RecordType } from 'dns-packet';
import { listenOnSamePort } from './peers.js';
import { keyAnswer, rootAnswer, withSignatures, type ZoneKey } from './signed-root.js';

export interface ZoneRecord {
  /** Owner name, no trailing dot; matched case-insensitively. */
  name: string;
  type: RecordType;
  /** Seconds; default 300. */
  ttl?: number;
  data: unknown;
}

/**
 * What the server does for a name:
 * - `normal`: answers from the zone (NXDOMAIN / NODATA as the zone says), and
 *   truncates a UDP reply that exceeds the client's payload size (512 without EDNS).
 * - `servfail`, `refused`: that rcode, no records.
 * - `silent`: never answers (UDP nor TCP).
 * - `truncate`: over UDP, TC=1 with no records; over TCP, the full answer.
 * - `wrong-id-first`: a decoy reply (A 192.0.2.66) with another id, then the real one.
 * - `wrong-question-first`: a decoy reply with the right id but the question
 *   `decoy.invalid`, then the real one.
 * - `formerr-with-edns`: FORMERR to queries carrying an OPT record, normal without.
 */
export type NameBehaviour =
  | 'normal'
  | 'servfail'
  | 'refused'
  | 'silent'
  | 'truncate'
  | 'wrong-id-first'
  | 'wrong-question-first'
  | 'formerr-with-edns';

export interface DnsServerOptions {
  records?: ZoneRecord[];
  /** Per-name behaviour (name without trailing dot, any case). */
  behaviours?: Record<string, NameBehaviour>;
  /** Behaviour of names not listed in `behaviours`; default `normal`. */
  defaultBehaviour?: NameBehaviour;
  /** Wait this long before each reply, in milliseconds; default 0. */
  delayMs?: number;
  /** Loopback address to listen on; default 127.0.0.1. */
  host?: '127.0.0.1' | '::1';
  /**
   * Set the AD bit (RFC 4035 §3.2.3) in replies: for every name, or for the
   * names (any case, no trailing dot) the function says; default never.
   */
  authenticData?: boolean | ((name: string, type: string) => boolean);
  /**
   * A peer that misbehaves on purpose: the replies to send to a query, as
   * raw messages (over TCP each goes in a frame of its length, so an empty
   * message is a zero-length frame) or `{ zone: true }` for the answer the
   * zone gives; undefined answers from the zone as usual. The query is
   * logged either way.
   */
  script?: (query: DecodedPacket, transport: 'udp' | 'tcp') => ScriptedReply[] | undefined;
  /**
   * Answer as a resolver that passes DNSSEC records on: the root's DNSKEY
   * and the DS denials of top-level domains come signed from the test root
   * of signed-root.ts (trust anchor: TEST_ROOT_ANCHOR_FILE), so names of
   * the zone validate as unsigned. Default false: no DNSSEC records, as a
   * resolver that strips them.
   */
  signedRoot?: boolean;
  /** Zones below the root signed with keys of their own (signed-root.ts, `zoneKey`): their DNSKEY RRset, and RRSIGs on their answers when DO is set. */
  signedZones?: ZoneKey[];
}

/** One reply of a script, sent `afterMs` after the query (default 0). */
export type ScriptedReply = { message: Buffer; afterMs?: number } | { zone: true; afterMs?: number };

export interface LoggedQuery {
  transport: 'udp' | 'tcp';
  id: number;
  /** As received (case preserved), no trailing dot. */
  name: string;
  type: string;
  /** True when the query carried an EDNS OPT record. */
  edns: boolean;
}

export interface DnsTestServer {
  host: '127.0.0.1' | '::1';
  port: number;
  /** `127.0.0.1:<port>` or `[::1]:<port>`, the form resolver options take. */
  address: string;
  /** Every query received, in arrival order. */
  queries: LoggedQuery[];
  close(): Promise<void>;
}

/** The address the decoy replies carry, so tests can assert it never shows up. */
export const DECOY_ADDRESS = '192.0.2.66';

const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;

/** Starts the server on 127.0.0.1 (or ::1), UDP and TCP on the same free port. */
export async function startDnsServer(options: DnsServerOptions = {}): Promise<DnsTestServer> {
  const records = (options.records ?? []).map((r) => ({ ...r, name: lower(r.name) }));
  const behaviours = new Map(Object.entries(options.behaviours ?? {}).map(([name, b]) => [lower(name), b]));
  const defaultBehaviour = options.defaultBehaviour ?? 'normal';
  const delayMs = options.delayMs ?? 0;
  const host = options.host ?? '127.0.0.1';
  const authenticData = options.authenticData ?? false;
  const queries: LoggedQuery[] = [];
  const tcpSockets = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();

  function later(fn: () => void, ms: number): void {
    if (ms <= 0) {
      fn();
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  }

  /** The replies to send for one query, in order, each with a delay. */
  function respond(query: DecodedPacket, transport: 'udp' | 'tcp'): Array<{ message: Buffer; afterMs: number }> {
    const question = query.questions?.[0];
    if (!question) return [];
    const optIn = query.additionals?.find((rr) => rr.type === 'OPT');
    const edns = optIn !== undefined;
    const dnssecOk = optIn !== undefined && 'flag_do' in optIn && optIn.flag_do === true;
    queries.push({ transport, id: query.id ?? 0, name: question.name, type: question.type, edns });

    const scripted = options.script?.(query, transport);
    if (scripted !== undefined) {
      return scripted.flatMap((reply) =>
        'zone' in reply ? respondFromZone(query, transport).map((item) => ({ ...item, afterMs: item.afterMs + (reply.afterMs ?? 0) })) : [{ message: reply.message, afterMs: reply.afterMs ?? 0 }],
      );
    }
    return respondFromZone(query, transport);
  }

  /** The replies the zone and the name's behaviour give to one query. */
  function respondFromZone(query: DecodedPacket, transport: 'udp' | 'tcp'): Array<{ message: Buffer; afterMs: number }> {
    const question = query.questions![0]!;
    const optIn = query.additionals?.find((rr) => rr.type === 'OPT');
    const edns = optIn !== undefined;
    const dnssecOk = optIn !== undefined && 'flag_do' in optIn && optIn.flag_do === true;
    const behaviour = behaviours.get(lower(question.name)) ?? defaultBehaviour;
    if (behaviour === 'silent') return [];

    const ad = (typeof authenticData === 'function' ? authenticData(lower(question.name), question.type) : authenticData) ? dnsPacket.AUTHENTIC_DATA : 0;
    const base = (rcode: number, extraFlags = 0): Packet => ({
      type: 'response',
      id: query.id ?? 0,
      flags:
        dnsPacket.AUTHORITATIVE_ANSWER |
        ((query.flags ?? 0) & dnsPacket.RECURSION_DESIRED) |
        dnsPacket.RECURSION_AVAILABLE |
        ad |
        extraFlags |
        rcode,
      questions: [question],
      answers: [],
      authorities: [],
      additionals: edns
        ? [{ type: 'OPT', name: '.', udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 0, flags: options.signedRoot && dnssecOk ? dnsPacket.DNSSEC_OK : 0, flag_do: false, options: [] }]
        : [],
    });

    if (behaviour === 'servfail') return [{ message: dnsPacket.encode(base(RCODE.SERVFAIL)), afterMs: delayMs }];
    if (behaviour === 'refused') return [{ message: dnsPacket.encode(base(RCODE.REFUSED)), afterMs: delayMs }];
    if (behaviour === 'formerr-with-edns' && edns) {
      const formerr = base(RCODE.FORMERR);
      formerr.additionals = [];
      return [{ message: dnsPacket.encode(formerr), afterMs: delayMs }];
    }
    if (behaviour === 'truncate' && transport === 'udp') {
      return [{ message: dnsPacket.encode(base(RCODE.NOERROR, dnsPacket.TRUNCATED_RESPONSE)), afterMs: delayMs }];
    }

    const name = lower(question.name).replace(/\.$/, '');
    const zone = options.signedZones?.find((key) => name === key.apex || name.endsWith(`.${key.apex}`));
    const root = options.signedRoot ? rootAnswer(question.name, question.type, dnssecOk) : undefined;
    const signedAnswer = (): ReturnType<typeof lookupZone> => {
      if (zone && name === zone.apex && question.type === 'DNSKEY') return keyAnswer(zone, dnssecOk);
      const found = root ?? lookupZone(records, lower(question.name), question.type);
      return zone && dnssecOk ? { ...found, answers: withSignatures(found.answers, zone) } : found;
    };
    const lookup = signedAnswer();
    const reply = base(lookup.rcode);
    reply.answers = lookup.answers;
    reply.authorities = lookup.authorities;
    let message = dnsPacket.encode(reply);
    if (transport === 'udp') {
      const limit = optIn && 'udpPayloadSize' in optIn ? Math.max(512, optIn.udpPayloadSize) : 512;
      if (message.length > limit) {
        message = dnsPacket.encode(base(lookup.rcode, dnsPacket.TRUNCATED_RESPONSE));
      }
    }

    const decoyAnswer: Answer = { name: question.name, type: 'A', ttl: 1, data: DECOY_ADDRESS };
    if (behaviour === 'wrong-id-first') {
      const decoy = { ...base(RCODE.NOERROR), id: ((query.id ?? 0) + 1) & 0xffff, answers: [decoyAnswer] };
      return [
        { message: dnsPacket.encode(decoy), afterMs: delayMs },
        { message, afterMs: delayMs + 20 },
      ];
    }
    if (behaviour === 'wrong-question-first') {
      const decoy = {
        ...base(RCODE.NOERROR),
        questions: [{ ...question, name: 'decoy.invalid' }],
        answers: [{ ...decoyAnswer, name: 'decoy.invalid' }],
      };
      return [
        { message: dnsPacket.encode(decoy), afterMs: delayMs },
        { message, afterMs: delayMs + 20 },
      ];
    }
    return [{ message, afterMs: delayMs }];
  }

  function createUdp(): dgram.Socket {
    const socket = dgram.createSocket(host === '::1' ? 'udp6' : 'udp4');
    socket.on('message', (message, remote) => {
      let query: DecodedPacket;
      try {
        query = dnsPacket.decode(message);
      } catch {
        return;
      }
      for (const reply of respond(query, 'udp')) {
        later(() => socket.send(reply.message, remote.port, remote.address), reply.afterMs);
      }
    });
    return socket;
  }

  const tcp = net.createServer((socket) => {
    tcpSockets.add(socket);
    socket.on('close', () => tcpSockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let buffered: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const length = buffered.readUInt16BE(0);
        const message = buffered.subarray(2, 2 + length);
        buffered = buffered.subarray(2 + length);
        let query: DecodedPacket;
        try {
          query = dnsPacket.decode(message);
        } catch {
          socket.destroy();
          return;
        }
        for (const reply of respond(query, 'tcp')) {
          const frame = Buffer.alloc(2 + reply.message.length);
          frame.writeUInt16BE(reply.message.length, 0);
          reply.message.copy(frame, 2);
          later(() => {
            if (!socket.destroyed) socket.write(frame);
          }, reply.afterMs);
        }
      }
    });
  });

  const { udp, port } = await listenOnSamePort(host, createUdp, tcp);
  try {
    // Bulk tests send bursts of queries; the default buffer drops them.
    udp.setRecvBufferSize(4 * 1024 * 1024);
    udp.setSendBufferSize(4 * 1024 * 1024);
  } catch {
    // Keep the system default.
  }
  return {
    host,
    port,
    address: host === '::1' ? `[::1]:${port}` : `127.0.0.1:${port}`,
    queries,
    async close() {
      timers.forEach((timer) => clearTimeout(timer));
      tcpSockets.forEach((socket) => socket.destroy());
      await Promise.all([
        new Promise<void>((resolve) => udp.close(() => resolve())),
        new Promise<void>((resolve) => tcp.close(() => resolve())),
      ]);
    },
  };
}

/** Answers `type` at `name` from the zone, following CNAMEs inside it. */
function lookupZone(
  records: ZoneRecord[],
  name: string,
  type: string,
): { rcode: number; answers: Answer[]; authorities: Answer[] } {
  const answers: Answer[] = [];
  let current = name;
  for (let hop = 0; hop < 10; hop++) {
    const owned = records.filter((r) => r.name === current);
    const exact = owned.filter((r) => r.type === type);
    if (exact.length > 0) {
      answers.push(...exact.map(toAnswer));
      return { rcode: RCODE.NOERROR, answers, authorities: [] };
    }
    const cname = type === 'CNAME' ? undefined : owned.find((r) => r.type === 'CNAME');
    if (cname) {
      answers.push(toAnswer(cname));
      current = lower(String(cname.data));
      continue;
    }
    break;
  }
  // Negative answer: NXDOMAIN when no record is owned at or below the name
  // (an empty non-terminal exists, RFC 8020), with the zone's SOA (RFC 2308).
  const exists = records.some((r) => r.name === current || r.name.endsWith(`.${current}`));
  const soa = records
    .filter((r) => r.type === 'SOA' && (current === r.name || current.endsWith(`.${r.name}`)))
    .sort((a, b) => b.name.length - a.name.length)[0];
  return {
    rcode: exists ? RCODE.NOERROR : RCODE.NXDOMAIN,
    answers,
    authorities: soa ? [toAnswer(soa)] : [],
  };
}

function toAnswer(record: ZoneRecord): Answer {
  // dns-packet's encoders write into the data they are given (TXT strings
  // become Buffers), so each answer gets its own copy of the zone's data.
  // structuredClone turns a Buffer (TLSA certificate data) into a plain Uint8Array, which dns-packet refuses.
  const data = structuredClone(record.data) as unknown;
  if (record.data !== null && typeof record.data === 'object' && !Array.isArray(record.data) && data !== null && typeof data === 'object') {
    for (const [key, value] of Object.entries(record.data)) if (Buffer.isBuffer(value)) (data as Record<string, unknown>)[key] = Buffer.from(value);
  }
  return { name: record.name, type: record.type, ttl: record.ttl ?? 300, class: 'IN', data } as Answer;
}

function lower(name: string): string {
  const lowered = name.toLowerCase();
  return lowered.length > 1 && lowered.endsWith('.') ? lowered.slice(0, -1) : lowered;
}
