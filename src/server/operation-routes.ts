import type { FastifyPluginCallback } from 'fastify';
import fp from 'fastify-plugin';
import type { PlanTable } from '../keys/plans.js';
import type { Operation } from '../operations/operation.js';
import type { ApiRoute } from './api-route.js';
import type { LimitState } from './limits/gcra.js';
import type { LimitStore } from './limits/limit-store.js';
import { renderDocsPage } from './docs-page.js';
import { setLimitHeaders } from './rate-limit-headers.js';
import { buildOpenApiDocument } from './openapi.js';

/** The answer of GET /api/quota and `netintel quota`. */
export interface QuotaRecord {
  kind: 'quota';
  plan: string;
  title: string;
  /** The key's id, or null on the free tier without a key. */
  key_id: string | null;
  /** The caller's address as the server sees it. */
  client: string;
  features: readonly string[];
  daily: { limit: number; remaining: number; reset_at: string };
  burst: { capacity: number; remaining: number; per_minute: number };
  /** Items per request of the bulk forms. */
  batch: number;
  /** Addresses per POST /api/bulk request, or null when the plan has no bulk processing. */
  bulk_max: number | null;
}

export interface OperationDeps {
  routes: readonly ApiRoute[];
  /** The operations the routes were made from: the document's record schemas. */
  operations: readonly Operation[];
  plans: PlanTable;
  limits: LimitStore;
  now: () => number;
  /** When the server was built (ms since the epoch, by `now`): /healthz counts its uptime from there. */
  startedAt: number;
  version: string;
}

/** GET /healthz, /openapi.json, /docs and /api/quota. */
const operationRoutesPlugin: FastifyPluginCallback<OperationDeps> = (app, deps, done) => {
  const started = deps.startedAt;
  let openapi: string | undefined;
  let docs: string | undefined;
  const document = () => buildOpenApiDocument({ routes: deps.routes, operations: deps.operations, plans: deps.plans, version: deps.version });

  app.get('/healthz', async (_request, reply) => {
    const limiter = await deps.limits.ping();
    reply.code(limiter ? 200 : 503).header('cache-control', 'no-store');
    return {
      status: limiter ? 'ok' : 'degraded',
      version: deps.version,
      uptime_seconds: Math.round((deps.now() - started) / 1000),
      limits: { store: deps.limits.kind, ok: limiter },
    };
  });

  app.get('/openapi.json', async (_request, reply) => {
    reply.header('content-type', 'application/json; charset=utf-8');
    return (openapi ??= JSON.stringify(await document(), null, 2));
  });

  app.get('/docs', async (_request, reply) => {
    reply.header('content-type', 'text/html; charset=utf-8');
    return (docs ??= renderDocsPage(await document(), deps.plans));
  });

  // Looks, never charges: asking how much is left costs nothing.
  app.get('/api/quota', { config: { api: true } }, async (request, reply) => {
    const state = request.netintel;
    const limit: LimitState = await deps.limits.peek(state.subject, state.plan, deps.now());
    state.limit = limit;
    setLimitHeaders(reply, limit);
    return quotaRecord(state.plan, state.keyId, state.client, limit, deps.plans);
  });
  done();
};

/** The operational routes (see operationRoutesPlugin), at the root, behind the server's plugins. */
export const operationRoutes = fp(operationRoutesPlugin, { fastify: '5.x', name: 'netintel-operation-routes' });

export function quotaRecord(
  plan: { name: string; title: string; features: readonly string[]; batch: number },
  keyId: string | null,
  client: string,
  limit: LimitState,
  plans: PlanTable,
): QuotaRecord {
  return {
    kind: 'quota',
    plan: plan.name,
    title: plan.title,
    key_id: keyId,
    client,
    features: plan.features,
    daily: { limit: limit.dailyLimit, remaining: limit.dailyRemaining, reset_at: new Date(limit.resetAt).toISOString() },
    burst: { capacity: limit.burstCapacity, remaining: limit.burstRemaining, per_minute: limit.perMinute },
    batch: plan.batch,
    bulk_max: plan.features.includes('bulk') ? plans.bulkMax : null,
  };
}
