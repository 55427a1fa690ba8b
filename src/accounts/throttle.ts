/**
 * A sliding-window limiter of failures (wrong passwords, reset requests),
 * keyed by any string: a client address, an account id, an e-mail address.
 *
 * It keeps the time of each failure in the last window per key, in memory
 * of this process. Behind a load balancer with several instances each one
 * counts on its own, so the effective limit is multiplied: those setups need
 * the Redis-backed limits (not built yet for accounts).
 */
export interface ThrottleOptions {
  /** Failures allowed within one window. */
  limit: number;
  windowMs: number;
  /** The clock, in milliseconds (default Date.now); tests pass a fake one. */
  now?: () => number;
  /** Keys kept at most; the least recently failed key is forgotten first. */
  maxKeys?: number;
}

export interface ThrottleState {
  /** False once `limit` failures fall inside the window. */
  allowed: boolean;
  /** Failures still allowed in the window. */
  remaining: number;
  /** Until the oldest counted failure leaves the window; 0 when allowed. */
  retryAfterMs: number;
}

/** The setting for sign-in failures, applied once per client address and once per account. */
export const SIGN_IN_FAILURES: Readonly<Pick<ThrottleOptions, 'limit' | 'windowMs'>> = Object.freeze({ limit: 5, windowMs: 15 * 60_000 });

const DEFAULT_MAX_KEYS = 100_000;

export class FailureThrottle {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #now: () => number;
  readonly #maxKeys: number;
  /** Failure times per key, oldest first; Map order is least recently failed first. */
  readonly #failures = new Map<string, number[]>();

  constructor(options: ThrottleOptions) {
    if (!Number.isSafeInteger(options.limit) || options.limit < 1) throw new RangeError('limit must be a positive integer');
    if (!(options.windowMs > 0)) throw new RangeError('windowMs must be positive');
    this.#limit = options.limit;
    this.#windowMs = options.windowMs;
    this.#now = options.now ?? Date.now;
    this.#maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
  }

  /** Whether another attempt is allowed for `key` now. Does not count anything. */
  check(key: string): ThrottleState {
    const now = this.#now();
    const times = this.#recent(key, now);
    if (times.length < this.#limit) return { allowed: true, remaining: this.#limit - times.length, retryAfterMs: 0 };
    const oldestCounted = times[times.length - this.#limit]!;
    return { allowed: false, remaining: 0, retryAfterMs: oldestCounted + this.#windowMs - now };
  }

  /** Counts one failure for `key` and returns the state after it. */
  recordFailure(key: string): ThrottleState {
    const now = this.#now();
    const times = this.#recent(key, now);
    times.push(now);
    // Keep only what can still matter: the last `limit` failures decide.
    if (times.length > this.#limit) times.splice(0, times.length - this.#limit);
    this.#failures.delete(key);
    this.#failures.set(key, times);
    while (this.#failures.size > this.#maxKeys) {
      const oldestKey = this.#failures.keys().next().value as string;
      this.#failures.delete(oldestKey);
    }
    return this.check(key);
  }

  /** Forgets the failures of `key` (after a successful sign-in). */
  reset(key: string): void {
    this.#failures.delete(key);
  }

  /** Drops keys whose failures have all left the window. */
  prune(): void {
    const now = this.#now();
    for (const key of [...this.#failures.keys()]) this.#recent(key, now);
  }

  /** Keys currently held. */
  get size(): number {
    return this.#failures.size;
  }

  #recent(key: string, now: number): number[] {
    const times = this.#failures.get(key);
    if (times === undefined) return [];
    const cutoff = now - this.#windowMs;
    const firstInWindow = times.findIndex((time) => time > cutoff);
    if (firstInWindow === -1) {
      this.#failures.delete(key);
      return [];
    }
    if (firstInWindow > 0) times.splice(0, firstInWindow);
    return times;
  }
}
