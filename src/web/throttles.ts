import type { LimitPolicy } from '../server/limits/gcra.js';
import type { LimitCharge, LimitStore } from '../server/limits/limit-store.js';

/**
 * Limits on the account forms, kept in the server's limit store (Redis when
 * several servers share one), so every instance counts the same attempts.
 * docs/accounts.md explains them as a threat model.
 *
 * They follow OWASP's advice against both guessing and lockout: attempts
 * are counted per client address, per e-mail address and client together,
 * and per e-mail address from browsers the account does not know. A browser
 * that has signed in to the account before carries a device cookie
 * (device-cookie.ts) and is counted on its own instead: failures from
 * elsewhere never block it. Every limit is counted for any address typed,
 * with or without an account, so a refusal tells nothing about which exist.
 */
export const THROTTLES = {
  /** Password attempts from one client address (refunded when the password is right). */
  signInByClient: { burst: 10, perMinute: 2, daily: 200 },
  /** Password attempts at one e-mail address from one client address. */
  signInByAddressAndClient: { burst: 5, perMinute: 1, daily: 50 },
  /** Password attempts at one e-mail address from every browser without its device cookie. */
  signInByAddress: { burst: 10, perMinute: 1, daily: 100 },
  /** Password attempts from one browser carrying the account's device cookie (instead of the three above). */
  signInByDevice: { burst: 10, perMinute: 2, daily: 100 },
  /** Password changes of one account from its dashboard (not given back): a stolen session cannot end the owner's reset links one after another. */
  passwordChangesByAccount: { burst: 3, perMinute: 1 / 60, daily: 10 },
  /** Sign-ups from one client address. */
  signUpsByClient: { burst: 5, perMinute: 0.5, daily: 50 },
  /** Reset requests from one client address. */
  resetsByClient: { burst: 5, perMinute: 1, daily: 50 },
  /** Mail to one address caused from one client address (sign-up, reset, a new verification link). */
  mailByAddressAndClient: { burst: 2, perMinute: 0.2, daily: 10 },
  /** Mail to one address caused from every browser without its device cookie: no one is flooded through the forms. */
  mailByAddress: { burst: 5, perMinute: 0.1, daily: 20 },
  /** Mail to one address caused from a browser carrying its device cookie (instead of the per-address one). */
  mailByDevice: { burst: 3, perMinute: 0.2, daily: 10 },
} as const satisfies Record<string, LimitPolicy>;

export type ThrottleName = keyof typeof THROTTLES;

/** A throttle and what it counts: a client address, an e-mail address, a device, or a pair. */
export type ThrottleCheck = readonly [ThrottleName, string];

export interface Throttled {
  retryAfterSeconds: number;
  /** The throttle that refused. */
  by: ThrottleName;
}

/** Attempts taken from the throttles before the work they pay for; `refund` gives them back where the design says so. */
export interface Reservation {
  refund(): Promise<void>;
}

export class FormThrottles {
  constructor(
    private readonly limits: LimitStore,
    private readonly now: () => number,
  ) {}

  /**
   * Takes one attempt from every throttle given, in one atomic step, before
   * any expensive work: of any number of requests at once, exactly as many
   * as the tightest throttle allows get a reservation; the others are
   * refused without costing anything.
   */
  async reserve(checks: readonly ThrottleCheck[]): Promise<Reservation | Throttled> {
    const charges = (cost: number): LimitCharge[] => checks.map(([name, subject]) => ({ subject: `form:${name}:${subject}`, policy: THROTTLES[name], cost }));
    const state = await this.limits.consumeAll(charges(1), this.now());
    if (state.refusedIndex !== null) return { retryAfterSeconds: Math.max(1, Math.ceil(state.retryAfterMs / 1000)), by: checks[state.refusedIndex]![0] };
    let refunded = false;
    return {
      refund: async () => {
        if (refunded) return;
        refunded = true;
        await this.limits.consumeAll(charges(-1), this.now());
      },
    };
  }
}

export function isThrottled(result: Reservation | Throttled): result is Throttled {
  return 'retryAfterSeconds' in result;
}
