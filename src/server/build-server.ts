import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { lookupAsn } from '../engine/asn/lookup-asn.js';
import { createPublicTargetGuard } from '../engine/connect-guard.js';
import type { EngineContext } from '../engine/context.js';
import { ipDatabasesFor, type AccessMode } from '../engine/ip/ip-databases.js';
import { createIpTextLookup } from '../engine/ip/lookup-ip.js';
import { NetintelError } from '../errors.js';
import type { ApiKeyRecord, KeyStore } from '../keys/key-store.js';
import { effectivePlan, type Plan, type PlanTable } from '../keys/plans.js';
import type { ApiContext, ApiRoute, RequestState } from './api-route.js';
import { addressSubject, clientAddress, parseTrustedProxies, type ProxyHeader } from './client-address.js';
import { createConnectionKeyCheck } from './connection-key-check.js';
import type { LimitState } from './limits/gcra.js';
import type { LimitStore } from './limits/limit-store.js';
import { registerOperationRoutes } from './operation-routes.js';
import { PROBLEM_CONTENT_TYPE, problemOf, statusOf } from './problem.js';
import { setLimitHeaders } from './rate-limit-headers.js';
import { apiRoutes } from './routes/route-table.js';
import { createTargetGuard } from './target-guard.js';

/** What the server is built from; everything with I/O comes in here, so tests hand it fakes and clocks. */
export interface ServerDeps {
  /** The engine context: datasets, resolvers, timeouts. */
  ctx: EngineContext;
  keys: KeyStore;
  plans: PlanTable;
  limits: LimitStore;
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
  /** Proxies trusted to say who the caller is (IPs, CIDRs, loopback, private, linklocal). */
  trustProxy?: readonly string[];
  /** The header those proxies write (default x-forwarded-for). */
  proxyHeader?: ProxyHeader;
  /** Structured (JSON lines) logs: the level and the stream; false for none. */
  logger?: { level: string; stream: { write(line: string): unknown } } | false;
  /** Largest request body accepted, in bytes (default 64 KiB). */
  bodyLimitBytes?: number;
  /** Time a client has to send a whole request, in ms (default 10 s). */
  requestTimeoutMs?: number;
  /** Time a request may take from arrival to answer, in ms (default 30 s). */
  handlerTimeoutMs?: number;
  /** How the IP datasets are read: `memory` (default, fastest) or `pread`. */
  dataMode?: AccessMode;
  version?: string;
  /** Adjusts the route table before it is registered (tests replace handlers). */
  routes?: (routes: ApiRoute[]) => ApiRoute[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An API route: authenticated, limited, with X-RateLimit-* headers. */
    api?: boolean;
  }
}

/**
 * Builds the HTTP API of SPEC.md over the engine. Never listens: `netintel
 * serve` does, tests use `inject` or listen on port 0.
 *
 * Each request: the caller's address (trusted proxies), its key (401 for a
 * bad one), then per route the plan's features (401 without a key, 403 for
 * a plan without it; 501 for an endpoint still being built), input
 * validation (400), batch size (403), the limits (429), the handler. Every
 * answer carries X-RateLimit-*; every error is problem+json with a `code`.
 */
export function buildServer(deps: ServerDeps): FastifyInstance {
  const now = deps.now ?? Date.now;
  const { plans, limits, keys } = deps;
  const anonymousPlan = plans.plans[plans.anonymous]!;
  const trusted = parseTrustedProxies(deps.trustProxy ?? []);
  const proxyHeader = deps.proxyHeader ?? 'x-forwarded-for';
  const dataMode = deps.dataMode ?? 'memory';
  const handlerTimeoutMs = deps.handlerTimeoutMs ?? 30_000;
  const bodyLimit = deps.bodyLimitBytes ?? 64 * 1024;

  // Server-side probes go where callers point them: unless allowed, every socket a probe opens is judged first (SSRF).
  const ctx: EngineContext = deps.allowPrivateTargets === true ? deps.ctx : { ...deps.ctx, connectGuard: createPublicTargetGuard() };
  const api: ApiContext = {
    ctx,
    plans,
    guard: createTargetGuard({
      allowPrivate: deps.allowPrivateTargets === true,
      smtpPorts: deps.smtpPorts,
      resolveHost: async (name) => (await import('../engine/dns/host-addresses.js')).resolveHostAddresses(deps.ctx, name),
    }),
    lookupIp: createIpTextLookup(ipDatabasesFor(deps.ctx, dataMode)),
    lookupAsn: (query) => lookupAsn(deps.ctx, query, dataMode),
    dataMode,
  };

  const app = Fastify({
    logger: deps.logger ? { level: deps.logger.level, stream: deps.logger.stream } : false,
    // One line per request is written by the onResponse hook below, with the caller and plan.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit,
    requestTimeout: deps.requestTimeoutMs ?? 10_000,
    keepAliveTimeout: 5_000,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Request ids are the server's own; a client-sent one is not trusted into the logs.
    requestIdHeader: false,
  });

  app.decorateRequest('netintel', null as unknown as RequestState);

  // A key's plan with its own limits applied, per key record: the key store
  // hands out the same record until the key changes, and then a new one.
  const planOfKey = new WeakMap<ApiKeyRecord, Plan>();

  const checkKey = createConnectionKeyCheck(keys);

  // Until a key is verified the caller is counted by address (also when refused).
  const anonymousState = (client: string): RequestState => ({ client, plan: anonymousPlan, subject: addressSubject(client), keyId: null, limit: null });

  // Who is calling, and with which plan.
  app.addHook('onRequest', (request, reply, done) => {
    const client = clientAddress(request.raw.socket.remoteAddress, request.headers, trusted, proxyHeader);
    const header = request.headers['x-api-key'];
    if (header === undefined) {
      request.netintel = anonymousState(client);
      return done();
    }
    const check = typeof header === 'string' ? checkKey(request.raw.socket, header) : ({ ok: false, reason: 'malformed', id: null } as const);
    if (!check.ok) {
      request.netintel = anonymousState(client);
      // Off the API (health, docs) a bad key is ignored; on it, refused.
      if (request.routeOptions.config.api !== true) return done();
      reply.header('www-authenticate', 'ApiKey realm="netintel", header="X-API-Key"');
      const message = {
        malformed: 'the X-API-Key header does not hold a netintel API key (ni_<id>_<secret>)',
        unknown: 'the API key is not known to this server',
        revoked: 'the API key has been revoked',
      }[check.reason];
      return done(withoutStack(() => new NetintelError('unauthorized', message, { details: check.id === null ? { reason: check.reason } : { reason: check.reason, keyId: check.id } })));
    }
    let plan = planOfKey.get(check.record);
    if (plan === undefined) {
      try {
        plan = effectivePlan(plans, check.record.plan, check.record.limits);
      } catch (error) {
        request.netintel = anonymousState(client);
        return done(new NetintelError('forbidden', `the key's plan cannot be served: ${(error as Error).message}`, { details: { keyId: check.record.id } }));
      }
      planOfKey.set(check.record, plan);
    }
    request.netintel = { client, plan, subject: `key:${check.record.id}`, keyId: check.record.id, limit: null };
    done();
  });

  // While closing, answers to requests in flight end their connection, so
  // that a keep-alive client does not hold the shutdown for its idle timeout.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });

  // X-RateLimit-* on every answer: the charge's state, or a look at the caller's.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    const state = request.netintel;
    if (!state || state.limit !== null) return done(null, payload);
    let peeked: LimitState | Promise<LimitState>;
    try {
      peeked = limits.peek(state.subject, state.plan, now());
    } catch {
      return done(null, payload);
    }
    if (peeked instanceof Promise) {
      peeked.then(
        (looked) => {
          setLimitHeaders(reply, looked);
          done(null, payload);
        },
        () => done(null, payload),
      );
      return;
    }
    setLimitHeaders(reply, peeked);
    done(null, payload);
  });

  // One line per answered request, at info (a warn or error level leaves them out, and costs nothing).
  if (deps.logger && ['trace', 'debug', 'info'].includes(deps.logger.level)) {
    app.addHook('onResponse', (request, reply, done) => {
      const state = request.netintel;
      request.log.info(
        {
          method: request.method,
          path: request.url.split('?')[0],
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime * 10) / 10,
          client: state?.client,
          key: state?.keyId ?? undefined,
          plan: state?.plan.name,
          limited: state?.limit?.limitedBy ?? undefined,
        },
        'request',
      );
      done();
    });
  }

  app.setErrorHandler((error: FastifyError | NetintelError, request, reply) => {
    const { problem, status } = toProblem(error, bodyLimit, handlerTimeoutMs);
    if (status >= 500 && problem.code !== 'not_implemented') request.log.error({ err: error, path: request.url.split('?')[0] }, 'request failed');
    reply.code(status).header('content-type', PROBLEM_CONTENT_TYPE);
    return JSON.stringify(problemOf(problem, { status, instance: request.url.split('?')[0] }));
  });

  app.setNotFoundHandler((request, reply) => {
    const error = new NetintelError('not_found', `no endpoint ${request.method} ${request.url.split('?')[0]}; the API is described at /docs and /openapi.json`);
    reply.code(404).header('content-type', PROBLEM_CONTENT_TYPE);
    return JSON.stringify(problemOf(error, { instance: request.url.split('?')[0] }));
  });

  // Loads the in-memory datasets before the first request rather than during it.
  if (dataMode === 'memory') {
    app.addHook('onReady', (done) => {
      try {
        api.lookupIp('8.8.8.8');
        api.lookupIp('2001:4860:4860::8888');
        api.lookupAsn('8.8.8.8');
      } catch (error) {
        app.log.warn({ err: error }, 'the IP datasets could not be loaded; lookups will fail until they can');
      }
      done();
    });
  }

  const routes = deps.routes ? deps.routes(apiRoutes(plans)) : apiRoutes(plans);
  for (const route of routes) registerApiRoute(app, route, api, limits, now, handlerTimeoutMs);
  registerOperationRoutes(app, { routes, plans, limits, now, version: deps.version ?? '0.0.0' });
  return app;
}

function registerApiRoute(app: FastifyInstance, route: ApiRoute, api: ApiContext, limits: LimitStore, now: () => number, handlerTimeoutMs: number): void {
  const handler = route.handler;
  app.route({
    method: route.method,
    url: route.url,
    ...(route.network ? { handlerTimeout: handlerTimeoutMs } : {}),
    config: { api: true },
    schema: { ...(route.querystring ? { querystring: route.querystring } : {}), ...(route.body ? { body: route.body } : {}) },
    // Before validation, so that a caller without the right key hears that first.
    preValidation: (request, _reply, done) => done(gate(route, request)),
    preHandler: (request, reply, done) => charge(route, request, reply, limits, now, done),
    handler: (request, reply) => handler!(request, reply, api),
  });
}

/** The plan's features, and 501 for an endpoint whose engine is not built yet. */
function gate(route: ApiRoute, request: FastifyRequest): NetintelError | undefined {
  const { plan, keyId } = request.netintel;
  if (route.feature !== null && !plan.features.includes(route.feature)) {
    const what = route.feature === 'bulk' ? 'bulk processing' : 'premium data (threat intelligence, ISP details)';
    if (keyId === null) {
      return new NetintelError('unauthorized', `${route.method} ${route.url} needs an API key (X-API-Key header) with a plan that includes ${what}`, {
        details: { feature: route.feature },
      });
    }
    return new NetintelError('forbidden', `the ${plan.name} plan does not include ${what}, which ${route.method} ${route.url} needs`, {
      details: { plan: plan.name, feature: route.feature },
    });
  }
  if (route.handler === null) {
    return new NetintelError('not_implemented', `${route.method} ${route.url} is not available yet: ${route.pending ?? 'its engine is being built'}`, {
      details: { endpoint: `${route.method} ${route.url}` },
    });
  }
  return undefined;
}

/** Batch size, then one atomic charge of every item against the bucket and the day. */
function charge(
  route: ApiRoute,
  request: FastifyRequest,
  reply: FastifyReply,
  limits: LimitStore,
  now: () => number,
  done: (error?: Error) => void,
): void {
  const state = request.netintel;
  let result: LimitState | Promise<LimitState>;
  try {
    const items = route.items ? route.items(request) : 1;
    if (route.batched && items > state.plan.batch) {
      return done(
        new NetintelError('forbidden', `the ${state.plan.name} plan allows ${state.plan.batch} items per request; this one has ${items}`, {
          details: { plan: state.plan.name, batch: state.plan.batch, items },
        }),
      );
    }
    result = limits.consume(state.subject, state.plan, items, now());
  } catch (error) {
    return done(error as Error);
  }
  if (result instanceof Promise) result.then((limit) => done(applyLimit(request, reply, limit)), done);
  else done(applyLimit(request, reply, result));
}

function applyLimit(request: FastifyRequest, reply: FastifyReply, limit: LimitState): NetintelError | undefined {
  request.netintel.limit = limit;
  setLimitHeaders(reply, limit);
  if (limit.allowed) return undefined;
  const retryAfterSeconds = Math.max(Math.ceil(limit.retryAfterMs / 1000), 1);
  const which =
    limit.limitedBy === 'daily'
      ? `the daily allowance of ${limit.dailyLimit} is used up (it resets at 00:00 UTC)`
      : `the burst allowance of ${limit.burstCapacity} is used up (it refills at ${limit.perMinute} a minute)`;
  return withoutStack(() => new NetintelError('rate_limited', `rate limit exceeded: ${which}; retry in ${retryAfterSeconds} s`, {
    details: {
      limit: limit.limitedBy,
      plan: request.netintel.plan.name,
      retryAfterSeconds,
      resetAt: new Date(limit.resetAt).toISOString(),
      dailyLimit: limit.dailyLimit,
      dailyRemaining: limit.dailyRemaining,
      burstLimit: limit.burstCapacity,
      burstRemaining: limit.burstRemaining,
    },
  }));
}

/**
 * Builds an error without capturing a stack trace: refusals (429, 401) are
 * answers, and a flood of them should cost as little as possible; the
 * stack would only ever say "the limiter refused".
 */
function withoutStack<T>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** Any error as a NetintelError and the status to answer with. */
function toProblem(error: FastifyError | NetintelError, bodyLimit: number, handlerTimeoutMs: number): { problem: NetintelError; status: number } {
  if (error instanceof NetintelError) return { problem: error, status: statusOf(error.code) };
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    return { problem: new NetintelError('usage', `invalid request: ${fastifyError.message}`, { details: { context: fastifyError.validationContext } }), status: 400 };
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { problem: new NetintelError('usage', `the request body is larger than ${bodyLimit} bytes`, { details: { limitBytes: bodyLimit } }), status: 413 };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { problem: new NetintelError('usage', 'the request body must be application/json'), status: 415 };
    case 'FST_ERR_HANDLER_TIMEOUT':
      return { problem: new NetintelError('timeout', `the request took longer than ${handlerTimeoutMs} ms`, { details: { timeoutMs: handlerTimeoutMs } }), status: 504 };
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return { problem: new NetintelError('usage', fastifyError.message), status };
  }
  return { problem: new NetintelError('internal', 'internal error: the server failed to answer; it has been logged'), status: 500 };
}
