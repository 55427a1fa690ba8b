import type { FastifyInstance, FastifyPluginCallback, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { lookupAsn } from '../engine/asn/lookup-asn.js';
import { createPublicTargetGuard } from '../engine/connect-guard.js';
import type { EngineContext } from '../engine/context.js';
import { SERVER_FAN_OUT, type FanOutLimits } from '../engine/fan-out.js';
import { ipDatabasesFor, type AccessMode } from '../engine/ip/ip-databases.js';
import { createIpTextLookup } from '../engine/ip/lookup-ip.js';
import { NetintelError } from '../errors.js';
import type { PlanTable } from '../keys/plans.js';
import type { ApiContext, ApiRoute } from './api-route.js';
import { chargeRequest, type ChargeOptions } from './plugins/rate-limit.js';
import { createTargetGuard } from './target-guard.js';

export interface ApiContextOptions {
  ctx: EngineContext;
  plans: PlanTable;
  dataMode: AccessMode;
  /** See ServerDeps (build-server.ts). */
  allowPrivateTargets: boolean;
  smtpPorts?: readonly number[] | undefined;
  tlsPorts?: readonly number[] | undefined;
  fanOut?: FanOutLimits | undefined;
}

/** What the route handlers use: the engine context with the server's fan-out caps and connect guard, the target guard and the IP datasets. */
export function createApiContext(options: ApiContextOptions): ApiContext {
  const { dataMode } = options;
  // Server-side probes go where callers point them: unless allowed, every socket a probe opens is judged first (SSRF).
  const fanOut = options.fanOut ?? SERVER_FAN_OUT;
  const ctx: EngineContext = { ...options.ctx, fanOut, ...(options.allowPrivateTargets ? {} : { connectGuard: createPublicTargetGuard() }) };
  return {
    ctx,
    plans: options.plans,
    guard: createTargetGuard({
      allowPrivate: options.allowPrivateTargets,
      smtpPorts: options.smtpPorts,
      tlsPorts: options.tlsPorts,
      resolveHost: async (name) => (await import('../engine/dns/host-addresses.js')).resolveHostAddresses(options.ctx, name),
    }),
    lookupIp: createIpTextLookup(ipDatabasesFor(options.ctx, dataMode)),
    lookupAsn: (query) => lookupAsn(options.ctx, query, dataMode),
    dataMode,
  };
}

export interface ApiEndpointsOptions extends ChargeOptions {
  routes: readonly ApiRoute[];
  api: ApiContext;
  /** Time a request may take from arrival to answer, in ms (routes that wait on the network). */
  handlerTimeoutMs: number;
}

/**
 * The endpoints of docs/api.md, Endpoints. Per route, after the caller is
 * known (identify-caller): the plan's features (401 without a key, 403 for
 * a plan without it; 501 for an endpoint still being built) and
 * single-valued query parameters, then input validation (400), then the
 * charge (batch size 403, limits 429; rate-limit.ts), then the handler.
 */
const apiEndpointsPlugin: FastifyPluginCallback<ApiEndpointsOptions> = (app, options, done) => {
  for (const route of options.routes) registerApiRoute(app, route, options);
  // Loads the in-memory datasets before the first request rather than during it.
  if (options.api.dataMode === 'memory') {
    app.addHook('onReady', (done) => {
      try {
        options.api.lookupIp('8.8.8.8');
        options.api.lookupIp('2001:4860:4860::8888');
        options.api.lookupAsn('8.8.8.8');
      } catch (error) {
        app.log.warn({ err: error }, 'the IP datasets could not be loaded; lookups will fail until they can');
      }
      done();
    });
  }
  done();
};

/** The API's endpoints (see apiEndpointsPlugin), at the root, behind the server's plugins. */
export const apiEndpoints = fp(apiEndpointsPlugin, { fastify: '5.x', name: 'netintel-api-endpoints' });

function registerApiRoute(app: FastifyInstance, route: ApiRoute, options: ApiEndpointsOptions): void {
  const handler = route.handler;
  app.route({
    method: route.method,
    url: route.url,
    ...(route.network ? { handlerTimeout: options.handlerTimeoutMs } : {}),
    config: { api: true },
    schema: { ...(route.querystring ? { querystring: route.querystring } : {}), ...(route.body ? { body: route.body } : {}) },
    // Before validation, so that a caller without the right key hears that first.
    preValidation: (request, _reply, done) => done(gate(route, request) ?? singleValuedQuery(request)),
    preHandler: (request, reply, done) => chargeRequest(route, request, reply, options, done),
    handler: (request, reply) => handler!(request, reply, options.api),
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
