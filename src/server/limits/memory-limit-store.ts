import { decide, recordLifetimeMs, type LimitPolicy, type LimitRecord, type LimitState } from './gcra.js';
import type { LimitStore } from './limit-store.js';

/** How often (server clock) records that no longer matter are dropped. */
const SWEEP_EVERY_MS = 60_000;

/**
 * Limits in process memory. Decisions are synchronous, so each is atomic:
 * no request can slip between the check and the charge.
 */
export function createMemoryLimitStore(): LimitStore {
  const records = new Map<string, { record: LimitRecord; expiresAt: number }>();
  let lastSweep = -Infinity;

  const sweep = (now: number) => {
    if (now - lastSweep < SWEEP_EVERY_MS) return;
    lastSweep = now;
    for (const [subject, entry] of records) if (entry.expiresAt <= now) records.delete(subject);
  };

  return {
    kind: 'memory',
    consume(subject: string, policy: LimitPolicy, cost: number, now: number): LimitState {
      sweep(now);
      const entry = records.get(subject);
      const { state, next } = decide(entry && entry.expiresAt > now ? entry.record : null, policy, cost, now);
      if (next) records.set(subject, { record: next, expiresAt: now + recordLifetimeMs(next, now) });
      return state;
    },
    peek(subject: string, policy: LimitPolicy, now: number): LimitState {
      const entry = records.get(subject);
      return decide(entry && entry.expiresAt > now ? entry.record : null, policy, 0, now).state;
    },
    ping: async () => true,
    close: async () => {
      records.clear();
    },
  };
}
