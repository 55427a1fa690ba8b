import { peerErrorCode } from '../errors.js';
import type { RecordCoverage } from './exit-codes.js';

/** What the coverage of a record is read from: how much could be checked, and the failure that stopped the rest. */
export interface CoverageFacts {
  /** `all` / `some` / `none` of the record's checks could run. */
  checked: 'all' | 'some' | 'none' | undefined;
  /** What kept the checks from running: its code, and its message when the record gives one. */
  failure: { code: string; message?: string } | null | undefined;
}

/**
 * A record's coverage for the exit code (exit-codes.ts): complete, partial,
 * or the code of the failure that kept every check from running. A record
 * from a server that does not say (an older version) is complete; a code
 * this version does not know, or one no check can fail with (`findings`,
 * `output_failed`, `partial`: the run's own verdicts, which a server's record
 * must not choose), counts as `upstream`, the server's failure.
 */
export function coverageOf(facts: CoverageFacts): RecordCoverage {
  if (facts.checked === 'some') return 'partial';
  if (facts.checked !== 'none') return 'complete';
  const code = facts.failure?.code;
  return peerErrorCode(code) ?? 'upstream';
}
