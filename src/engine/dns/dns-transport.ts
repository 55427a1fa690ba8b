import type { Answer, DecodedPacket, RecordType } from 'dns-packet';
import { NetintelError, toNetintelError } from '../../errors.js';
import type { ConnectGuard } from '../connect-guard.js';
import { assertQueryName, type DnsQuestion, type DnsReply, type EdnsMode } from './dns-message.js';
import type { DnsAnswer, DnsTransportKind } from './dns-result.js';
import type { DohClient } from './doh-exchange.js';
import type { DotClient } from './dot-exchange.js';
import { DNS_TIMEOUTS, type DnsTimeoutEvent } from './dns-timeouts.js';
import type { ExchangeOutcome } from './exchange-outcome.js';
import { ipVersionOf } from '../address/ip-text.js';
import type { ResolverAddress } from './resolver-address.js';
import type { DnsRunMemory } from './dns-run-memory.js';
import { tcpExchange } from './tcp-exchange.js';
import { createUdpChannel, type UdpChannel } from './udp-channel.js';

/*
 * The DNS transport is written by hand on node:dgram and node:net; only the
 * wire format comes from dns-packet. node:dns is not used because it hides
 * response codes (SERVFAIL and REFUSED both become ESERVFAIL/EREFUSED
 * without the resolver that said it), gives TTLs only for A and AAAA, cannot
 * show a CNAME chain, and offers no control over EDNS, TCP or which reply
 * is accepted. DNS over HTTPS (RFC 8484) and over TLS (RFC 7858) are
 * further exchanges (doh-exchange.ts, dot-exchange.ts), chosen per
 * resolver by its protocol.
 */

/** How to reach the resolvers. */
export interface DnsTransportOptions {
  /** Resolvers in order of preference; the next one is tried on timeout, unreachable, SERVFAIL or REFUSED. */
  resolvers: readonly ResolverAddress[];
  /** Query classic resolvers over TCP only (default false: UDP, with TCP after a truncated reply); encrypted ones keep their protocol. */
  tcp?: boolean;
  /** Deadline of one attempt (one query to one resolver), in milliseconds (default 5000). */
  timeoutMs?: number;
  /** Further rounds over the resolvers after the first (default 2, like dig's +retry=2). */
  retries?: number;
  /** Send an EDNS0 OPT record advertising a 1232-octet UDP payload (default true). */
  edns?: boolean;
  /**
   * Ask with the DO bit (`'dnssec'`, RFC 4035 §3.2.1), or with DO and CD
   * (`'dnssec-cd'`, §3.2.2) for a caller that validates the answers itself.
   */
  dnssec?: 'dnssec' | 'dnssec-cd';
  /**
   * Judges each resolver's address before any socket opens to it: set for a
   * resolver a caller chose (the server's `resolver=`), absent for the
   * operator's own. Resolvers are IP literals that nothing resolves again,
   * so the address judged here is the one every UDP and TCP exchange
   * connects to.
   */
  connectGuard?: ConnectGuard | null;
  /**
   * What the run has learnt about its resolvers and DNSSEC questions
   * (dns-run-memory.ts), shared with the run's other transports: demoted
   * resolvers are asked last and with a short probe, and a DNSKEY or DS
   * question of a `dnssec` transport that failed earlier in the run fails
   * again at once. Absent or null: this transport learns nothing and asks
   * every resolver in order with the full timeout.
   */
  memory?: DnsRunMemory | null;
}

/** The accepted response to one question. */
export interface DnsExchange {
  /** The decoded response (dns-packet's form), decoded on first use. */
  response: DecodedPacket;
  /**
   * The answer section as typed answers (see toDnsAnswer): the records of the
   * name asked and of the names on its CNAME/DNAME chain, in answer order;
   * records for other names or of another type are left out (answer-chain.ts).
   */
  answers: DnsAnswer[];
  /** `answers` in dns-packet's form, for types netintel does not model. */
  answerRecords: Answer[];
  /** How many records of the answer section were for names off the question's chain, and left out. */
  ignored_answers: number;
  /** The response as received, for readers of the wire form (DNSSEC canonical data). */
  message: Buffer;
  /** Its response code: `NOERROR` or `NXDOMAIN` (other codes are thrown as errors). */
  rcode: string;
  /** The resolver that answered, as its label (`192.0.2.53:53`). */
  resolver: string;
  transport: DnsTransportKind;
  /** From the first query sent to this response, in milliseconds (0.1 ms resolution). */
  latencyMs: number;
}

/** Sends questions to resolvers; one instance serves any number of concurrent queries. */
export interface DnsTransport {
  readonly resolvers: readonly ResolverAddress[];
  /**
   * Asks `name` (ASCII, see normaliseDomain) of type `type`, class IN, with
   * recursion desired. NXDOMAIN is a response, not an error.
   *
   * @throws NetintelError `upstream` when every resolver that answered said
   *   SERVFAIL, REFUSED or another error code (details: rcode, resolver,
   *   attempts), sent only malformed replies, or gave a referral instead of
   *   recursing; `timeout` when none answered in time; `unreachable` when
   *   every resolver was refused or had no route; `invalid_input` for a name
   *   that cannot be encoded. Messages name the domain and the resolver.
   */
  query(name: string, type: RecordType): Promise<DnsExchange>;
  /**
   * {@link DnsTransport.query} with a callback instead of a promise: `done`
   * is called exactly once, with the exchange or with the error query()
   * rejects with; it may be called before `ask` returns (a name that cannot
   * be encoded, a closed transport). Bulk runs ask tens of
   * thousands of questions; this path makes no promise for the usual one
   * (the first resolver answers the first UDP query).
   */
  ask(name: string, type: RecordType, done: DnsAnswerCallback): void;
  /** Closes the sockets; queries still waiting fail as `unreachable`, later ones as `internal`. */
  close(): Promise<void>;
}

/** How {@link DnsTransport.ask} reports: an error, or null and the exchange. */
export type DnsAnswerCallback = (error: NetintelError | null, exchange: DnsExchange | null) => void;

/** One failed attempt, as listed in error details. */
interface AttemptRecord {
  resolver: string;
  transport: DnsTransportKind;
  /**
   * `rcode`: the server answered with an error code; `unreachable`: the
   * network refused; `tls`: the TLS handshake failed; `protocol`: the
   * answer over HTTPS or TLS was not a DNS message; `malformed`: the only
   * replies were malformed DNS messages; `referral`: the server does not
   * recurse and gave a referral instead of an answer; `refused`: the
   * connect guard refused the address the resolver's name resolved to.
   */
  outcome: 'rcode' | 'timeout' | 'unreachable' | 'tls' | 'protocol' | 'malformed' | 'referral' | 'refused';
  /**
   * The rcode (`SERVFAIL`), `timeout`, the errno name (`ECONNREFUSED`), what
   * went wrong over TLS or HTTPS, what is malformed, or the name servers of
   * a referral (comma-separated).
   */
  reason: string;
  /** Replies with the right source but a wrong id or question, ignored while waiting. */
  ignoredReplies?: number;
  /** Present (true) when the attempt was the short probe of a demoted resolver (dns-run-memory.ts). */
  probe?: true;
}

const DEFAULT_TIMEOUT_MS = 5000;
const DEFAULT_RETRIES = 2;

// Response codes that are answers; anything else means this resolver could
// not or would not answer and the next one may.
const ANSWER_RCODES = new Set(['NOERROR', 'NXDOMAIN']);

/**
 * Creates a transport over the given resolvers. Sockets open on first use;
 * call `close()` when done (an idle transport does not keep the process
 * alive, but open sockets are released only by close).
 *
 * Order of attempts: each round asks the resolvers in order, moving on at
 * once after a timeout, an unreachable resolver or an error rcode; a
 * resolver that was unreachable or gave an error rcode is not asked again
 * for that question. Up to `1 + retries` rounds. With a run memory, the
 * order of each round puts demoted resolvers last, and their attempts are
 * short probes (see dns-run-memory.ts); a timeout is reported to the
 * memory, which demotes a resolver that answered nothing since.
 *
 * @throws NetintelError `usage` when `resolvers` is empty or the timeout or
 *   retry count is not a sensible number; what `connectGuard` throws for a
 *   refused resolver (`forbidden`).
 */
export function createDnsTransport(options: DnsTransportOptions): DnsTransport {
  const settings = transportSettings(options);
  const { resolvers, useTcp, useEdns, memory } = settings;
  const connections = createConnections(settings);

  function ask(name: string, type: RecordType, done: DnsAnswerCallback): void {
    if (connections.closed) {
      done(new NetintelError('internal', `DNS transport used after close (query for ${name} ${type})`), null);
      return;
    }
    try {
      assertQueryName(name);
    } catch (error) {
      done(toNetintelError(error), null);
      return;
    }
    const chainKey = memory && options.dnssec && (type === 'DNSKEY' || type === 'DS') ? `${options.dnssec} ${resolvers.map((item) => item.label).join(',')} ${name.toLowerCase()} ${type}` : null;
    if (chainKey === null) {
      send({ name, type }, done);
      return;
    }
    // A DNSSEC chain question that failed earlier in the run fails again at once (dns-run-memory.ts).
    const known = memory!.chainFailure(chainKey);
    if (known) {
      done(known, null);
      return;
    }
    send({ name, type }, (error, exchange) => {
      // A failure from closing this transport says nothing about the question.
      if (error !== null && error.code !== 'internal' && !connections.closed) memory!.rememberChainFailure(chainKey, error);
      done(error, exchange);
    });
  }

  /** Sends a question that passed the checks of {@link ask}. */
  function send(question: DnsQuestion, done: DnsAnswerCallback): void {
    const started = performance.now();
    const order = settings.inOrder();
    const resolver = order[0]!;
    if (useTcp || (resolver.protocol ?? 'dns') !== 'dns') {
      resolveQuestionThen(question, started, order, null, false, done);
      return;
    }
    // The common case: the first resolver answers the first UDP query with
    // NOERROR or NXDOMAIN, untruncated. Anything else continues in
    // resolveQuestion from that first outcome.
    const probe = settings.demoted(resolver);
    connections.channelFor(resolver, probe).send(question, useEdns, (outcome) => {
      if (outcome.kind === 'reply' && !outcome.truncated && outcome.referral === null) {
        const rcode = outcome.rcode;
        if (rcode === 'NOERROR' || rcode === 'NXDOMAIN') {
          memory?.answered(resolver);
          done(null, new Exchange(outcome, rcode, resolver.label, 'udp', elapsedMs(started)));
          return;
        }
      }
      resolveQuestionThen(question, started, order, outcome, probe, done);
    });
  }

  /** {@link resolveQuestion}, reported to a callback. */
  function resolveQuestionThen(
    question: DnsQuestion,
    started: number,
    order: readonly ResolverAddress[],
    first: ExchangeOutcome | null,
    firstProbe: boolean,
    done: DnsAnswerCallback,
  ): void {
    resolveQuestion(settings, connections, { question, started, order, first, firstProbe }).then(
      (exchange) => done(null, exchange),
      (error: unknown) => done(toNetintelError(error), null),
    );
  }

  return {
    resolvers,

    query(name, type) {
      return new Promise<DnsExchange>((resolve, reject) =>
        ask(name, type, (error, exchange) => (error === null ? resolve(exchange!) : reject(error))),
      );
    },

    ask,

    close: () => connections.close(),
  };
}

/** A transport's options, checked, with its run memory's view of each resolver. */
interface TransportSettings {
  readonly resolvers: readonly ResolverAddress[];
  readonly timeoutMs: number;
  /** The deadline of a demoted resolver's probe (timeoutMs without a run memory). */
  readonly probeMs: number;
  readonly retries: number;
  readonly useTcp: boolean;
  readonly useEdns: EdnsMode;
  readonly guard: ConnectGuard | null;
  readonly memory: DnsRunMemory | null;
  /** Whether the resolver's attempts are probes. */
  demoted(resolver: ResolverAddress): boolean;
  /** The resolvers in the order a round asks them. */
  inOrder(): readonly ResolverAddress[];
}

function transportSettings(options: DnsTransportOptions): TransportSettings {
  const resolvers = [...options.resolvers];
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const retries = options.retries ?? DEFAULT_RETRIES;
  if (resolvers.length === 0) throw new NetintelError('usage', 'no DNS resolver to ask');
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    throw new NetintelError('usage', `the DNS timeout must be a positive number of milliseconds, not ${timeoutMs}`);
  }
  if (!(Number.isInteger(retries) && retries >= 0)) {
    throw new NetintelError('usage', `the DNS retry count must be a whole number from 0, not ${retries}`);
  }
  // A host name (DNS over HTTPS or TLS) is judged by the addresses it resolves to, when the connection is made.
  const guard = options.connectGuard ?? null;
  for (const resolver of resolvers) if (ipVersionOf(resolver.host) !== 0) guard?.(resolver.host, { what: 'DNS resolver', port: resolver.port });
  const memory = options.memory ?? null;
  const probeMs = memory ? memory.probeTimeoutMs(timeoutMs) : timeoutMs;
  return {
    resolvers,
    timeoutMs,
    probeMs,
    retries,
    useTcp: options.tcp ?? false,
    useEdns: options.dnssec ?? options.edns ?? true,
    guard,
    memory,
    // A demoted resolver's attempts are probes: shorter than the others' (with a deadline under a second, they are the same).
    demoted: (resolver) => probeMs < timeoutMs && (memory?.isDemoted(resolver) ?? false),
    inOrder: () => (memory ? memory.order(resolvers) : resolvers),
  };
}

/** The sockets and clients of a transport, opened on first use. */
interface ResolverConnections {
  readonly closed: boolean;
  encryptedClientFor(resolver: ResolverAddress): Promise<DohClient | DotClient>;
  channelFor(resolver: ResolverAddress, probe: boolean): UdpChannel;
  close(): Promise<void>;
}

function createConnections(settings: TransportSettings): ResolverConnections {
  const encryptedClients = new Map<ResolverAddress, Promise<DohClient | DotClient>>();
  // One channel per resolver and deadline: a channel's queries share one timeout (udp-channel.ts), so a demoted resolver's probes go through a channel of their own.
  const channels = new Map<ResolverAddress, UdpChannel>();
  const probeChannels = new Map<ResolverAddress, UdpChannel>();
  let closed = false;
  return {
    get closed() {
      return closed;
    },
    encryptedClientFor(resolver) {
      let client = encryptedClients.get(resolver);
      if (!client) {
        // Loaded on first use: their TLS and HTTP/2 modules cost a classic DNS run several milliseconds of start-up.
        client =
          resolver.protocol === 'https'
            ? import('./doh-exchange.js').then(({ createDohClient }) => createDohClient(resolver, settings.guard))
            : import('./dot-exchange.js').then(({ createDotClient }) => createDotClient(resolver, settings.guard));
        encryptedClients.set(resolver, client);
      }
      return client;
    },
    channelFor(resolver, probe) {
      const map = probe ? probeChannels : channels;
      let channel = map.get(resolver);
      if (!channel) {
        channel = createUdpChannel(resolver, probe ? settings.probeMs : settings.timeoutMs);
        map.set(resolver, channel);
      }
      return channel;
    },
    async close() {
      closed = true;
      const open = [...channels.values(), ...probeChannels.values()];
      channels.clear();
      probeChannels.clear();
      const clients = [...encryptedClients.values()];
      encryptedClients.clear();
      // A client that never loaded has nothing to close (its queries got the loading error).
      await Promise.all([...open.map((channel) => channel.close()), ...clients.map((client) => client.then((loaded) => loaded.close(), () => undefined))]);
    },
  };
}

/** One question on its way: when it was first sent, to whom, and what came of that first UDP exchange if it was made. */
interface QuestionStart {
  question: DnsQuestion;
  /** performance.now() when the first query was sent. */
  started: number;
  order: readonly ResolverAddress[];
  /** The outcome of the first UDP exchange with the first resolver of `order`, when it has already been made. */
  first: ExchangeOutcome | null;
  /** Whether that first exchange was a probe. */
  firstProbe: boolean;
}

/** Every attempt of one question: rounds over the resolvers as described at createDnsTransport. */
async function resolveQuestion(settings: TransportSettings, connections: ResolverConnections, start: QuestionStart): Promise<DnsExchange> {
  const { question, started } = start;
  const { resolvers, retries, memory } = settings;
  const attempts: AttemptRecord[] = [];
  const givenUp = new Set<ResolverAddress>();
  let seed = start.first;
  let roundOrder = start.order;

  for (let round = 0; round <= retries && givenUp.size < resolvers.length; round++) {
    if (round > 0) roundOrder = settings.inOrder();
    for (const resolver of roundOrder) {
      if (givenUp.has(resolver)) continue;
      const probe = seed !== null ? start.firstProbe : settings.demoted(resolver);
      const sentAt = seed !== null ? started : performance.now();
      const { outcome, transport } = await attempt(settings, connections, resolver, question, seed, probe);
      seed = null;
      if (outcome.kind === 'reply') {
        memory?.answered(resolver);
        const rcode = outcome.rcode;
        if (outcome.referral !== null) {
          // A server that does not recurse answers nothing a stub can use: the next resolver may.
          attempts.push({ resolver: resolver.label, transport, outcome: 'referral', reason: outcome.referral.join(', ') });
          givenUp.add(resolver);
          continue;
        }
        if (ANSWER_RCODES.has(rcode)) return new Exchange(outcome, rcode, resolver.label, transport, elapsedMs(started));
        attempts.push({ resolver: resolver.label, transport, outcome: 'rcode', reason: rcode });
        givenUp.add(resolver);
      } else if (outcome.kind === 'unreachable') {
        attempts.push({ resolver: resolver.label, transport, outcome: 'unreachable', reason: outcome.code });
        givenUp.add(resolver);
      } else if (outcome.kind === 'failed') {
        attempts.push({ resolver: resolver.label, transport, outcome: outcome.failure, reason: outcome.reason });
        givenUp.add(resolver);
      } else {
        memory?.timedOut(resolver, sentAt, probe ? settings.probeMs : settings.timeoutMs);
        if (DNS_TIMEOUTS.hasSubscribers) DNS_TIMEOUTS.publish({ resolver: resolver.label, transport } satisfies DnsTimeoutEvent);
        attempts.push({
          resolver: resolver.label,
          transport,
          outcome: 'timeout',
          reason: 'timeout',
          ...(outcome.ignoredReplies > 0 ? { ignoredReplies: outcome.ignoredReplies } : {}),
          ...(probe ? { probe: true as const } : {}),
        });
      }
    }
  }
  throw failure(question.name, question.type, attempts, settings.timeoutMs, settings.probeMs);
}

/**
 * One attempt against one resolver, including TCP after TC=1 and the
 * RFC 6891 §7 FORMERR fallback. `first` is the outcome of the first UDP
 * exchange when it has already been made; `probe`: the resolver is
 * demoted and gets the short deadline.
 */
async function attempt(
  settings: TransportSettings,
  connections: ResolverConnections,
  resolver: ResolverAddress,
  question: DnsQuestion,
  first: ExchangeOutcome | null,
  probe: boolean,
): Promise<{ outcome: ExchangeOutcome; transport: DnsTransportKind }> {
  const { useTcp } = settings;
  let edns = settings.useEdns;
  let given = first;
  const deadline = probe ? settings.probeMs : settings.timeoutMs;
  if (resolver.protocol === 'https' || resolver.protocol === 'tls') {
    const transport: DnsTransportKind = resolver.protocol;
    for (;;) {
      const outcome = await (await connections.encryptedClientFor(resolver)).exchange(question, edns, deadline);
      if (edns && outcome.kind === 'reply' && outcome.rcode === 'FORMERR') {
        edns = false;
        continue;
      }
      return { outcome, transport };
    }
  }
  for (;;) {
    let transport: DnsTransportKind = useTcp ? 'tcp' : 'udp';
    let outcome: ExchangeOutcome;
    if (given !== null) {
      outcome = given;
      given = null;
    } else {
      outcome = useTcp
        ? await tcpExchange(resolver, question, edns, deadline)
        : await connections.channelFor(resolver, probe).exchange(question, edns);
    }
    if (outcome.kind === 'reply' && transport === 'udp' && outcome.truncated) {
      // RFC 1035 §4.2.1, RFC 7766 §5: a truncated UDP reply is retried over TCP.
      transport = 'tcp';
      outcome = await tcpExchange(resolver, question, edns, deadline);
    }
    // A server that does not know EDNS may answer FORMERR; ask again without it.
    if (edns && outcome.kind === 'reply' && outcome.rcode === 'FORMERR') {
      edns = false;
      continue;
    }
    return { outcome, transport };
  }
}

/** An accepted response; dns-packet's decoding of it is made only if someone reads `response`. */
class Exchange implements DnsExchange {
  constructor(
    private readonly reply: DnsReply,
    readonly rcode: string,
    readonly resolver: string,
    readonly transport: DnsTransportKind,
    readonly latencyMs: number,
  ) {}

  get message(): Buffer {
    return this.reply.message;
  }

  get response(): DecodedPacket {
    return this.reply.packet;
  }

  get answers(): DnsAnswer[] {
    return this.reply.answers;
  }

  get answerRecords(): Answer[] {
    return this.reply.answerRecords;
  }

  get ignored_answers(): number {
    return this.reply.ignored_answers;
  }
}

/** Milliseconds since `started` (performance.now()), to 0.1 ms. */
function elapsedMs(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}

/**
 * The one error for a question no resolver answered. An error rcode outranks
 * a timeout (a server did speak), a timeout outranks unreachable.
 */
function failure(name: string, type: RecordType, attempts: AttemptRecord[], timeoutMs: number, probeMs: number): NetintelError {
  const question = `${name} ${type}`;
  const rcodeFailure = [...attempts].reverse().find((a) => a.outcome === 'rcode');
  const timeouts = attempts.filter((a) => a.outcome === 'timeout');
  const details = { domain: name, type, attempts };
  // A refusal to connect is the caller's answer, whatever the other resolvers did.
  const refusal = attempts.find((a) => a.outcome === 'refused');
  if (refusal) return new NetintelError('forbidden', refusal.reason, { details: { ...details, resolver: refusal.resolver, rule: 'private-target' } });
  // A server that spoke, but not DNS, outranks a handshake that failed, which outranks silence.
  const protocolFailure = rcodeFailure ? undefined : [...attempts].reverse().find((a) => a.outcome === 'protocol' || a.outcome === 'malformed');
  const tlsFailure = rcodeFailure || protocolFailure ? undefined : [...attempts].reverse().find((a) => a.outcome === 'tls');
  if (protocolFailure?.outcome === 'malformed') {
    return new NetintelError('upstream', `malformed reply from DNS server ${protocolFailure.resolver} for ${question}: ${protocolFailure.reason}`, {
      details: { ...details, resolver: protocolFailure.resolver, malformed: protocolFailure.reason },
    });
  }
  if (protocolFailure) {
    return new NetintelError('upstream', `DNS server ${protocolFailure.resolver} did not answer ${question} with a DNS message: ${protocolFailure.reason}`, {
      details: { ...details, resolver: protocolFailure.resolver },
    });
  }
  if (tlsFailure) {
    return new NetintelError('tls', `TLS with DNS server ${tlsFailure.resolver} failed for ${question}: ${tlsFailure.reason}`, {
      details: { ...details, resolver: tlsFailure.resolver },
    });
  }

  if (rcodeFailure) {
    return new NetintelError(
      'upstream',
      `DNS server ${rcodeFailure.resolver} answered ${rcodeFailure.reason} for ${question}`,
      { details: { ...details, rcode: rcodeFailure.reason, resolver: rcodeFailure.resolver } },
    );
  }
  const referral = [...attempts].reverse().find((a) => a.outcome === 'referral');
  if (referral) {
    return new NetintelError(
      'upstream',
      `DNS server ${referral.resolver} is not a recursive resolver: it answered ${question} with a referral to ${referral.reason} (recursion not available), not with an answer`,
      { details: { ...details, resolver: referral.resolver, referral: referral.reason.split(', ') } },
    );
  }
  if (timeouts.length > 0) {
    const servers = [...new Set(timeouts.map((a) => a.resolver))];
    const ignored = timeouts.reduce((sum, a) => sum + (a.ignoredReplies ?? 0), 0);
    const probes = timeouts.filter((a) => a.probe).length;
    // A server that answered nothing earlier in the run was only given a short probe: the message says so, not the full deadline.
    const within = probes === timeouts.length ? probeMs : timeoutMs;
    const probed = probes === timeouts.length ? (probes === 1 ? 'a short probe' : 'short probes') : probes === 1 ? '1 of them a short probe' : `${probes} of them short probes`;
    const probeNote = probes === 0 ? '' : `, ${probed} of a server that had not answered earlier in the run`;
    return new NetintelError(
      'timeout',
      `no answer from ${serverList(servers)} for ${question} within ${within} ms ` +
        `(${plural(attempts.length, 'attempt')}${probeNote}${ignored > 0 ? `, ${plural(ignored, 'mismatched reply', 'mismatched replies')} ignored` : ''})`,
      { details: { ...details, resolver: servers[0], timeout_ms: within } },
    );
  }
  const last = attempts[attempts.length - 1];
  const servers = [...new Set(attempts.map((a) => a.resolver))];
  return new NetintelError(
    'unreachable',
    `cannot reach ${serverList(servers)} for ${question} (${last?.reason ?? 'EIO'})`,
    { details: { ...details, resolver: last?.resolver ?? servers[0] } },
  );
}

function serverList(servers: string[]): string {
  return `${servers.length === 1 ? 'DNS server' : 'DNS servers'} ${servers.join(', ')}`;
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}
