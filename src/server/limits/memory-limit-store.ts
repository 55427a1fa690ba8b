import { decide, recordLifetimeMs, utcDay, type LimitPolicy, type LimitRecord, type LimitState } from './gcra.js';
import type { CombinedLimitState, LimitCharge, LimitStore } from './limit-store.js';

/** How often (server clock) records that no longer matter are dropped. */
const SWEEP_EVERY_MS = 60_000;

/** Items already charged to subjects today, as the key database recorded them before this process started. */
export interface ChargedToday {
  /** The time they were read, ms since the epoch: the UTC day they count for. */
  at: number;
  counts: ReadonlyMap<string, number>;
}

/**
 * Limits in process memory. Decisions are synchronous, so each is atomic:
 * no request can slip between the check and the charge. `charged` starts
 * each subject's day where the key database says it stood, so a restart
 * does not give every key its daily allowance again (its burst bucket
 * starts full: the database does not keep it).
 */
export function createMemoryLimitStore(charged?: ChargedToday): LimitStore {
  const records = new Map<string, { record: LimitRecord; expiresAt: number }>();
  let lastSweep = -Infinity;
  if (charged) {
    for (const [subject, count] of charged.counts) {
      const record = { tat: 0, day: utcDay(charged.at), count };
      records.set(subject, { record, expiresAt: charged.at + recordLifetimeMs(record, charged.at) });
    }
  }

  const sweep = (now: number) => {
    if (now - lastSweep < SWEEP_EVERY_MS) return;
    lastSweep = now;
    for (const [subject, entry] of records) if (entry.expiresAt <= now) records.delete(subject);
  };
  const current = (subject: string, now: number): LimitRecord | null => {
    const entry = records.get(subject);
    return entry && entry.expiresAt > now ? entry.record : null;
  };
  const store = (subject: string, next: LimitRecord | null, now: number) => {
    if (next) records.set(subject, { record: next, expiresAt: now + recordLifetimeMs(next, now) });
  };

  return {
    kind: 'memory',
    consume(subject: string, policy: LimitPolicy, cost: number, now: number): LimitState {
      sweep(now);
      const { state, next } = decide(current(subject, now), policy, cost, now);
      store(subject, next, now);
      return state;
    },
    async consumeAll(charges: readonly LimitCharge[], now: number): Promise<CombinedLimitState> {
      sweep(now);
      const decided = charges.map((charge) => decide(current(charge.subject, now), charge.policy, charge.cost, now));
      const refused = decided.findIndex((each) => !each.state.allowed);
      if (refused === -1) decided.forEach((each, index) => store(charges[index]!.subject, each.next, now));
      return { ...decided[refused === -1 ? 0 : refused]!.state, refusedIndex: refused === -1 ? null : refused };
    },
    peek(subject: string, policy: LimitPolicy, now: number): LimitState {
      return decide(current(subject, now), policy, 0, now).state;
    },
    ping: async () => true,
    close: async () => {
      records.clear();
    },
  };
}
