import { NetintelError } from '../../errors.js';

/**
 * One deadline shared by every query of a check: all zones are asked at
 * once and whatever has not answered when it passes is a timeout, so a
 * check never takes longer than the deadline, however many zones it asks.
 */
export interface Deadline {
  /** Milliseconds since the deadline was set (0.1 ms resolution). */
  elapsedMs(): number;
  /** Milliseconds left, 0 once passed. */
  remainingMs(): number;
  expired(): boolean;
  /**
   * Settles like `work`, or rejects with a `timeout` NetintelError
   * (`what` in the message) when the deadline passes first. `work` keeps
   * running; its late outcome is ignored.
   */
  race<T>(work: Promise<T>, what: string): Promise<T>;
  /** Stops the timer (the check is over). */
  clear(): void;
}

/** Starts a deadline `timeoutMs` from now. */
export function startDeadline(timeoutMs: number): Deadline {
  const started = performance.now();
  const listeners = new Set<() => void>();
  let passed = false;
  const timer = setTimeout(() => {
    passed = true;
    for (const listener of [...listeners]) listener();
    listeners.clear();
  }, timeoutMs);
  return {
    elapsedMs: () => Math.round((performance.now() - started) * 10) / 10,
    remainingMs: () => (passed ? 0 : Math.max(0, timeoutMs - (performance.now() - started))),
    expired: () => passed,
    race<T>(work: Promise<T>, what: string): Promise<T> {
      const late = () => new NetintelError('timeout', `no answer for ${what} within the ${timeoutMs} ms deadline`, { details: { timeout_ms: timeoutMs } });
      if (passed) {
        work.catch(() => {});
        return Promise.reject(late());
      }
      return new Promise<T>((resolve, reject) => {
        const onExpiry = () => reject(late());
        listeners.add(onExpiry);
        work.then(
          (value) => {
            listeners.delete(onExpiry);
            resolve(value);
          },
          (error: unknown) => {
            listeners.delete(onExpiry);
            reject(error);
          },
        );
      });
    },
    clear: () => {
      clearTimeout(timer);
      listeners.clear();
    },
  };
}
