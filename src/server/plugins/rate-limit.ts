import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { NetintelError } from '../../errors.js';
import type { ApiRoute } from '../api-route.js';
import type { LimitState } from '../limits/gcra.js';
import type { LimitStore } from '../limits/limit-store.js';
import { withoutStack } from '../problem.js';
import { setLimitHeaders } from '../rate-limit-headers.js';
import type { UsageRecorder } from '../usage-recorder.js';

export interface RateLimitOptions {
  limits: LimitStore;
  /** The clock of the limits, ms since the epoch. */
  now: () => number;
}

/**
 * X-RateLimit-* on every answer (rate-limit-headers.ts): the state left by
 * the request's charge (see {@link chargeRequest}), or, for an answer that
 * charged nothing (docs, health, an error before the charge), a look at the
 * caller's state that changes nothing.
 */
const rateLimitPlugin: FastifyPluginCallback<RateLimitOptions> = (app, { limits, now }, done) => {
  app.addHook('onSend', (request, reply, payload, done) => {
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
  done();
};

/** X-RateLimit-* on every answer (see rateLimitPlugin). */
export const rateLimit = fp(rateLimitPlugin, { fastify: '5.x', name: 'netintel-rate-limit' });

export interface ChargeOptions extends RateLimitOptions {
  /** Counts each key's accepted items (usage-recorder.ts); none counts nothing. */
  usage?: UsageRecorder | undefined;
}

/**
 * An API route's charge, before its handler: the batch size (403 over the
 * plan's), then one atomic charge of every item against the bucket and the
 * day (429 when either is used up, with Retry-After). A key's accepted
 * items count as its usage.
 */
export function chargeRequest(route: ApiRoute, request: FastifyRequest, reply: FastifyReply, options: ChargeOptions, done: (error?: Error) => void): void {
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
    result = options.limits.consume(state.subject, state.plan, items, options.now());
  } catch (error) {
    return done(error as Error);
  }
  const settle = (limit: LimitState): NetintelError | undefined => {
    const refused = applyLimit(request, reply, limit);
    if (refused !== undefined) return refused;
    state.charged = items;
    if (state.keyId !== null) options.usage?.count(state.keyId, items);
    return undefined;
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
      retry_after_seconds: retryAfterSeconds,
      reset_at: new Date(limit.resetAt).toISOString(),
      daily_limit: limit.dailyLimit,
      daily_remaining: limit.dailyRemaining,
      burst_limit: limit.burstCapacity,
      burst_remaining: limit.burstRemaining,
    },
  }));
}
