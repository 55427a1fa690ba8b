/**
 * Reads an RFC 5322 §3.3 date-time, with the obsolete forms of §4.3 that
 * trace fields still carry (two-digit years, zone names such as GMT or
 * PDT, a missing seconds field, comments such as "(UTC)"), into ISO 8601
 * UTC. Written out rather than left to Date.parse, whose reading of
 * anything beyond ISO 8601 is each engine's own.
 */

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** RFC 5322 §4.3 obs-zone: the North American names; UT and GMT are +0000 (military letters are read as +0000 too, as §4.3 advises). */
const ZONES: Readonly<Record<string, number>> = { ut: 0, utc: 0, gmt: 0, z: 0, est: -5, edt: -4, cst: -6, cdt: -5, mst: -7, mdt: -6, pst: -8, pdt: -7 };

/** The whole text is the date: `+0000garbage` or a zone of `+05` is no zone, `Julyish` no month. */
const DATE = /^(?:[a-z]{3},?\s*)?(\d{1,2})\s+([a-z]{3,9})\s+(\d{2,4})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?\s*([+-]\d{4}|[a-z]{1,5})?(?:\s+[a-z]{1,5})?\s*$/i;

/** Month names written out, which some trace fields carry in place of the three letters, and `sept`. */
const FULL_MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

const MAX_COMMENT_NESTING = 8;

/** The time `text` states, as ISO 8601 UTC, or null when it is not a date-time. */
export function readMailDate(text: string): string | null {
  // Comments nest (RFC 5322 §3.2.2): the innermost go first, a few levels deep (a field of a million
  // nested parentheses must not cost a million passes; deeper, the date is unknown).
  let bare = text;
  for (let level = 0; level < MAX_COMMENT_NESTING && bare.includes('('); level++) bare = bare.replace(/\([^()]*\)/g, ' ');
  bare = bare.trim();
  const match = DATE.exec(bare);
  if (!match) return null;
  const [, dayText, monthText, yearText, hourText, minuteText, secondText, zoneText] = match;
  const word = monthText!.toLowerCase();
  const month = word.length === 3 ? MONTHS.indexOf(word) : word === 'sept' ? 8 : FULL_MONTHS.indexOf(word);
  let year = Number(yearText);
  // RFC 5322 §4.3: a two-digit year is 2000-2049 below 50, 1950-1999 otherwise; three digits add 1900.
  if (yearText!.length === 2) year += year < 50 ? 2000 : 1900;
  else if (yearText!.length === 3) year += 1900;
  const day = Number(dayText);
  const hour = Number(hourText);
  const minute = Number(minuteText);
  const second = secondText === undefined ? 0 : Number(secondText);
  if (month === -1 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60 || year < 1970 || year > 9999) return null;
  const offsetMinutes = zoneOffset(zoneText);
  if (offsetMinutes === null) return null;
  const utc = Date.UTC(year, month, day, hour, minute, Math.min(second, 59)) - offsetMinutes * 60_000;
  const date = new Date(utc);
  // Day 31 of a 30-day month rolls over: not a date.
  if (new Date(Date.UTC(year, month, day)).getUTCDate() !== day) return null;
  return Number.isNaN(date.getTime()) ? null : date.toISOString().replace('.000Z', 'Z');
}

function zoneOffset(zone: string | undefined): number | null {
  if (zone === undefined) return 0;
  if (/^[+-]\d{4}$/.test(zone)) {
    const sign = zone[0] === '-' ? -1 : 1;
    const hours = Number(zone.slice(1, 3));
    const minutes = Number(zone.slice(3, 5));
    if (hours > 23 || minutes > 59) return null;
    return sign * (hours * 60 + minutes);
  }
  const named = ZONES[zone.toLowerCase()];
  if (named !== undefined) return named * 60;
  return zone.length === 1 ? 0 : null;
}
