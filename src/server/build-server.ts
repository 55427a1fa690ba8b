import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { lookupAsn } from '../engine/asn/lookup-asn.js';
import { createPublicTargetGuard } from '../engine/connect-guard.js';
import type { EngineContext } from '../engine/context.js';
import { ipDatabasesFor, type AccessMode } from '../engine/ip/ip-databases.js';
import { createIpTextLookup } from '../engine/ip/lookup-ip.js';
import { NetintelError } from '../errors.js';
import type { ApiKeyRecord, KeyCheck, KeyStore } from '../store/key-store.js';
import { effectivePlan, type Plan, type PlanTable } from '../keys/plans.js';
import type { ApiContext, ApiRoute, RequestState } from './api-route.js';
import { addressSubject, clientAddress, parseTrustedProxies, type ProxyHeader } from './client-address.js';
import type { LimitState } from './limits/gcra.js';
import type { LimitStore } from './limits/limit-store.js';
import { registerOperationRoutes } from './operation-routes.js';
import { PROBLEM_CONTENT_TYPE, problemOf, statusOf } from './problem.js';
import { limitHeaders, setLimitHeaders } from './rate-limit-headers.js';
import { requestScope, watchOutboundSockets, type Outbound, type RequestScope } from './request-scope.js';
import { apiRoutes } from './routes/route-table.js';
import { createTargetGuard } from './target-guard.js';
import { SERVER_FAN_OUT, type FanOutLimits } from '../engine/fan-out.js';
import { registerAccountPages, type AccountPagesDeps } from '../web/account-pages.js';
import type { UsageRecorder } from './usage-recorder.js';

/** What the server is built from; everything with I/O comes in here, so tests hand it fakes and clocks. */
export interface ServerDeps {
  /** The engine context: datasets, resolvers, timeouts. */
  ctx: EngineContext;
  keys: KeyStore;
  plans: PlanTable;
  limits: LimitStore;
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
  /** Adjusts the route table before it is registered (tests replace handlers). */
  routes?: (routes: ApiRoute[]) => ApiRoute[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An API route: authenticated, limited, with X-RateLimit-* headers. */
    api?: boolean;
  }
  interface FastifyInstance {
    /**
     * Ends every request still in flight, for shutdown: answers each one
     * not yet answered 503, and destroys the connections and HTTP requests
     * their work opened (SMTP, DNS over TCP, MTA-STS fetches), so that their
     * probes end now rather than at their own timeouts. Requests arriving
     * afterwards are answered 503 too.
     */
    abortInFlight(): void;
  }
}

/** The scheme of 401 answers (RFC 9110 §11.6.1): the key goes in the X-API-Key header. */
export const WWW_AUTHENTICATE = 'ApiKey realm="netintel", header="X-API-Key"';

/** Deadlines and caps of connections; see {@link ServerDeps}. */
export const CONNECTION_DEFAULTS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 15_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1024,
} as const;

/**
 * Builds the HTTP API of SPEC.md over the engine. Never listens: `netintel
 * serve` does, tests use `inject` or listen on port 0.
 *
 * Each request: the caller's address (trusted proxies), its key (401 for a
 * bad one), then per route the plan's features (401 without a key, 403 for
 * a plan without it; 501 for an endpoint still being built), input
 * validation (400), batch size (403), the limits (429), the handler. Every
 * answer carries X-RateLimit-*; every error is problem+json with a `code`,
 * also those raised before routing: by Node's parser (400, 408, 431, 417),
 * for the URL (400), for the method (405 with Allow; OPTIONS is 204 with
 * Allow), for the media type (415, only JSON is read), for a repeated query
 * parameter (400). A 401 carries WWW-Authenticate.
 *
 * Connections: headers within `headersTimeoutMs`, the whole request within
 * `requestTimeoutMs`, idle keep-alive for `keepAliveTimeoutMs`, at most
 * `maxConnections` at once (CONNECTION_DEFAULTS).
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
  const headersTimeoutMs = deps.headersTimeoutMs ?? CONNECTION_DEFAULTS.headersTimeoutMs;
  const requestTimeoutMs = Math.max(deps.requestTimeoutMs ?? CONNECTION_DEFAULTS.requestTimeoutMs, headersTimeoutMs);
  const keepAliveTimeoutMs = deps.keepAliveTimeoutMs ?? CONNECTION_DEFAULTS.keepAliveTimeoutMs;
  const maxConnections = deps.maxConnections ?? CONNECTION_DEFAULTS.maxConnections;
  for (const [name, value] of Object.entries({ headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs, maxConnections })) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new NetintelError('usage', `${name} must be a whole number above 0, not ${value}`, { details: { [name]: value } });
  }

  // Server-side probes go where callers point them: unless allowed, every socket a probe opens is judged first (SSRF).
  const fanOut = deps.fanOut ?? SERVER_FAN_OUT;
  const ctx: EngineContext = { ...deps.ctx, fanOut, ...(deps.allowPrivateTargets === true ? {} : { connectGuard: createPublicTargetGuard() }) };
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
      // Node would answer a missing Host with a bare 400; the onRequest hook below answers it as every other error.
      requireHostHeader: false,
    },
    requestTimeout: requestTimeoutMs,
    keepAliveTimeout: keepAliveTimeoutMs,
    // Requests that arrive while closing get the problem+json 503 of the onRequest hook below.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // Request ids are the server's own; a client-sent one is not trusted into the logs.
    requestIdHeader: false,
    // Errors of the request line or headers (400, 408, 431), before any route.
    clientErrorHandler: (error: NodeJS.ErrnoException, socket: Socket) => answerClientError(error, socket),
    // Errors of the URL (400 bad escape, 414), before any route.
    frameworkErrors: (error, request, untypedReply) => {
      const reply = untypedReply as FastifyReply;
      request.netintel = anonymousState(clientAddress(request.raw.socket.remoteAddress, request.headers, trusted, proxyHeader));
      const status = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : error.code === 'FST_ERR_BAD_URL' ? 400 : 500;
      const problem = status === 500 ? new NetintelError('internal', 'internal error: the server failed to route the request') : new NetintelError('usage', `invalid request: ${error.message}`);
      const path = safePath(request.raw.url);
      void peekHeaders(request.netintel.subject).then((headers) => {
        reply.code(status).headers(headers).header('content-type', PROBLEM_CONTENT_TYPE).send(JSON.stringify(problemOf(problem, { status, instance: path })));
      });
    },
  });
  app.server.maxConnections = maxConnections;
  // An Expect other than 100-continue (RFC 9110 §10.1.1): 417, as Node would, but with a problem body and the headers.
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const problem = new NetintelError('usage', `the expectation ${JSON.stringify(request.headers.expect)} cannot be met; only 100-continue is`);
    const body = JSON.stringify(problemOf(problem, { status: 417, instance: safePath(request.url) }));
    const subject = addressSubject(clientAddress(request.socket.remoteAddress, request.headers, trusted, proxyHeader));
    void peekHeaders(subject).then((headers) => {
      response.writeHead(417, { ...headers, 'content-type': PROBLEM_CONTENT_TYPE, 'content-length': Buffer.byteLength(body), connection: 'close' });
      response.end(body);
    });
  });

  /** The X-RateLimit-* headers of a subject on the free tier, or none if the limit store cannot say. */
  const peekHeaders = async (subject: string): Promise<Record<string, number>> => {
    try {
      return limitHeaders(await limits.peek(subject, anonymousPlan, now()));
    } catch {
      return {};
    }
  };

  /**
   * Answers an error of the request line or headers that Node's parser
   * raised before fastify saw a request (RFC 9110 statuses, problem+json,
   * the caller's X-RateLimit-* by its address), then closes the connection:
   * what follows on it cannot be parsed.
   */
  const answerClientError = (error: NodeJS.ErrnoException, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const [status, reason, message] =
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ([408, 'Request Timeout', `the request was not received in time: headers within ${headersTimeoutMs} ms, the whole request within ${requestTimeoutMs} ms`] as const)
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? ([431, 'Request Header Fields Too Large', 'the request headers are too large'] as const)
          : error.code === 'HPE_INVALID_METHOD'
            ? ([400, 'Bad Request', 'the request method is not one HTTP knows'] as const)
            : ([400, 'Bad Request', `the request could not be parsed (${String(error.code ?? 'malformed')})`] as const);
    // An answer already on its way cannot be followed by another on the same connection.
    const inProgress = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (inProgress?.headersSent === true || !socket.writable) {
      socket.destroy();
      return;
    }
    app.log.debug({ err: error, client: socket.remoteAddress }, 'client error');
    const problem = new NetintelError('usage', message, { details: { parserCode: error.code ?? null } });
    // A HEAD request's answer has no body (RFC 9110 §9.3.2); the parser kept the request's first bytes.
    const head = (error as NodeJS.ErrnoException & { rawPacket?: Buffer }).rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
    answerOnSocket(socket, { status, reason, body: head ? '' : JSON.stringify(problemOf(problem, { status })), headers: {} });
  };

  /**
   * Writes a whole answer on a socket no fastify request owns (Node's parser
   * refused the request, or a CONNECT), with the caller's X-RateLimit-*,
   * then closes the connection.
   */
  const answerOnSocket = (socket: Socket, answer: { status: number; reason: string; body: string; headers: Record<string, string> }): void => {
    void peekHeaders(addressSubject(clientAddress(socket.remoteAddress, {}, trusted, proxyHeader))).then((limitHeaders) => {
      if (socket.destroyed || !socket.writable) return;
      const lines = [`HTTP/1.1 ${answer.status} ${answer.reason}`, `content-type: ${PROBLEM_CONTENT_TYPE}`, `content-length: ${Buffer.byteLength(answer.body)}`, 'connection: close'];
      for (const [name, value] of Object.entries({ ...limitHeaders, ...answer.headers })) lines.push(`${name}: ${value}`);
      socket.end(`${lines.join('\r\n')}\r\n\r\n${answer.body}`);
      // Ends the connection even if the client never reads the answer.
      setTimeout(() => socket.destroy(), 1000).unref();
    });
  };

  // CONNECT (a proxy's method) reaches no route: Node hands its socket over. 405 on a path the API has, else 404.
  app.server.on('connect', (request: IncomingMessage, socket: Socket) => {
    socket.on('error', () => {});
    const path = safePath(request.url) ?? String(request.url ?? '');
    const methods = methodsByPath.get(path);
    const allow = methods === undefined ? null : [...methods].sort().join(', ');
    const problem =
      allow === null
        ? new NetintelError('not_found', `no endpoint CONNECT ${path}; the API is described at /docs and /openapi.json`)
        : new NetintelError('usage', `${path} does not answer CONNECT; it answers ${allow}`, { details: { allow: allow.split(', ') } });
    const status = allow === null ? 404 : 405;
    answerOnSocket(socket, {
      status,
      reason: allow === null ? 'Not Found' : 'Method Not Allowed',
      body: JSON.stringify(problemOf(problem, { status, instance: path })),
      headers: allow === null ? {} : { allow },
    });
  });

  // A request's work, and the connections it opens, are known by its scope (see request-scope.ts).
  watchOutboundSockets();
  const outbound = new Set<Outbound>();
  const open = new Set<RequestScope>();
  app.decorate('abortInFlight', () => {
    closing = true;
    for (const scope of open) {
      const { reply } = scope;
      if (reply.sent || reply.raw.headersSent || reply.raw.destroyed) continue;
      sendShuttingDown(reply, scope.url);
      // The handler's own answer, when its work ends, has nowhere to go: dropped quietly.
      reply.hijack();
    }
    for (const connection of outbound) connection.destroy(new Error('the server is shutting down'));
    outbound.clear();
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (closing) {
      request.netintel = anonymousState(clientAddress(request.raw.socket.remoteAddress, request.headers, trusted, proxyHeader));
      sendShuttingDown(reply, request.url);
      return;
    }
    // RFC 9112 §3.2: an HTTP/1.1 request without Host is 400.
    if (request.headers.host === undefined && request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor === 1) {
      request.netintel = anonymousState(clientAddress(request.raw.socket.remoteAddress, request.headers, trusted, proxyHeader));
      const problem = new NetintelError('usage', 'an HTTP/1.1 request needs a Host header');
      reply.code(400).header('content-type', PROBLEM_CONTENT_TYPE).header('connection', 'close').send(JSON.stringify(problemOf(problem, { instance: request.url.split('?')[0] })));
      return;
    }
    // The rest of the request's handling, its body's callbacks included
    // (Node runs them in the request's async context), runs in the scope.
    const scope: RequestScope = { id: request.id, method: request.method, url: request.url, reply, outbound };
    open.add(scope);
    reply.raw.once('close', () => open.delete(scope));
    requestScope.run(scope, done);
  });

  // Only JSON bodies are read: any other media type (text/plain included) is 415.
  app.removeContentTypeParser(['text/plain']);

  // Methods per path, for 405 and OPTIONS.
  const methodsByPath = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    const methods = methodsByPath.get(route.url) ?? new Set<string>();
    for (const method of [route.method].flat()) {
      methods.add(method);
      if (method === 'GET') methods.add('HEAD');
    }
    methods.add('OPTIONS');
    methodsByPath.set(route.url, methods);
  });

  app.decorateRequest('netintel', null as unknown as RequestState);

  // A key's plan with its own limits applied, per key record: the SQLite
  // store hands out the same record until the key changes, and then a new
  // one (the PostgreSQL store a new one at every check).
  const planOfKey = new WeakMap<ApiKeyRecord, Plan>();

  let closing = false;

  // Until a key is verified the caller is counted by address (also when refused).
  const anonymousState = (client: string): RequestState => ({ client, plan: anonymousPlan, subject: addressSubject(client), keyId: null, limit: null });

  /** Sets the caller's state from the answer about its key; returns the error to answer with, if any. */
  const identify = (request: FastifyRequest, reply: FastifyReply, client: string, check: KeyCheck): NetintelError | undefined => {
    if (!check.ok) {
      request.netintel = anonymousState(client);
      // Off the API (health, docs) a bad key is ignored; on it, refused.
      if (request.routeOptions.config.api !== true) return undefined;
      reply.header('www-authenticate', WWW_AUTHENTICATE);
      const message = {
        malformed: 'the X-API-Key header does not hold a netintel API key (ni_<id>_<secret>)',
        unknown: 'the API key is not known to this server',
        revoked: 'the API key has been revoked',
      }[check.reason];
      return withoutStack(() => new NetintelError('unauthorized', message, { details: check.id === null ? { reason: check.reason } : { reason: check.reason, keyId: check.id } }));
    }
    let plan = planOfKey.get(check.record);
    if (plan === undefined) {
      try {
        plan = effectivePlan(plans, check.record.plan, check.record.limits);
      } catch (error) {
        request.netintel = anonymousState(client);
        return new NetintelError('forbidden', `the key's plan cannot be served: ${(error as Error).message}`, { details: { keyId: check.record.id } });
      }
      planOfKey.set(check.record, plan);
    }
    request.netintel = { client, plan, subject: `key:${check.record.id}`, keyId: check.record.id, limit: null };
    return undefined;
  };

  // Who is calling, and with which plan.
  app.addHook('onRequest', (request, reply, done) => {
    const client = clientAddress(request.raw.socket.remoteAddress, request.headers, trusted, proxyHeader);
    const header = request.headers['x-api-key'];
    if (header === undefined) {
      request.netintel = anonymousState(client);
      return done();
    }
    if (typeof header !== 'string') return done(identify(request, reply, client, { ok: false, reason: 'malformed', id: null }));
    // The key store may be a remote database: the request waits for its
    // answer. When it cannot answer, the log says why and the caller gets a
    // 503 that names no host of the service's own.
    keys.check(header.trim()).then(
      (check) => done(identify(request, reply, client, check)),
      (error: unknown) => {
        request.netintel = anonymousState(client);
        request.log.error({ err: error }, 'the API key could not be checked');
        done(new NetintelError('data_unavailable', 'the API key could not be checked: the key database is unavailable; retry later'));
      },
    );
  });

  // While closing, answers to requests in flight end their connection, so
  // that a keep-alive client does not hold the shutdown for its idle timeout.
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
    // RFC 9110 §15.5.2: a 401 says how to authenticate.
    if (status === 401) reply.header('www-authenticate', WWW_AUTHENTICATE);
    return JSON.stringify(problemOf(problem, { status, instance: request.url.split('?')[0] }));
  });

  // An unknown path is 404; a known path asked with another method is 405
  // with Allow (RFC 9110 §15.5.6), and OPTIONS on it is 204 with Allow (§9.3.7).
  const answerUnrouted = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const path = request.url.split('?')[0]!;
    // OPTIONS * (RFC 9110 §9.3.7) asks about the server as a whole.
    const methods = path === '*' && request.method === 'OPTIONS' ? new Set([...methodsByPath.values()].flatMap((set) => [...set])) : methodsByPath.get(path);
    if (methods !== undefined) {
      const allow = [...methods].sort().join(', ');
      if (request.method === 'OPTIONS') return reply.code(204).header('allow', allow).send();
      const error = new NetintelError('usage', `${path} does not answer ${request.method}; it answers ${allow}`, { details: { allow: [...methods].sort() } });
      return reply.code(405).header('allow', allow).header('content-type', PROBLEM_CONTENT_TYPE).send(JSON.stringify(problemOf(error, { status: 405, instance: path })));
    }
    const error = new NetintelError('not_found', `no endpoint ${request.method} ${path}; the API is described at /docs and /openapi.json`);
    return reply.code(404).header('content-type', PROBLEM_CONTENT_TYPE).send(JSON.stringify(problemOf(error, { instance: path })));
  };
  // Decided before the body is read: a body no route would read cannot turn a 405 or 404 into a 400 or 415.
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.is404) return done();
    answerUnrouted(request, reply);
  });
  app.setNotFoundHandler(answerUnrouted);

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
  for (const route of routes) registerApiRoute(app, route, api, limits, now, handlerTimeoutMs, deps.usage);
  registerOperationRoutes(app, { routes, plans, limits, now, version: deps.version ?? '0.0.0' });
  if (deps.accountPages) registerAccountPages(app, { ...deps.accountPages, keys, plans, limits, now });
  return app;
}

function registerApiRoute(
  app: FastifyInstance,
  route: ApiRoute,
  api: ApiContext,
  limits: LimitStore,
  now: () => number,
  handlerTimeoutMs: number,
  usage: UsageRecorder | undefined,
): void {
  const handler = route.handler;
  app.route({
    method: route.method,
    url: route.url,
    ...(route.network ? { handlerTimeout: handlerTimeoutMs } : {}),
    config: { api: true },
    schema: { ...(route.querystring ? { querystring: route.querystring } : {}), ...(route.body ? { body: route.body } : {}) },
    // Before validation, so that a caller without the right key hears that first.
    preValidation: (request, _reply, done) => done(gate(route, request) ?? singleValuedQuery(request)),
    preHandler: (request, reply, done) => charge(route, request, reply, limits, now, usage, done),
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

/**
 * Each query parameter given once, by its plain name: `ip=1.1.1.1&ip=2.2.2.2`
 * and `ip[]=8.8.8.8` are refused rather than read as one of the values or
 * as no `ip` at all (which /api/ipinfo would answer with the caller's own
 * address).
 */
function singleValuedQuery(request: FastifyRequest): NetintelError | undefined {
  const query = request.query as Record<string, unknown> | undefined;
  if (query === undefined || query === null) return undefined;
  for (const name in query) {
    if (Array.isArray(query[name])) {
      return new NetintelError('usage', `the query parameter ${JSON.stringify(name)} is given more than once; give it once (lists are comma-separated where a parameter takes them)`, {
        details: { parameter: name },
      });
    }
    if (name.includes('[')) {
      return new NetintelError('usage', `the query parameter ${JSON.stringify(name)} is not one this endpoint takes: parameters have plain names (ip=, not ip[]=) and are given once`, {
        details: { parameter: name },
      });
    }
  }
  return undefined;
}

/**
 * 503 for a request the server will not finish because it is shutting down:
 * one that arrived while closing, or one still unanswered when the grace
 * for requests in flight ran out. The code is `unreachable`, what a client
 * would have seen had the connection just been cut; Retry-After says to try
 * again (another instance, or this one once restarted).
 */
function sendShuttingDown(reply: FastifyReply, url: string): void {
  const problem = new NetintelError('unreachable', 'the server is shutting down and did not finish this request; retry it', { details: { reason: 'shutdown' } });
  reply
    .code(503)
    .header('content-type', PROBLEM_CONTENT_TYPE)
    .header('retry-after', 1)
    .header('connection', 'close')
    .send(JSON.stringify(problemOf(problem, { status: 503, instance: url.split('?')[0] })));
}

/** The path of a raw URL for a problem's `instance`, or undefined when it has none. */
function safePath(url: string | undefined): string | undefined {
  if (url === undefined || !url.startsWith('/')) return undefined;
  return url.split('?')[0];
}

/** Batch size, then one atomic charge of every item against the bucket and the day; a key's accepted items count as its usage. */
function charge(
  route: ApiRoute,
  request: FastifyRequest,
  reply: FastifyReply,
  limits: LimitStore,
  now: () => number,
  usage: UsageRecorder | undefined,
  done: (error?: Error) => void,
): void {
  const state = request.netintel;
  let result: LimitState | Promise<LimitState>;
  let items: number;
  try {
    items = route.items ? route.items(request) : 1;
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
  const settle = (limit: LimitState): NetintelError | undefined => {
    const refused = applyLimit(request, reply, limit);
    if (refused === undefined && state.keyId !== null) usage?.count(state.keyId, items);
    return refused;
  };
  if (result instanceof Promise) result.then((limit) => done(settle(limit)), done);
  else done(settle(result));
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
