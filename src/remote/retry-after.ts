/** The wait a 429 answer asks for. */
export interface RetryAfter {
  /** Milliseconds to wait; may be Infinity (a number too large to hold); null when the header says no usable wait. */
  ms: number | null;
  /** The header's text as sent, cut short, for messages. */
  text: string;
}

/**
 * The wait a 429 answer asks for: X-RateLimit-RetryAfter (docs/api.md,
 * Plans and limits), else Retry-After (RFC 9110 §10.2.3: delay-seconds or
 * an HTTP-date, read from `now`). A number written another way (`1e9`,
 * `2.5`) is read as seconds too, since it still says how long the server
 * wants; a negative, empty or unreadable value is no usable wait (`ms` null:
 * the caller backs off on its own, and can quote what was sent). Null when
 * neither header is there.
 */
export function retryAfterOf(headers: Headers, now: number): RetryAfter | null {
  for (const name of ['x-ratelimit-retryafter', 'retry-after']) {
    const raw = headers.get(name);
    if (raw === null) continue;
    const value = raw.trim();
    const text = value.length > 40 ? `${value.slice(0, 40)}…` : value;
    const seconds = value === '' ? Number.NaN : Number(value);
    if (!Number.isNaN(seconds)) return { ms: seconds >= 0 ? seconds * 1000 : null, text };
    // An HTTP-date has a weekday and a month name: a bare word like "soon" is not one, whatever Date.parse guesses.
    const date = /[a-z]{3}.*\d{4}/i.test(value) ? Date.parse(value) : Number.NaN;
    return { ms: Number.isFinite(date) ? Math.max(0, date - now) : null, text };
  }
  return null;
}
