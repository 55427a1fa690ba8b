import { isErrorCode, type ErrorCode, type NetintelError } from '../errors.js';
import type { Finding } from './findings.js';

/**
 * Why the checks behind a verdict could not run, in full or in part (the
 * e-mail test's `failure`, the blacklist verdict's): the error code that
 * kept them from running (the most frequent when several did), a few words
 * for a headline, and the first error's own message. A CLI run whose
 * records could not be checked at all exits with `code`'s exit code.
 */
export interface CheckFailure {
  /** The error code that kept the checks from running (`timeout`, `unreachable`, `upstream`...): the CLI's exit code when none could run. */
  code: ErrorCode;
  /** What went wrong in a few words: `DNS did not answer`. */
  reason: string;
  /** The first error with that code, as its lookup reported it (names the question and the resolver). */
  message: string;
}

/** One failure of a check: its error code and message. */
export type FailureLike = Pick<NetintelError, 'code' | 'message'>;

// Every lookup of these checks goes through DNS, so the words name DNS.
const REASONS: Partial<Record<ErrorCode, string>> = {
  timeout: 'DNS did not answer',
  unreachable: 'the DNS server cannot be reached',
  upstream: 'DNS refused or gave no usable answer',
  tls: 'TLS with the DNS server failed',
  forbidden: 'the DNS server may not be asked',
  not_found: 'a lookup it depends on failed',
};

/** The words of a headline for a failure code: `DNS did not answer` for `timeout`. */
export function failureReason(code: ErrorCode): string {
  return REASONS[code] ?? code.replaceAll('_', ' ');
}

/**
 * The failure of a check from the failures of its parts, or null when there
 * are none: the most frequent code (the first seen among equals), its first
 * message. `not_found` (a check skipped because one it depends on failed)
 * counts only when nothing else failed, as it only repeats that failure.
 */
export function checkFailure(failures: readonly FailureLike[]): CheckFailure | null {
  const own = failures.filter((item) => item.code !== 'not_found');
  const counted = own.length > 0 ? own : failures;
  if (counted.length === 0) return null;
  const tally = new Map<ErrorCode, number>();
  for (const item of counted) tally.set(item.code, (tally.get(item.code) ?? 0) + 1);
  let code = counted[0]!.code;
  for (const [candidate, count] of tally) if (count > tally.get(code)!) code = candidate;
  const first = counted.find((item) => item.code === code)!;
  return { code, reason: failureReason(code), message: first.message };
}

/**
 * The failures behind findings of severity `unknown` that name one: a
 * lookup's `evidence.error` (`{ code, message }`, as `failureJson` makes it).
 * A finding that says why in words alone adds none.
 */
export function findingFailures(findings: readonly Finding[]): FailureLike[] {
  const out: FailureLike[] = [];
  for (const item of findings) {
    const error = item.severity === 'unknown' ? item.evidence?.error : undefined;
    if (typeof error !== 'object' || error === null) continue;
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && isErrorCode(code) && typeof message === 'string') out.push({ code, message });
  }
  return out;
}
