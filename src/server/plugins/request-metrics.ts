import type { FastifyPluginCallback } from 'fastify';
import fp from 'fastify-plugin';
import type { ServerMetrics } from '../metrics/server-metrics.js';

export interface RequestMetricsOptions {
  metrics: ServerMetrics;
}

/**
 * Each answered request in the server's metrics: its route as declared
 * (never the path a caller sent), status, plan, time, the lookups charged
 * and a refusal by the limits. Registered only when the server has metrics
 * (`serve --metrics-port`): without them nothing is added to a request.
 */
const requestMetricsPlugin: FastifyPluginCallback<RequestMetricsOptions> = (app, { metrics }, done) => {
  app.addHook('onResponse', (request, reply, done) => {
    const state = request.netintel;
    const limit = state?.limit;
    metrics.answered({
      route: request.routeOptions.url ?? 'unrouted',
      method: request.method,
      status: reply.statusCode,
      plan: state?.plan.name ?? 'none',
      seconds: reply.elapsedTime / 1000,
      lookups: state?.charged ?? 0,
      refusedBy: limit && !limit.allowed ? limit.limitedBy : null,
    });
    done();
  });
  done();
};

/** Each answered request in the metrics (see requestMetricsPlugin). */
export const requestMetrics = fp(requestMetricsPlugin, { fastify: '5.x', name: 'netintel-request-metrics' });
