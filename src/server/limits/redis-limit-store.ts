import DataLoader from 'dataloader';
import type { Redis as RedisClient } from 'ioredis';
import { NetintelError } from '../../errors.js';
import { EPSILON, nextUtcMidnight, utcDay, type LimitState } from './gcra.js';
import type { CombinedLimitState, LimitCharge, LimitStore } from './limit-store.js';

/**
 * gcra.ts's `decide` as one Lua script over a batch of calls, each over one
 * or more callers, so that each call's checks and charges are one atomic
 * step in Redis whatever the number of servers: every charge of a call is
 * taken, or (when one is refused) none. The calls of a batch are decided in
 * turn, as if each had been sent alone. Time comes from the caller, like the
 * memory store, so every server must keep its clock synchronised (NTP); the
 * day index and reset time are computed by the caller from the same clock.
 *
 * ARGV: epsilon, then per call its number of keys, now, day, resetAt, then
 * per key interval, burst, daily, cost (a negative cost is a refund); KEYS:
 * the keys of every call in turn. Returns per call allowed, limited (1 burst,
 * 2 daily), dailyRemaining, burstRemaining and retry (ms) of the key that
 * refused, else of the first, and the 1-based index of the key that refused
 * (0: none).
 *
 * State: one hash per caller, t = GCRA tat (ms, 3 decimals), d = UTC day,
 * c = items charged that day; it expires once the bucket is full again and
 * the day is over.
 */
const LIMIT_SCRIPT = `
local eps = tonumber(ARGV[1])
local function decideCall(firstKey, count, now, day, resetAt, firstArg)
  local decided = {}
  local refused = 0
  for i = 1, count do
    local base = firstArg + (i - 1) * 4
    local interval = tonumber(ARGV[base])
    local burst = tonumber(ARGV[base + 1])
    local daily = tonumber(ARGV[base + 2])
    local cost = tonumber(ARGV[base + 3])
    local tolerance = burst * interval
    local rec = redis.call('HMGET', KEYS[firstKey + i - 1], 't', 'd', 'c')
    local tat = tonumber(rec[1]) or 0
    if tat < now then tat = now end
    local used = 0
    if tonumber(rec[2]) == day then used = tonumber(rec[3]) or 0 end
    local newTat = tat + cost * interval
    local burstOk = true
    local dailyOk = true
    if cost < 0 then
      if newTat < now then newTat = now end
    else
      burstOk = (newTat - now) <= tolerance + eps
      dailyOk = (used + cost) <= daily
    end
    local newCount = used + cost
    if newCount < 0 then newCount = 0 end
    decided[i] = {rec[1] ~= false, tat, used, newTat, newCount, burstOk, dailyOk, tolerance, interval, daily, cost}
    if refused == 0 and not (burstOk and dailyOk) then refused = i end
  end
  if refused == 0 then
    for i = 1, count do
      local d = decided[i]
      if d[11] > 0 or (d[11] < 0 and d[1]) then
        local key = KEYS[firstKey + i - 1]
        redis.call('HSET', key, 't', string.format('%.3f', d[4]), 'd', day, 'c', d[5])
        redis.call('PEXPIRE', key, math.ceil(math.max(d[4] - now, resetAt - now) + 60000))
      end
    end
  end
  local shown = refused
  if shown == 0 then shown = 1 end
  local d = decided[shown]
  local heldTat = d[2]
  local heldCount = d[3]
  if refused == 0 then
    heldTat = d[4]
    heldCount = d[5]
  end
  local retry = 0
  if not d[6] then retry = d[4] - now - d[8] end
  if not d[7] then retry = math.max(retry, resetAt - now) end
  local limited = 0
  if refused ~= 0 then
    if not d[7] then limited = 2 else limited = 1 end
  end
  local burstRemaining = math.floor((d[8] - (heldTat - now) + eps) / d[9])
  if burstRemaining < 0 then burstRemaining = 0 end
  local dailyRemaining = d[10] - heldCount
  if dailyRemaining < 0 then dailyRemaining = 0 end
  if retry < 0 then retry = 0 end
  local allowed = 0
  if refused == 0 then allowed = 1 end
  return {allowed, limited, dailyRemaining, burstRemaining, math.ceil(retry), refused}
end
local replies = {}
local arg = 2
local key = 1
while arg <= #ARGV do
  local count = tonumber(ARGV[arg])
  replies[#replies + 1] = decideCall(key, count, tonumber(ARGV[arg + 1]), tonumber(ARGV[arg + 2]), tonumber(ARGV[arg + 3]), arg + 4)
  arg = arg + 4 + count * 4
  key = key + count
end
return replies
`;

type LimitReply = [number, number, number, number, number, number];
type LimitCommand = (keyCount: number, ...keysThenArgs: Array<string | number>) => Promise<unknown>;

/** One call of the store: charges taken as one at `now`. */
interface LimitCall {
  charges: readonly LimitCharge[];
  now: number;
}

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
    // A Redis that is down or hung fails a request rather than holding it: commands are not queued while the
    // connection is down, and each one has 300 ms (an answer on a LAN takes well under one), so an account
    // page, which asks twice (its throttle, and the X-RateLimit-* headers), answers 503 within a second.
    commandTimeout: 300,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    // Not autopipelining: each command is written when it is made, still pipelined on the one connection. ioredis's
    // pipeline objects kept the requests waiting on them past the young generation, 4.7 KB promoted a request
    // (bench/README.md, History).
    enableAutoPipelining: false,
  });
  // Errors reach the callers of each command; without a listener ioredis would print them. The last one
  // says why a first connection failed, where connect() says only "Connection is closed.".
  let lastError: Error | undefined;
  client.on('error', (error: Error) => {
    lastError = error;
  });
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    throw new NetintelError('unreachable', `cannot connect to Redis at ${redactUrl(url)}: ${(lastError ?? (error as Error)).message}`, {
      cause: error,
      details: { redis: redactUrl(url) },
    });
  }
  client.defineCommand('netintelLimit', { lua: LIMIT_SCRIPT });
  const limit = (client as unknown as { netintelLimit: LimitCommand }).netintelLimit.bind(client);

  // The calls of one turn of the event loop (the requests read together) go to Redis as one script call: one
  // command for Redis to run and for ioredis to make and parse, however many requests wait on it.
  const batches = new DataLoader<LimitCall, CombinedLimitState>(
    async (calls) => {
      const keys = calls.flatMap((call) => call.charges.map((charge) => prefix + charge.subject));
      let replies: unknown;
      try {
        replies = await limit(
          keys.length,
          ...keys,
          EPSILON,
          ...calls.flatMap(({ charges, now }) => [
            charges.length,
            now,
            utcDay(now),
            nextUtcMidnight(now),
            ...charges.flatMap((charge) => [60_000 / charge.policy.perMinute, charge.policy.burst, charge.policy.daily, charge.cost]),
          ]),
        );
      } catch (error) {
        throw new NetintelError('unreachable', `the rate-limit store (Redis) did not answer: ${(error as Error).message}`, { cause: error });
      }
      return readReplies(replies, calls).map((reply, index) => stateOfReply(calls[index]!, reply));
    },
    // Redis runs nothing else while a script runs, so a batch stays short.
    { cache: false, batchScheduleFn: (dispatch) => setImmediate(dispatch), maxBatchSize: 256 },
  );
  const run = (charges: readonly LimitCharge[], now: number): Promise<CombinedLimitState> => batches.load({ charges, now });

  return {
    kind: 'redis',
    consume: async (subject, policy, cost, now) => stateOf(await run([{ subject, policy, cost }], now)),
    consumeAll: run,
    peek: async (subject, policy, now) => stateOf(await run([{ subject, policy, cost: 0 }], now)),
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

/**
 * The script's replies, one per call, each as LIMIT_SCRIPT returns it. Anything else (another script loaded
 * under the same name, a proxy that mangles replies) fails the batch's requests as a Redis that did not answer
 * does, rather than as a bug in netintel or, worse, as a decision.
 */
function readReplies(replies: unknown, calls: readonly LimitCall[]): LimitReply[] {
  if (!Array.isArray(replies) || replies.length !== calls.length) {
    throw unreadable(`${Array.isArray(replies) ? `${replies.length} replies` : typeof replies} for ${calls.length} calls`);
  }
  replies.forEach((reply, index) => {
    if (!isLimitReply(reply, calls[index]!.charges.length)) throw unreadable(`reply ${index + 1} is ${JSON.stringify(reply)?.slice(0, 80)}`);
  });
  return replies as LimitReply[];
}

function isLimitReply(reply: unknown, chargeCount: number): reply is LimitReply {
  if (!Array.isArray(reply) || reply.length !== 6 || !reply.every((value) => Number.isSafeInteger(value) && value >= 0)) return false;
  const [allowed, limited, , , , refused] = reply as LimitReply;
  // Allowed, not limited and no refusing charge go together; a refusal names one of the call's charges.
  return allowed <= 1 && limited <= 2 && refused <= chargeCount && (allowed === 1) === (limited === 0) && (allowed === 1) === (refused === 0);
}

const unreadable = (what: string) => new NetintelError('unreachable', `the rate-limit store (Redis) answered what netintel cannot read: ${what}`);

function stateOfReply({ charges, now }: LimitCall, [allowed, limited, dailyRemaining, burstRemaining, retryAfterMs, refused]: LimitReply): CombinedLimitState {
  const shown = charges[refused === 0 ? 0 : refused - 1]!.policy;
  return {
    allowed: allowed === 1,
    limitedBy: limited === 2 ? 'daily' : limited === 1 ? 'burst' : null,
    dailyLimit: shown.daily,
    dailyRemaining,
    resetAt: nextUtcMidnight(now),
    burstCapacity: shown.burst,
    burstRemaining,
    perMinute: shown.perMinute,
    retryAfterMs,
    refusedIndex: refused === 0 ? null : refused - 1,
  };
}

/** One caller's state, as `consume` gives it. */
function stateOf({ refusedIndex: _, ...state }: CombinedLimitState): LimitState {
  return state;
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
