const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT` and the obsolete RFC 850 form `Sunday, 06-Nov-94 08:49:37 GMT` (RFC 9110 §5.6.7). */
const FIXDATE_OR_RFC850 = /^[a-z]{3,9}, (\d{2})[ -]([a-z]{3})[ -](\d{2}|\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/i;
/** The obsolete asctime form `Sun Nov  6 08:49:37 1994` (RFC 9110 §5.6.7). */
const ASCTIME = /^[a-z]{3} ([a-z]{3}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/i;

/**
 * An HTTP-date (RFC 9110 §5.6.7) as milliseconds since the epoch, or NaN
 * for text of another form. Only the three forms the RFC names are read:
 * Date.parse alone takes words with a year in them ("later 2099") or a bare
 * number ("soon 2") for a date. A two-digit year more than 50 years ahead
 * of `now` is read as the past century's, as the RFC says.
 */
export function parseHttpDate(text: string, now: number): number {
  let parts: [day: string, month: string, year: string, hour: string, minute: string, second: string];
  const fixdate = FIXDATE_OR_RFC850.exec(text);
  const asctime = fixdate === null ? ASCTIME.exec(text) : null;
  if (fixdate !== null) parts = [fixdate[1]!, fixdate[2]!, fixdate[3]!, fixdate[4]!, fixdate[5]!, fixdate[6]!];
  else if (asctime !== null) parts = [asctime[2]!, asctime[1]!, asctime[6]!, asctime[3]!, asctime[4]!, asctime[5]!];
  else return Number.NaN;
  const [day, hour, minute, second] = [parts[0], parts[3], parts[4], parts[5]].map(Number) as [number, number, number, number];
  const month = MONTHS.indexOf(parts[1].toLowerCase());
  let year = Number(parts[2]);
  if (parts[2].length === 2) {
    year += 2000;
    if (year > new Date(now).getUTCFullYear() + 50) year -= 100;
  }
  if (month < 0 || hour > 23 || minute > 59 || second > 60) return Number.NaN;
  const at = Date.UTC(year, month, day, hour, minute, Math.min(second, 59));
  // Date.UTC rolls 31 Feb over into March: a day the month does not have is no date.
  return new Date(at).getUTCDate() === day ? at : Number.NaN;
}

/**
 * The wait a Retry-After value asks for (RFC 9110 §10.2.3), in milliseconds
 * from `now`: delay-seconds, or an HTTP-date (one already passed is no
 * wait). A number written another way (`1e9`, `2.5`) is read as seconds
 * too, since it still says how long the server wants; it may be Infinity (a
 * number too large to hold). Null for a negative, empty or unreadable value.
 */
export function retryAfterValueMs(value: string, now: number): number | null {
  const trimmed = value.trim();
  const seconds = trimmed === '' ? Number.NaN : Number(trimmed);
  if (!Number.isNaN(seconds)) return seconds >= 0 ? seconds * 1000 : null;
  const date = parseHttpDate(trimmed, now);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
