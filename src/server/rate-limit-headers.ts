import type { FastifyReply } from 'fastify';
import type { LimitState } from './limits/gcra.js';

/**
 * The rate-limit headers (docs/api.md, Plans and limits). The first three describe the daily window (the one
 * with a reset time: 00:00 UTC); the bucket has its own pair. On a refusal
 * X-RateLimit-RetryAfter and Retry-After (RFC 9110 §10.2.3) give the whole
 * seconds until the same request would be accepted, whichever limit
 * refused it.
 *
 * - X-RateLimit-Limit: lookups allowed per UTC day
 * - X-RateLimit-Remaining: lookups left today
 * - X-RateLimit-Reset: Unix time (s) of the next 00:00 UTC
 * - X-RateLimit-Burst-Limit: bucket capacity (the plan's burst)
 * - X-RateLimit-Burst-Remaining: whole tokens in the bucket now
 */
export function limitHeaders(limit: LimitState): Record<string, number> {
  const headers: Record<string, number> = {
    'x-ratelimit-limit': limit.dailyLimit,
    'x-ratelimit-remaining': limit.dailyRemaining,
    'x-ratelimit-reset': Math.ceil(limit.resetAt / 1000),
    'x-ratelimit-burst-limit': limit.burstCapacity,
    'x-ratelimit-burst-remaining': limit.burstRemaining,
  };
  if (!limit.allowed) {
    const seconds = Math.max(Math.ceil(limit.retryAfterMs / 1000), 1);
    headers['x-ratelimit-retryafter'] = seconds;
    headers['retry-after'] = seconds;
  }
  return headers;
}

/** Sets {@link limitHeaders} on a reply (header by header: it is on every answer's path). */
export function setLimitHeaders(reply: FastifyReply, limit: LimitState): void {
  reply.header('x-ratelimit-limit', limit.dailyLimit);
  reply.header('x-ratelimit-remaining', limit.dailyRemaining);
  reply.header('x-ratelimit-reset', Math.ceil(limit.resetAt / 1000));
  reply.header('x-ratelimit-burst-limit', limit.burstCapacity);
  reply.header('x-ratelimit-burst-remaining', limit.burstRemaining);
  if (!limit.allowed) {
    const seconds = Math.max(Math.ceil(limit.retryAfterMs / 1000), 1);
    reply.header('x-ratelimit-retryafter', seconds);
    reply.header('retry-after', seconds);
  }
}
