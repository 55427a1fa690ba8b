import type { LimitPolicy, LimitState } from './gcra.js';

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
  /** The state of `subject` without charging it. */
  peek(subject: string, policy: LimitPolicy, now: number): LimitState | Promise<LimitState>;
  /** Whether the store answers (health check). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
