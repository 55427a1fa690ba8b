import { ERROR_CODES, type ErrorCode } from '../errors.js';

export const EXIT_OK = 0;

/** The process exit code for an error code (the table in src/errors.ts). */
export function exitCodeFor(code: ErrorCode): number {
  return ERROR_CODES[code].exit;
}

/**
 * The exit code of a run over several targets: 0 when all succeeded, 7
 * (`partial`) when some failed, and the failure's own code when all failed
 * (the most frequent one when they differ).
 */
export function exitCodeForRun(succeeded: number, failures: ReadonlyMap<ErrorCode, number>): number {
  const failed = [...failures.values()].reduce((sum, count) => sum + count, 0);
  if (failed === 0) return EXIT_OK;
  if (succeeded > 0) return exitCodeFor('partial');
  const [mostFrequent] = [...failures.entries()].sort((a, b) => b[1] - a[1])[0]!;
  return exitCodeFor(mostFrequent);
}
