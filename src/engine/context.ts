import type { ConnectGuard } from './connect-guard.js';
import type { FanOutLimits } from './fan-out.js';
import type { DnsTransport } from './dns/dns-transport.js';
import { createDnsRunMemory, type DnsRunMemory } from './dns/dns-run-memory.js';
import type { ResolverAddress } from './dns/resolver-address.js';
import { reportStage, type Stage } from './stage.js';

/**
 * Everything the engine needs from the outside world comes through one
 * context object, so tests can hand it real local servers, a fixed clock or
 * a data directory of fixtures. The engine never reads `process` itself.
 */
export interface EngineContext {
  /** A user data directory whose files override the bundled datasets (null: bundled only). */
  dataDir: string | null;
  /** Deadline for one network lookup, in milliseconds. */
  timeoutMs: number;
  /** DNS resolvers to ask, in order (null: the system's, from resolv.conf). */
  resolvers: readonly ResolverAddress[] | null;
  /** Ask DNS over TCP only. */
  dnsTcp: boolean;
  /** Further rounds over the resolvers after a failed first one. */
  dnsRetries: number;
  /**
   * Aborted when the work in progress should stop (a server shutting down):
   * DNS transports made for one operation close on it, ending their queries.
   */
  signal?: AbortSignal;
  /** The clock; injected so that tests and rate limits can control time. */
  now(): Date;
  /**
   * Checks every address a probe is about to connect to (SMTP, the MTA-STS
   * policy host) just before connecting; absent or null lets every address
   * through (the CLI: its user may probe their own network). `netintel
   * serve` sets the public-target guard (SSRF: docs/design.md, The
   * public-target guard). DNS resolvers of the context are the operator's
   * and are not checked; a transport for a caller-chosen resolver takes the
   * guard itself.
   */
  connectGuard?: ConnectGuard | null;
  /**
   * How far one check may fan out from DNS answers: MX hosts, addresses per
   * host, SMTP connections (fan-out.ts). Absent or null: DEFAULT_FAN_OUT.
   * `netintel serve` sets its own, which callers cannot raise.
   */
  fanOut?: FanOutLimits | null;
  /**
   * Told when a network wait begins (a DNS question, an SMTP stage, a
   * policy fetch, a blocklist round), so a front end can show progress.
   * Absent: nobody listens.
   */
  onStage?: (stage: Stage) => void;
  /**
   * What this context's lookups have learnt about the resolvers and the
   * DNSSEC chain (dns-run-memory.ts): every transport made from the context
   * shares it, so a resolver that stopped answering is asked last, and a
   * root DNSKEY that could not be fetched is not waited for again. Absent:
   * each transport starts from nothing.
   */
  dnsMemory?: DnsRunMemory;
  /**
   * Told once per resolver when it first lets a query time out without
   * answering anything else (it is then demoted, see dns-run-memory.ts): its
   * label and the deadline it missed, so that a front end can say once what
   * to do about it. Absent: nobody listens.
   */
  onResolverSilent?: (resolver: string, timeoutMs: number) => void;
  /**
   * The PEM certificates this process's TLS trusts beside Node's bundled
   * roots when no CA list is given: those of the file NODE_EXTRA_CA_CERTS
   * names, which Node added to its default store at start. Read on first
   * call by the composition root that knows the environment (the engine
   * reads no process state). Absent: none.
   */
  extraTrustAnchors?: () => readonly string[];
  /** Diagnostics sink (verbose mode); the engine never prints. */
  debug(message: string): void;
  /** The DNS transport of this context, created on first use and shared by every lookup. */
  dnsTransport(): Promise<DnsTransport>;
  /** Releases what the context opened (sockets). */
  close(): Promise<void>;
}

export type EngineContextSettings = Partial<Omit<EngineContext, 'dnsTransport' | 'close'>>;

export function createEngineContext(settings: EngineContextSettings = {}): EngineContext {
  let transport: Promise<DnsTransport> | undefined;
  const ctx: EngineContext = {
    dataDir: null,
    timeoutMs: 5000,
    resolvers: null,
    dnsTcp: false,
    dnsRetries: 2,
    now: () => new Date(),
    debug: () => {},
    // Made here, not shared with other contexts: what one run learns is that run's. It tells the context's listener as it is when a resolver falls silent.
    dnsMemory: createDnsRunMemory({ onDemoted: (resolver, timeoutMs) => ctx.onResolverSilent?.(resolver, timeoutMs) }),
    ...settings,
    dnsTransport: () =>
      (transport ??= (async () => {
        const [{ createDnsTransport }, { readSystemResolvers }] = await Promise.all([
          import('./dns/dns-transport.js'),
          import('./dns/resolver-address.js'),
        ]);
        const resolvers = ctx.resolvers ?? (await readSystemResolvers());
        const created = createDnsTransport({ resolvers, tcp: ctx.dnsTcp, timeoutMs: ctx.timeoutMs, retries: ctx.dnsRetries, memory: ctx.dnsMemory ?? null });
        return ctx.onStage ? reportingQueries(created, ctx) : created;
      })()),
    close: async () => {
      // A transport that failed to be made (no resolver, a bad timeout) has
      // nothing to close; its error already reached the lookup that asked.
      const opened = transport ? await transport.catch(() => null) : null;
      if (opened) await opened.close();
    },
  };
  return ctx;
}

/** The transport with every question reported as a `dns` stage. */
function reportingQueries(transport: DnsTransport, ctx: Pick<EngineContext, 'onStage'>): DnsTransport {
  return {
    resolvers: transport.resolvers,
    query: (name, type) => {
      reportStage(ctx, 'dns', name, type);
      return transport.query(name, type);
    },
    ask: (name, type, done) => {
      reportStage(ctx, 'dns', name, type);
      transport.ask(name, type, done);
    },
    close: () => transport.close(),
  };
}
