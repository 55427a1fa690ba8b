import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { FailureThrottle, SIGN_IN_FAILURES } from '../../src/accounts/throttle.js';

const MINUTE = 60_000;

function fakeClock(start = 1_800_000_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

describe('FailureThrottle', () => {
  it('allows five failures per fifteen minutes by default and refuses the sixth attempt', () => {
    expect(SIGN_IN_FAILURES).toEqual({ limit: 5, windowMs: 15 * MINUTE });
    const clock = fakeClock();
    const throttle = new FailureThrottle({ ...SIGN_IN_FAILURES, now: clock.now });
    for (let failure = 1; failure <= 4; failure++) {
      expect(throttle.recordFailure('203.0.113.7')).toEqual({ allowed: true, remaining: 5 - failure, retryAfterMs: 0 });
      clock.advance(MINUTE);
    }
    expect(throttle.recordFailure('203.0.113.7')).toEqual({ allowed: false, remaining: 0, retryAfterMs: 11 * MINUTE });
    expect(throttle.check('203.0.113.7').allowed).toBe(false);
  });

  it('slides: each failure leaves the window on its own', () => {
    const clock = fakeClock();
    const throttle = new FailureThrottle({ limit: 3, windowMs: 10 * MINUTE, now: clock.now });
    throttle.recordFailure('k'); // t = 0
    clock.advance(2 * MINUTE);
    throttle.recordFailure('k'); // t = 2
    clock.advance(2 * MINUTE);
    throttle.recordFailure('k'); // t = 4
    expect(throttle.check('k')).toEqual({ allowed: false, remaining: 0, retryAfterMs: 6 * MINUTE });

    clock.advance(6 * MINUTE - 1); // just before the first failure leaves
    expect(throttle.check('k').allowed).toBe(false);
    expect(throttle.check('k').retryAfterMs).toBe(1);
    clock.advance(1); // t = 10: the failure at t = 0 has left
    expect(throttle.check('k')).toEqual({ allowed: true, remaining: 1, retryAfterMs: 0 });
    throttle.recordFailure('k'); // t = 10, counted with t = 2 and t = 4
    expect(throttle.check('k')).toEqual({ allowed: false, remaining: 0, retryAfterMs: 2 * MINUTE });
    clock.advance(20 * MINUTE);
    expect(throttle.check('k')).toEqual({ allowed: true, remaining: 3, retryAfterMs: 0 });
  });

  it('counts keys apart and forgets a key on reset', () => {
    const clock = fakeClock();
    const throttle = new FailureThrottle({ limit: 2, windowMs: MINUTE, now: clock.now });
    throttle.recordFailure('account:1');
    throttle.recordFailure('account:1');
    expect(throttle.check('account:1').allowed).toBe(false);
    expect(throttle.check('account:2').allowed).toBe(true);
    expect(throttle.check('address:198.51.100.1').remaining).toBe(2);
    throttle.reset('account:1');
    expect(throttle.check('account:1')).toEqual({ allowed: true, remaining: 2, retryAfterMs: 0 });
  });

  it('checking does not count', () => {
    const throttle = new FailureThrottle({ limit: 1, windowMs: MINUTE, now: fakeClock().now });
    for (let i = 0; i < 10; i++) expect(throttle.check('k').allowed).toBe(true);
  });

  it('drops keys whose failures left the window, and holds at most maxKeys', () => {
    const clock = fakeClock();
    const throttle = new FailureThrottle({ limit: 2, windowMs: MINUTE, now: clock.now, maxKeys: 3 });
    for (const key of ['a', 'b', 'c', 'd']) throttle.recordFailure(key);
    expect(throttle.size).toBe(3);
    expect(throttle.check('a').remaining).toBe(2); // the least recently failed key was forgotten
    expect(throttle.check('d').remaining).toBe(1);
    clock.advance(MINUTE);
    throttle.prune();
    expect(throttle.size).toBe(0);
  });

  it('agrees with a list of every failure, whatever the order and spacing of events (property)', () => {
    const event = fc.record({ advance: fc.nat({ max: 5 * MINUTE }), key: fc.constantFrom('a', 'b', 'c'), fail: fc.boolean() });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 20 * MINUTE }), fc.array(event, { maxLength: 60 }), (limit, windowMs, events) => {
        const clock = fakeClock();
        const throttle = new FailureThrottle({ limit, windowMs, now: clock.now });
        const all: Array<{ key: string; at: number }> = [];
        for (const { advance, key, fail } of events) {
          clock.advance(advance);
          if (fail) {
            throttle.recordFailure(key);
            all.push({ key, at: clock.now() });
          }
          const inWindow = all.filter((failure) => failure.key === key && failure.at > clock.now() - windowMs).map((failure) => failure.at);
          const state = throttle.check(key);
          expect(state.allowed).toBe(inWindow.length < limit);
          expect(state.remaining).toBe(Math.max(0, limit - inWindow.length));
          // Blocked until enough failures leave that fewer than `limit` remain.
          const expectedRetry = inWindow.length < limit ? 0 : inWindow[inWindow.length - limit]! + windowMs - clock.now();
          expect(state.retryAfterMs).toBe(expectedRetry);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a limit or window that makes no sense', () => {
    expect(() => new FailureThrottle({ limit: 0, windowMs: MINUTE })).toThrow(RangeError);
    expect(() => new FailureThrottle({ limit: 1.5, windowMs: MINUTE })).toThrow(RangeError);
    expect(() => new FailureThrottle({ limit: 1, windowMs: 0 })).toThrow(RangeError);
  });
});
