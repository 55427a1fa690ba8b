import { retryAfterValueMs } from '../engine/http/retry-after.js';

/** The wait a 429 answer asks for. */
export interface RetryAfter {
  /** Milliseconds to wait; may be Infinity (a number too large to hold); null when the header says no usable wait. */
  ms: number | null;
  /** The header's text as sent, cut short, for messages. */
  text: string;
}

/**
 * The wait a 429 answer asks for: X-RateLimit-RetryAfter (docs/api.md,
 * Plans and limits), else Retry-After, read as retryAfterValueMs reads it
 * (delay-seconds or an HTTP-date from `now`; a number written another way
 * is seconds too). A negative, empty or unreadable value is no usable wait
 * (`ms` null: the caller backs off on its own, and can quote what was
 * sent). Null when neither header is there.
 */
export function retryAfterOf(headers: Headers, now: number): RetryAfter | null {
  for (const name of ['x-ratelimit-retryafter', 'retry-after']) {
    const raw = headers.get(name);
    if (raw === null) continue;
    const value = raw.trim();
    const text = value.length > 40 ? `${value.slice(0, 40)}…` : value;
    return { ms: retryAfterValueMs(value, now), text };
  }
  return null;
}
