import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { EngineContext } from '../engine/context.js';
import type { FanOutLimits } from '../engine/fan-out.js';
import type { AccessMode } from '../engine/ip/ip-databases.js';
import { NetintelError } from '../errors.js';
import type { PlanTable } from '../keys/plans.js';
import type { Operation } from '../operations/operation.js';
import type { KeyStore } from '../store/key-store.js';
import { accountPages, type AccountPagesDeps } from '../web/account-pages.js';
import { apiEndpoints, createApiContext } from './api-endpoints.js';
import type { ApiRoute } from './api-route.js';
import { createCallers } from './callers.js';
import type { ProxyHeader } from './client-address.js';
import type { LimitStore } from './limits/limit-store.js';
import type { ServerMetrics } from './metrics/server-metrics.js';
import { operationRoutes } from './operation-routes.js';
import { identifyCaller } from './plugins/identify-caller.js';
import { preRoutingErrors, problemErrors } from './plugins/problem-errors.js';
import { rateLimit } from './plugins/rate-limit.js';
import { requestLog } from './plugins/request-log.js';
import { requestMetrics } from './plugins/request-metrics.js';
import { shutdown } from './plugins/shutdown.js';
import { unrouted } from './plugins/unrouted.js';
import { apiRoutes } from './routes/route-table.js';
import type { UsageRecorder } from './usage-recorder.js';

/** What the server is built from; everything with I/O comes in here, so tests hand it fakes and clocks. */
export interface ServerDeps {
  /** The engine context: datasets, resolvers, timeouts. */
  ctx: EngineContext;
  keys: KeyStore;
  plans: PlanTable;
  limits: LimitStore;
  /** The operations whose routes it serves: every one (loadOperations()). */
  operations: readonly Operation[];
  /** Counts each accepted key's charged items for the key database (usage-recorder.ts); none counts nothing. */
  usage?: UsageRecorder;
  /** The clock of the limits, ms since the epoch (default Date.now). */
  now?: () => number;
  /**
   * Let server-side probes reach private, loopback, link-local and metadata
   * addresses. Otherwise the engine context gets the public-target connect
   * guard: every probe's address is judged just before it connects.
   */
  allowPrivateTargets?: boolean;
  /** Ports SMTP probes may use (default 25, 465, 587, 2525). */
  smtpPorts?: readonly number[];
  /** Ports TLS checks may use (default DEFAULT_TLS_PORTS, target-guard.ts). */
  tlsPorts?: readonly number[];
  /**
   * How far one check of a request fans out from DNS answers (MX hosts,
   * addresses per host, SMTP connections; default SERVER_FAN_OUT): a caller
   * chooses the domain, so one request must not become thousands of probes.
   * No request parameter raises them.
   */
  fanOut?: FanOutLimits;
  /** Proxies trusted to say who the caller is (IPs, CIDRs, loopback, private, linklocal). */
  trustProxy?: readonly string[];
  /** The header those proxies write (default x-forwarded-for). */
  proxyHeader?: ProxyHeader;
  /** Structured (JSON lines) logs: the level and the stream; false for none. */
  logger?: { level: string; stream: { write(line: string): unknown } } | false;
  /** Largest request body accepted, in bytes (default 64 KiB). */
  bodyLimitBytes?: number;
  /** Time a client has to send a request's headers, from its first byte, in ms (default 10 s). */
  headersTimeoutMs?: number;
  /** Time a client has to send a whole request, headers and body, in ms (default 15 s; at least headersTimeoutMs). */
  requestTimeoutMs?: number;
  /** How long an idle keep-alive connection is kept open, in ms (default 5 s). */
  keepAliveTimeoutMs?: number;
  /** Connections held at once; further ones are closed as soon as they are accepted (default 1024). */
  maxConnections?: number;
  /** Time a request may take from arrival to answer, in ms (default 30 s). */
  handlerTimeoutMs?: number;
  /** How the IP datasets are read: `memory` (default, fastest) or `pread`. */
  dataMode?: AccessMode;
  version?: string;
  /** The self-service account pages (sign-up, log in, dashboard); none when absent. */
  accountPages?: Omit<AccountPagesDeps, 'keys' | 'plans' | 'limits' | 'now'>;
  /** Counts each answered request (`serve --metrics-port`); none adds nothing to a request. */
  metrics?: ServerMetrics;
  /** Adjusts the route table before it is registered (tests replace handlers). */
  routes?: (routes: ApiRoute[]) => ApiRoute[];
}

/** Deadlines and caps of connections; see {@link ServerDeps}. */
export const CONNECTION_DEFAULTS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 15_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1024,
} as const;

/**
 * Builds the HTTP API of docs/api.md over the engine. Never listens: the
 * lifecycle (lifecycle.ts) does, tests use `inject` or listen on port 0.
 *
 * The server is its plugins (plugins/), then its routes. Each request: the
 * caller's address (trusted proxies), its key (401 for a bad one), then per
 * route the plan's features (401 without a key, 403 for a plan without it;
 * 501 for an endpoint still being built), input validation (400), batch
 * size (403), the limits (429), the handler. Every answer carries
 * X-RateLimit-*; every error is problem+json with a `code`, also those
 * raised before routing: by Node's parser (400, 408, 431, 417), for the URL
 * (400), for the method (405 with Allow; OPTIONS is 204 with Allow), for
 * the media type (415, only JSON is read), for a repeated query parameter
 * (400). A 401 carries WWW-Authenticate.
 *
 * Connections: headers within `headersTimeoutMs`, the whole request within
 * `requestTimeoutMs`, idle keep-alive for `keepAliveTimeoutMs`, at most
 * `maxConnections` at once (CONNECTION_DEFAULTS).
 *
 * @throws NetintelError `usage` for a trusted proxy or a connection setting that cannot be used.
 */
export function buildServer(deps: ServerDeps): FastifyInstance {
  const now = deps.now ?? Date.now;
  const { plans, limits, keys } = deps;
  const callers = createCallers({ plans, limits, now, trustProxy: deps.trustProxy ?? [], proxyHeader: deps.proxyHeader ?? 'x-forwarded-for' });
  const handlerTimeoutMs = deps.handlerTimeoutMs ?? 30_000;
  const bodyLimit = deps.bodyLimitBytes ?? 64 * 1024;
  const connections = connectionSettings(deps);
  const { headersTimeoutMs, requestTimeoutMs } = connections;
  const api = createApiContext({ ctx: deps.ctx, plans, dataMode: deps.dataMode ?? 'memory', allowPrivateTargets: deps.allowPrivateTargets === true, smtpPorts: deps.smtpPorts, tlsPorts: deps.tlsPorts, fanOut: deps.fanOut });

  const app = Fastify({
    logger: deps.logger ? { level: deps.logger.level, stream: deps.logger.stream } : false,
    // One line per request is written by the request-log plugin, with the caller and plan.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit,
    // Node enforces both deadlines itself: headers within headersTimeout of
    // the request's first byte, the whole request (body included) within
    // requestTimeout; the first answers 408 through clientErrorHandler. It
    // looks for overdue connections every connectionsCheckingInterval (30 s
    // by default, which let a slow client hold a connection for up to 40 s
    // more than the deadline), here a tenth of the shorter deadline.
    http: {
      headersTimeout: headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      connectionsCheckingInterval: Math.max(Math.min(Math.floor(headersTimeoutMs / 10), 1000), 50),
      // Node would answer a missing Host with a bare 400; problem-errors answers it as every other error.
      requireHostHeader: false,
    },
    requestTimeout: requestTimeoutMs,
    keepAliveTimeout: connections.keepAliveTimeoutMs,
    // Requests that arrive while closing get the problem+json 503 of the shutdown plugin.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // Request ids are the server's own; a client-sent one is not trusted into the logs.
    requestIdHeader: false,
    // Errors of the request line, headers and URL, before any route.
    ...preRoutingErrors({ callers, headersTimeoutMs, requestTimeoutMs }),
  });
  app.server.maxConnections = connections.maxConnections;

  // Hooks run in the order their plugins are registered: the shutdown's
  // request scope holds all that follows, the caller is known before the
  // limits' headers and the log line, and the routes come last, so that
  // every plugin stands in front of them and unrouted knows their methods.
  void app.register(shutdown, { callers });
  void app.register(problemErrors, { callers, bodyLimit, handlerTimeoutMs });
  void app.register(identifyCaller, { callers, keys, plans });
  void app.register(rateLimit, { limits, now });
  void app.register(unrouted, { callers });
  void app.register(requestLog, { level: deps.logger ? deps.logger.level : 'silent' });
  if (deps.metrics) void app.register(requestMetrics, { metrics: deps.metrics });
  const { operations } = deps;
  const routes = deps.routes ? deps.routes(apiRoutes(plans, operations)) : apiRoutes(plans, operations);
  void app.register(apiEndpoints, { routes, api, limits, now, usage: deps.usage, handlerTimeoutMs });
  void app.register(operationRoutes, { routes, operations, plans, limits, now, startedAt: now(), version: deps.version ?? '0.0.0' });
  if (deps.accountPages) void app.register(accountPages, { ...deps.accountPages, keys, plans, limits, now });
  return app;
}

/** The connection settings of `deps` with their defaults; the whole request gets at least the headers' time. */
function connectionSettings(deps: ServerDeps): { headersTimeoutMs: number; requestTimeoutMs: number; keepAliveTimeoutMs: number; maxConnections: number } {
  const headersTimeoutMs = deps.headersTimeoutMs ?? CONNECTION_DEFAULTS.headersTimeoutMs;
  const requestTimeoutMs = Math.max(deps.requestTimeoutMs ?? CONNECTION_DEFAULTS.requestTimeoutMs, headersTimeoutMs);
  const keepAliveTimeoutMs = deps.keepAliveTimeoutMs ?? CONNECTION_DEFAULTS.keepAliveTimeoutMs;
  const maxConnections = deps.maxConnections ?? CONNECTION_DEFAULTS.maxConnections;
  const settings = { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs, maxConnections };
  for (const [name, value] of Object.entries(settings)) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new NetintelError('usage', `${name} must be a whole number above 0, not ${value}`, { details: { [name]: value } });
  }
  return settings;
}
