import type { Redis as RedisClient } from 'ioredis';
import { NetintelError } from '../../errors.js';
import { EPSILON, nextUtcMidnight, utcDay, type LimitPolicy, type LimitState } from './gcra.js';
import type { LimitStore } from './limit-store.js';

/**
 * gcra.ts's `decide` as one Lua script, so that the check and the charge
 * are one atomic step in Redis whatever the number of servers. Time comes
 * from the caller (ARGV[1]), like the memory store, so every server must
 * keep its clock synchronised (NTP); the day index and reset time are
 * computed by the caller from the same clock.
 *
 * State: one hash per caller, t = GCRA tat (ms, 3 decimals), d = UTC day,
 * c = items charged that day; it expires once the bucket is full again and
 * the day is over.
 */
const LIMIT_SCRIPT = `
local now = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local daily = tonumber(ARGV[4])
local cost = tonumber(ARGV[5])
local day = tonumber(ARGV[6])
local resetAt = tonumber(ARGV[7])
local eps = tonumber(ARGV[8])
local tolerance = burst * interval
local rec = redis.call('HMGET', KEYS[1], 't', 'd', 'c')
local tat = tonumber(rec[1]) or 0
if tat < now then tat = now end
local count = 0
if tonumber(rec[2]) == day then count = tonumber(rec[3]) or 0 end
local newTat = tat + cost * interval
local burstOk = (newTat - now) <= tolerance + eps
local dailyOk = (count + cost) <= daily
local allowed = burstOk and dailyOk
local heldTat = tat
local heldCount = count
if allowed then
  heldTat = newTat
  heldCount = count + cost
end
local retry = 0
if not burstOk then retry = newTat - now - tolerance end
if not dailyOk then retry = math.max(retry, resetAt - now) end
if allowed and cost > 0 then
  redis.call('HSET', KEYS[1], 't', string.format('%.3f', heldTat), 'd', day, 'c', heldCount)
  redis.call('PEXPIRE', KEYS[1], math.ceil(math.max(heldTat - now, resetAt - now) + 60000))
end
local limited = 0
if not allowed then
  if not dailyOk then limited = 2 else limited = 1 end
end
local burstRemaining = math.floor((tolerance - (heldTat - now)) / interval + eps)
if burstRemaining < 0 then burstRemaining = 0 end
local dailyRemaining = daily - heldCount
if dailyRemaining < 0 then dailyRemaining = 0 end
if retry < 0 then retry = 0 end
return {allowed and 1 or 0, limited, dailyRemaining, burstRemaining, math.ceil(retry)}
`;

type LimitCommand = (key: string, ...args: Array<string | number>) => Promise<[number, number, number, number, number]>;

export interface RedisLimitStoreOptions {
  /** Prefix of every key netintel writes (default `netintel:limit:`). */
  keyPrefix?: string;
}

/**
 * Limits in Redis (ioredis), shared by every server given the same URL.
 * Connects before returning.
 *
 * @throws NetintelError `unreachable` when Redis does not answer.
 */
export async function createRedisLimitStore(url: string, options: RedisLimitStoreOptions = {}): Promise<LimitStore> {
  const { Redis } = await import('ioredis');
  const prefix = options.keyPrefix ?? 'netintel:limit:';
  const client: RedisClient = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2000,
    commandTimeout: 2000,
    maxRetriesPerRequest: 1,
    enableAutoPipelining: true,
  });
  // Errors reach the callers of each command; without a listener ioredis would print them.
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    throw new NetintelError('unreachable', `cannot connect to Redis at ${redactUrl(url)}: ${(error as Error).message}`, {
      cause: error,
      details: { redis: redactUrl(url) },
    });
  }
  client.defineCommand('netintelLimit', { numberOfKeys: 1, lua: LIMIT_SCRIPT });
  const limit = (client as unknown as { netintelLimit: LimitCommand }).netintelLimit.bind(client);

  const run = async (subject: string, policy: LimitPolicy, cost: number, now: number): Promise<LimitState> => {
    let reply: [number, number, number, number, number];
    try {
      reply = await limit(
        prefix + subject,
        now,
        60_000 / policy.perMinute,
        policy.burst,
        policy.daily,
        cost,
        utcDay(now),
        nextUtcMidnight(now),
        EPSILON,
      );
    } catch (error) {
      throw new NetintelError('unreachable', `the rate-limit store (Redis) did not answer: ${(error as Error).message}`, { cause: error });
    }
    const [allowed, limited, dailyRemaining, burstRemaining, retryAfterMs] = reply;
    return {
      allowed: allowed === 1,
      limitedBy: limited === 2 ? 'daily' : limited === 1 ? 'burst' : null,
      dailyLimit: policy.daily,
      dailyRemaining,
      resetAt: nextUtcMidnight(now),
      burstCapacity: policy.burst,
      burstRemaining,
      perMinute: policy.perMinute,
      retryAfterMs,
    };
  };

  return {
    kind: 'redis',
    consume: run,
    peek: (subject, policy, now) => run(subject, policy, 0, now),
    ping: async () => {
      try {
        return (await client.ping()) === 'PONG';
      } catch {
        return false;
      }
    },
    close: async () => {
      await client.quit().catch(() => client.disconnect());
    },
  };
}

/** A Redis URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(invalid URL)';
  }
}
