import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The hint that Tor or proxy feeds are missing is said at most this often. */
const HINT_INTERVAL_MS = 24 * 60 * 60 * 1000;
/** In the data dir: its modification time is when the hint was last said. */
export const FEEDS_HINT_STAMP = 'feeds-hint.stamp';
/** The fields of a record that show its security verdict (ip: security.*; vpn: is_*, threat_*, coverage). */
const VERDICT_FIELD = /^(security(\.|$)|is_|threat_|coverage(\.|$))/;

/** Whether a run's records show the security verdict the hint qualifies: every field, or a verdict field among --fields. */
export function showsVerdict(fields: readonly string[] | null | undefined): boolean {
  return fields === null || fields === undefined || fields.some((field) => VERDICT_FIELD.test(field));
}

/**
 * Whether the hint is due (not said in this data dir within a day), noting
 * that it is said now. A data dir that cannot be written to gets the hint
 * each time: a reminder too often beats none.
 */
export function takeDailyHint(dataDir: string, now = Date.now()): boolean {
  const stamp = join(dataDir, FEEDS_HINT_STAMP);
  try {
    if (now - statSync(stamp).mtimeMs < HINT_INTERVAL_MS) return false;
  } catch {
    // No stamp yet: the hint is due.
  }
  try {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(stamp, `${new Date(now).toISOString()}\n`);
  } catch {
    // Not writable: said again next time.
  }
  return true;
}

/** The hint, without the `netintel: ` prefix. */
export function feedsHint(missing: ReadonlySet<string>): string {
  const what = missing.size === 2 ? 'Tor and proxy feeds are' : missing.has('tor_exit_list') ? 'the Tor exit feed is' : 'the open proxy feed is';
  return `${what} not installed: run "netintel data update" for a complete verdict`;
}
