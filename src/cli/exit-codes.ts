import { ERROR_CODES, type ErrorCode } from '../errors.js';

export const EXIT_OK = 0;

/** The process exit code for an error code (the table in src/errors.ts). */
export function exitCodeFor(code: ErrorCode): number {
  return ERROR_CODES[code].exit;
}

/**
 * How far the checks behind one record could run: `complete`; `partial`
 * (some of its checks could not run, the record says which); or the error
 * code that kept every one of them from running (the record holds no
 * verdict). Records of lookups that are not checks are always complete.
 */
export type RecordCoverage = 'complete' | 'partial' | ErrorCode;

/**
 * The exit code of a run over several targets: 0 when all succeeded, 7
 * (`partial`) when some failed or some records could only be checked in
 * part, and the failures' own exit code when all failed (the most frequent
 * exit code when they differ, the lowest of those as frequent when they
 * tie, so that the order of the input does not change it). A record none
 * of whose checks could run counts as a failure with its failure's code.
 */
export function exitCodeForRun(succeeded: number, failures: ReadonlyMap<ErrorCode, number>, partial = 0): number {
  const failed = [...failures.values()].reduce((sum, count) => sum + count, 0);
  if (failed === 0 && partial === 0) return EXIT_OK;
  if (succeeded > 0 || partial > 0) return exitCodeFor('partial');
  // Counted by exit code: `upstream`, `unreachable` and `tls` are all exit 5.
  const byExit = new Map<number, number>();
  for (const [code, count] of failures) {
    const exit = exitCodeFor(code);
    byExit.set(exit, (byExit.get(exit) ?? 0) + count);
  }
  return [...byExit.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]![0];
}
