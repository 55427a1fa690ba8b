import type { LimitPolicy, LimitState } from './gcra.js';

/** Items charged to one subject under one policy; a negative cost gives items back. */
export interface LimitCharge {
  subject: string;
  policy: LimitPolicy;
  cost: number;
}

/** The verdict on several charges taken as one: the state of the one that refused, else of the first. */
export interface CombinedLimitState extends LimitState {
  /** Index in the charges of the first one refused; null when all were taken. */
  refusedIndex: number | null;
}

/**
 * Where the burst buckets and daily counts live: process memory (one
 * server), or Redis (several servers sharing one budget). Both decide with
 * gcra.ts, atomically per caller: under any number of concurrent requests
 * exactly the allowance is accepted.
 */
export interface LimitStore {
  readonly kind: 'memory' | 'redis';
  /**
   * Charges `cost` items to `subject` if both its bucket and its daily
   * allowance can take them, and says what is left. `now` is the server's
   * clock (ms since the epoch), so tests can move time.
   */
  consume(subject: string, policy: LimitPolicy, cost: number, now: number): LimitState | Promise<LimitState>;
  /**
   * Takes every charge, or none: one atomic step over all of them, so that a
   * throttle counted per client and per address at once cannot be passed by
   * requests slipping between the two. Refunds (negative costs) are always taken.
   */
  consumeAll(charges: readonly LimitCharge[], now: number): Promise<CombinedLimitState>;
  /** The state of `subject` without charging it. */
  peek(subject: string, policy: LimitPolicy, now: number): LimitState | Promise<LimitState>;
  /** Whether the store answers (health check). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
