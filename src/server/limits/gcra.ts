/**
 * The limit arithmetic shared by the memory and the Redis store.
 *
 * Each caller has a burst bucket and a daily allowance:
 *
 * - The bucket holds `burst` tokens and refills at `perMinute` tokens a
 *   minute; a request of n items takes n tokens. It is kept as GCRA state
 *   (the generic cell rate algorithm, ITU-T I.371), which is a token bucket
 *   stored as one number: `tat`, the time at which the bucket would be full
 *   again. With T = 60 000 / perMinute ms per token, a request of n items
 *   is accepted when max(tat, now) + n·T - now <= burst·T, and then moves
 *   tat there.
 * - The daily count is kept per UTC date and resets at 00:00 UTC.
 *
 * A request is accepted only when both accept it, and then charges both:
 * a refused request costs nothing.
 *
 * Not a library: rate-limiter-flexible (11.4) counts fixed windows from a
 * key's first request, charges refused requests, and cannot check two
 * limits as one step; the token-bucket libraries with a Redis store either
 * speak only Upstash's HTTP API (@upstash/ratelimit), have no memory store
 * and pin ioredis < 5 (redis-gcra), or are unmaintained (tokenbucket).
 */

export interface LimitPolicy {
  daily: number;
  perMinute: number;
  burst: number;
}

/** The stored state of one caller. */
export interface LimitRecord {
  /** GCRA theoretical arrival time, ms since the epoch (0: full bucket). */
  tat: number;
  /** The UTC day `count` belongs to, in days since the epoch. */
  day: number;
  /** Items charged on `day`. */
  count: number;
}

export interface LimitState {
  allowed: boolean;
  /** Which limit refused the request (null when accepted). */
  limitedBy: 'burst' | 'daily' | null;
  dailyLimit: number;
  /** Items left today after this request. */
  dailyRemaining: number;
  /** The next 00:00 UTC, ms since the epoch: when the daily count resets. */
  resetAt: number;
  burstCapacity: number;
  /** Whole tokens left in the bucket after this request. */
  burstRemaining: number;
  perMinute: number;
  /** How long until the same request would be accepted, in ms (0 when accepted). */
  retryAfterMs: number;
}

const DAY_MS = 86_400_000;
/**
 * Float slack: sums of n·T may miss burst·T by a rounding error, and the
 * Redis store keeps tat to a microsecond.
 */
export const EPSILON = 1e-3;

/** The UTC day of a time, in days since the epoch. */
export function utcDay(now: number): number {
  return Math.floor(now / DAY_MS);
}

export function nextUtcMidnight(now: number): number {
  return (Math.floor(now / DAY_MS) + 1) * DAY_MS;
}

/**
 * Decides a request of `cost` items (0: only look) against a record and
 * returns the verdict and the record to store when it is accepted. A
 * negative cost gives items back (a refund): the bucket refills by as many,
 * never past full, and the day's count drops, never below 0.
 */
export function decide(
  record: LimitRecord | null,
  policy: LimitPolicy,
  cost: number,
  now: number,
): { state: LimitState; next: LimitRecord | null } {
  const interval = 60_000 / policy.perMinute;
  const tolerance = policy.burst * interval;
  const day = utcDay(now);
  const resetAt = nextUtcMidnight(now);
  const tat = Math.max(record?.tat ?? 0, now);
  const count = record && record.day === day ? record.count : 0;

  const refund = cost < 0;
  const newTat = refund ? Math.max(tat + cost * interval, now) : tat + cost * interval;
  const burstOk = refund || newTat - now <= tolerance + EPSILON;
  const dailyOk = refund || count + cost <= policy.daily;
  const allowed = burstOk && dailyOk;

  const heldTat = allowed ? newTat : tat;
  const heldCount = allowed ? Math.max(count + cost, 0) : count;
  let retryAfterMs = 0;
  if (!burstOk) retryAfterMs = newTat - now - tolerance;
  if (!dailyOk) retryAfterMs = Math.max(retryAfterMs, resetAt - now);

  return {
    state: {
      allowed,
      limitedBy: allowed ? null : !dailyOk ? 'daily' : 'burst',
      dailyLimit: policy.daily,
      dailyRemaining: Math.max(policy.daily - heldCount, 0),
      resetAt,
      burstCapacity: policy.burst,
      // The slack in milliseconds, as the verdict takes it: added in tokens it was a whole interval's worth
      // of milliseconds times EPSILON (6 ms of the free plan), in which a refused request read "1 left".
      burstRemaining: Math.max(Math.floor((tolerance - (heldTat - now) + EPSILON) / interval), 0),
      perMinute: policy.perMinute,
      retryAfterMs: Math.max(Math.ceil(retryAfterMs), 0),
    },
    next: (allowed && cost > 0) || (refund && record !== null) ? { tat: heldTat, day, count: heldCount } : null,
  };
}

/** How long a record matters: until the bucket is full again and the day is over. */
export function recordLifetimeMs(record: LimitRecord, now: number): number {
  return Math.max(record.tat - now, nextUtcMidnight(now) - now) + 60_000;
}
