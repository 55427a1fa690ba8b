import { setMaxListeners } from 'node:events';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { EngineContext } from '../engine/context.js';
import { NetintelError } from '../errors.js';
import { loadOperations } from '../operations/operations.js';
import { openStore, type Store } from '../store/open-store.js';
import { buildServer, type ServerDeps } from './build-server.js';
import { keySubject } from './callers.js';
import { installCrashNet, type ProcessEvents } from './crash-net.js';
import type { LimitStore } from './limits/limit-store.js';
import { openAccountPages, type AccountPagesEvents, type AccountPagesSettings, type OpenedAccountPages } from './open-account-pages.js';
import { listenForMetrics, type MetricsListener } from './metrics/metrics-listener.js';
import type { ServerMetrics } from './metrics/server-metrics.js';
import { createUsageRecorder, type UsageRecorder } from './usage-recorder.js';

/**
 * How long requests in flight get to finish after SIGTERM by default; then
 * the ones left are answered 503, the connections they opened (probes) are
 * cut and the server stops. Short: a probe can take many seconds, and an
 * orchestrator waiting on the process holds the rollout.
 */
export const SHUTDOWN_GRACE_MS = 2_000;

/** PostgreSQL connections a server holds for its key checks (one query each, so a few serve many requests). */
const KEY_DB_CONNECTIONS = 10;

/** What `netintel serve` runs: where it listens, what it opens, and what the server is built from. */
export interface ServeSettings {
  host: string;
  port: number;
  /** The key database: a SQLite file, or a postgres:// URL shared by several servers. */
  db: string;
  /** Keeps rate limits in Redis at this URL, shared by every server given it; else in this process's memory. */
  redisUrl?: string | undefined;
  /** How long requests in flight get to finish after the first signal, in ms (default SHUTDOWN_GRACE_MS). */
  graceMs?: number | undefined;
  /** The account pages, or false for the API alone. */
  accounts: AccountPagesSettings | false;
  /** Where GET /metrics listens (docs/commands/serve.md, Metrics), or none for no metrics. */
  metrics?: { host: string; port: number } | undefined;
  /** The rest of what the server is built from: the engine context (closed when the server stops), plans, log, connection and probe settings. */
  server: Omit<ServerDeps, 'keys' | 'limits' | 'usage' | 'accountPages' | 'operations' | 'metrics'>;
}

/** The signals a server stops on. */
export interface SignalEvents {
  on(event: 'SIGTERM' | 'SIGINT', listener: (signal: NodeJS.Signals) => void): unknown;
  off(event: 'SIGTERM' | 'SIGINT', listener: (signal: NodeJS.Signals) => void): unknown;
}

/** What a running server uses of its process: where the address line goes, the signals, and errors no handler caught (crash-net.ts). */
export interface ServeHost {
  stdout: { write(text: string): unknown };
  processEvents: SignalEvents & ProcessEvents;
}

/** What the server opens before it is built, closed after it stops. */
interface OpenParts {
  store: Store;
  limits: LimitStore;
  pages: OpenedAccountPages | null;
}

/**
 * Runs `netintel serve` until SIGTERM or SIGINT. Opens the key database,
 * the limit store and the account pages' mail, in this order (a failure
 * closes what was opened), builds the server, listens and says where. At
 * the first signal the requests in flight get the grace to finish; then,
 * or at a second signal, those left are answered 503, the connections
 * their probes opened are cut and the engine's sockets closed. Then
 * everything is closed in order: the server, the limits, the engine
 * context, the account pages' mail, the usage counts (written out), the
 * database.
 *
 * @throws NetintelError `usage` when the address cannot be listened on (see listenFailure); the errors of opening the parts.
 */
export async function runServer(settings: ServeSettings, host: ServeHost): Promise<void> {
  const { ctx } = settings.server;
  const graceMs = settings.graceMs ?? SHUTDOWN_GRACE_MS;
  // Aborted when the grace after SIGTERM runs out: the engine's transports made for one request close on it.
  const shutdown = new AbortController();
  setMaxListeners(0, shutdown.signal);
  ctx.signal = shutdown.signal;
  let listeningUrl = '';
  const publicUrl = () => (settings.accounts ? settings.accounts.publicUrl : undefined) ?? listeningUrl;
  const operations = await loadOperations();
  const parts = await openParts(settings, mailEvents(() => app.log, publicUrl));
  // Each key's usage goes to the key database in batches; a failed write is retried with the next.
  const usage = createUsageRecorder(parts.store.keys, { onError: (error) => app.log.warn({ err: error }, 'usage not written to the key database') });
  const metrics = settings.metrics ? await openMetrics(settings, parts) : null;
  let app: FastifyInstance;
  try {
    app = buildServer({
      ...settings.server,
      operations,
      keys: parts.store.keys,
      limits: parts.limits,
      usage,
      ...(parts.pages ? { accountPages: parts.pages.deps } : {}),
      ...(metrics ? { metrics } : {}),
    });
  } catch (error) {
    // A setting the server refuses (a bad --trust-proxy): what was opened is closed, so that nothing (Redis) holds the process.
    metrics?.close();
    await usage.close().catch(() => {});
    await closeParts(parts, ctx);
    throw error;
  }
  // An error no handler caught is logged with its request and answered 500; the server keeps serving.
  const removeCrashNet = installCrashNet(app, host.processEvents);
  // Listened for before listening: a signal that comes as the address is printed must not kill the process outright.
  const stopped = nextSignal(host.processEvents);
  let metricsListener: MetricsListener | null = null;
  try {
    listeningUrl = await listen(app, settings, parts, graceMs, host.stdout);
    if (metrics && settings.metrics) {
      const { host: metricsHost, port: metricsPort } = settings.metrics;
      metricsListener = await listenForMetrics(metrics, metricsHost, metricsPort).catch((error: unknown) => {
        throw listenFailure(error, metricsHost, metricsPort, METRICS_FLAGS);
      });
      host.stdout.write(`metrics on ${metricsListener.url}\n`);
      app.log.info({ url: metricsListener.url }, 'metrics listening');
    }
    await stopped;
    await stop(app, { graceMs, shutdown, ctx, signals: host.processEvents });
  } finally {
    await metricsListener?.close();
    metrics?.close();
    await app.close();
    await parts.limits.close();
    await ctx.close();
    if (parts.pages) await parts.pages.close();
    await closeUsage(usage, app);
    await parts.store.close();
    removeCrashNet();
  }
}

/** The server's metrics over what it opened (loaded only when asked for: prom-client is not needed otherwise). */
async function openMetrics(settings: ServeSettings, parts: OpenParts): Promise<ServerMetrics> {
  const { createServerMetrics } = await import('./metrics/server-metrics.js');
  return createServerMetrics({ version: settings.server.version ?? '0.0.0', database: parts.store.db, limits: parts.limits, dataDir: settings.server.ctx.dataDir });
}

/** What openParts opened, and the engine context, closed: for a server that could not be built. */
async function closeParts(parts: OpenParts, ctx: EngineContext): Promise<void> {
  await parts.limits.close();
  await ctx.close();
  if (parts.pages) await parts.pages.close();
  await parts.store.close();
}

/** The database, then the limits, then the account pages' parts; a failure closes what was opened before it. */
async function openParts(settings: ServeSettings, events: AccountPagesEvents): Promise<OpenParts> {
  // The database first: one that cannot be reached leaves nothing else open. It is the process's one
  // connection to it (keys, accounts, sessions, usage and the mail outbox share it).
  const store = await openStore(settings.db, { connections: KEY_DB_CONNECTIONS });
  let limits: LimitStore;
  try {
    limits = await openLimits(settings.redisUrl, store);
  } catch (error) {
    await store.close();
    throw error;
  }
  try {
    const pages = settings.accounts ? await openAccountPages(settings.accounts, store, events) : null;
    return { store, limits, pages };
  } catch (error) {
    await limits.close();
    await store.close();
    throw error;
  }
}

/**
 * The limit store: Redis, shared by every server given the URL, else this
 * process's memory, starting from the day's use the key database recorded
 * (a restart would otherwise give every key its daily allowance again).
 */
async function openLimits(redisUrl: string | undefined, store: Store): Promise<LimitStore> {
  if (redisUrl) return (await import('./limits/redis-limit-store.js')).createRedisLimitStore(redisUrl);
  const at = Date.now();
  const counts = new Map<string, number>();
  for (const { keyId, accountId, count } of await store.keys.usedOn(new Date(at))) {
    const subject = keySubject(keyId, accountId);
    counts.set(subject, (counts.get(subject) ?? 0) + count);
  }
  return (await import('./limits/memory-limit-store.js')).createMemoryLimitStore({ at, counts });
}

/** The mail sender's news, in the server's log. */
function mailEvents(log: () => FastifyBaseLogger, publicUrl: () => string): AccountPagesEvents {
  return {
    publicUrl,
    onSent: (mail, delivery) =>
      log().info(
        delivery.via === 'outbox' ? { mail: mail.id, kind: mail.kind, outbox: delivery.path } : { mail: mail.id, kind: mail.kind, relay: delivery.relay, messageId: delivery.messageId },
        delivery.via === 'outbox' ? 'mail written to the outbox (no --smtp-url given)' : 'mail sent',
      ),
    onFailed: (mail, error, retryAt) =>
      log().error({ err: error, mail: mail.id, kind: mail.kind, attempts: mail.attempts, retryAt }, retryAt ? 'mail could not be sent; it will be tried again' : 'mail could not be sent; given up'),
    onError: (error) => log().error({ err: error }, 'the mail outbox could not be read'),
  };
}

/**
 * Listens, then says where: the address line on stdout, and a log line
 * with what the server runs with. Returns the address links are made of
 * when no public URL is given.
 */
async function listen(app: FastifyInstance, settings: ServeSettings, parts: OpenParts, graceMs: number, stdout: ServeHost['stdout']): Promise<string> {
  await app.listen({ host: settings.host, port: settings.port }).catch((error: unknown) => {
    throw listenFailure(error, settings.host, settings.port, API_FLAGS);
  });
  const address = app.server.address();
  const bound = typeof address === 'object' && address !== null ? address : { address: settings.host, port: settings.port };
  const host = bound.address.includes(':') ? `[${bound.address}]` : bound.address;
  // A wildcard address is not one to put in a link: localhost is, at least on this machine.
  const listeningUrl = `http://${['0.0.0.0', '::'].includes(bound.address) ? 'localhost' : host}:${bound.port}`;
  const { pages } = parts;
  if (pages && pages.publicUrl === undefined && ['0.0.0.0', '::'].includes(bound.address)) {
    app.log.warn('listening on every address without --public-url: links in mail point at localhost; give --public-url');
  }
  stdout.write(`listening on http://${host}:${bound.port}\n`);
  app.log.info(
    {
      url: `http://${host}:${bound.port}`,
      limits: parts.limits.kind,
      keys: parts.store.keys.location,
      plans: settings.server.plans.source,
      accounts: pages ? { signUp: `${pages.publicUrl ?? listeningUrl}/signup`, mail: pages.mail, socialLogin: pages.social } : false,
      connections: {
        headersTimeoutMs: app.server.headersTimeout,
        requestTimeoutMs: app.server.requestTimeout,
        keepAliveTimeoutMs: app.server.keepAliveTimeout,
        maxConnections: app.server.maxConnections,
        shutdownGraceMs: graceMs,
      },
    },
    'listening',
  );
  return listeningUrl;
}

/** The flags that choose where something listens, for the messages of listenFailure. */
interface ListenFlags {
  host: string;
  port: string;
}

const API_FLAGS: ListenFlags = { host: '--host', port: '--port' };
const METRICS_FLAGS: ListenFlags = { host: '--metrics-host', port: '--metrics-port' };

/**
 * Why the server could not listen, as the flag to change: a port in use or
 * one the system keeps for privileged processes (`--port`), an address
 * this machine does not have or cannot resolve (`--host`), or the same of
 * the metrics' address. These are `usage` errors (exit 2) with the way
 * out; anything else is passed on.
 */
function listenFailure(error: unknown, host: string, port: number, flags: ListenFlags): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const details = { host, port, errno: code };
  switch (code) {
    case 'EADDRINUSE':
      return new NetintelError('usage', `port ${port} is in use (${where}): choose another with ${flags.port} (0 takes any free port)`, { details, cause: error });
    case 'EACCES':
      return new NetintelError('usage', `port ${port} needs privileges this process does not have (${where}): choose one above 1023 with ${flags.port}`, { details, cause: error });
    case 'EADDRNOTAVAIL':
      return new NetintelError('usage', `${host} is not an address of this machine: choose another with ${flags.host} (127.0.0.1, or 0.0.0.0 for every address)`, { details, cause: error });
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new NetintelError('usage', `${flags.host} ${host} cannot be resolved: give an address of this machine (127.0.0.1, or 0.0.0.0 for every address)`, { details, cause: error });
    default:
      return error;
  }
}

/**
 * Stops the server after the first signal. Requests in flight get the
 * grace; after it (or at a second signal) the requests left are answered
 * 503, the connections their probes opened are cut and the engine's DNS
 * sockets closed, so nothing waits out a probe's own timeout; a moment
 * later every connection still open is closed.
 */
async function stop(app: FastifyInstance, options: { graceMs: number; shutdown: AbortController; ctx: EngineContext; signals: SignalEvents }): Promise<void> {
  const { graceMs, shutdown, ctx } = options;
  app.log.info({ graceMs }, 'shutting down: finishing requests in flight');
  let cut = false;
  const cutInFlight = () => {
    if (cut) return;
    cut = true;
    app.log.warn('shutting down: ending the requests still in flight');
    app.abortInFlight();
    shutdown.abort();
    void ctx.close();
    setTimeout(() => app.server.closeAllConnections(), 250).unref();
  };
  const grace = setTimeout(cutInFlight, graceMs);
  grace.unref();
  void nextSignal(options.signals).then(cutInFlight);
  await app.close();
  clearTimeout(grace);
  // Work whose client went away while it ran (a probe of a request already cut) ends now too.
  app.abortInFlight();
  shutdown.abort();
  app.log.info('stopped');
}

/** Writes the usage counted since the last write; a database that does not take it is logged, not thrown. */
async function closeUsage(usage: UsageRecorder, app: FastifyInstance): Promise<void> {
  await usage.close().catch((error: unknown) => app.log.warn({ err: error }, 'usage counted since the last write is lost: the key database did not take it'));
}

/** Resolves on the next SIGTERM or SIGINT. */
function nextSignal(signals: SignalEvents): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const heard = (signal: NodeJS.Signals) => {
      signals.off('SIGTERM', heard);
      signals.off('SIGINT', heard);
      resolve(signal);
    };
    signals.on('SIGTERM', heard);
    signals.on('SIGINT', heard);
  });
}
