import type { LimitPolicy } from '../server/limits/gcra.js';
import type { LimitStore } from '../server/limits/limit-store.js';

/**
 * Limits on the account forms, kept in the server's limit store (Redis when
 * several servers share one), so every instance counts the same attempts.
 * Sign-in charges only failures; the other forms charge every request,
 * since each one sends mail or makes an account.
 *
 * Per address of the caller and per e-mail address typed: the second slows a
 * guesser spread over many addresses, and it is kept for every address typed,
 * with or without an account, so a refusal tells nothing about which exist.
 */
export const THROTTLES = {
  /** Wrong passwords from one client address. */
  signInFailuresByClient: { burst: 10, perMinute: 2, daily: 200 },
  /** Wrong passwords for one e-mail address, from anywhere. */
  signInFailuresByEmail: { burst: 5, perMinute: 1, daily: 50 },
  /** Sign-ups from one client address. */
  signUpsByClient: { burst: 5, perMinute: 0.5, daily: 50 },
  /** Mail sent to one address (verification, reset, "you have an account"): no one is flooded through the forms. */
  mailByEmail: { burst: 3, perMinute: 0.2, daily: 10 },
  /** Reset requests from one client address. */
  resetsByClient: { burst: 5, perMinute: 1, daily: 50 },
} as const satisfies Record<string, LimitPolicy>;

export type ThrottleName = keyof typeof THROTTLES;

export interface Throttled {
  retryAfterSeconds: number;
}

export class FormThrottles {
  constructor(
    private readonly limits: LimitStore,
    private readonly now: () => number,
  ) {}

  /** Whether another attempt is allowed, without counting one; the first refusal of the checks given. */
  async check(checks: ReadonlyArray<readonly [ThrottleName, string]>): Promise<Throttled | null> {
    for (const [name, subject] of checks) {
      const state = await this.limits.peek(this.subject(name, subject), THROTTLES[name], this.now());
      if (state.burstRemaining < 1 || state.dailyRemaining < 1) return { retryAfterSeconds: retryAfter(state.burstRemaining < 1 ? 60_000 / state.perMinute : state.resetAt - this.now()) };
    }
    return null;
  }

  /** Counts one attempt against each; the first refusal, if one of them was already full. */
  async charge(checks: ReadonlyArray<readonly [ThrottleName, string]>): Promise<Throttled | null> {
    let refused: Throttled | null = null;
    for (const [name, subject] of checks) {
      const state = await this.limits.consume(this.subject(name, subject), THROTTLES[name], 1, this.now());
      if (!state.allowed && refused === null) refused = { retryAfterSeconds: retryAfter(state.retryAfterMs) };
    }
    return refused;
  }

  private subject(name: ThrottleName, subject: string): string {
    return `form:${name}:${subject}`;
  }
}

function retryAfter(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
