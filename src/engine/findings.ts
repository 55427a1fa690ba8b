/**
 * One schema for every check's findings (mail domain checks, SMTP probes,
 * blacklist verdicts): a stable id, a severity, a message for people, the
 * RFC section behind it, and the evidence that produced it. The same
 * findings appear in the CLI's json and in the API.
 */
/**
 * How serious a finding is. `unknown` is not a problem of what was checked
 * but the absence of an answer: the check behind the finding could not run
 * (its lookups timed out or failed), so nothing is known either way. It is
 * never "no record", never counted by `--fail-on`; a record with one was
 * checked in part (the CLI exits 7, docs/exit-codes.md), and when a lookup
 * failed the finding carries it as `evidence.error` ({ code, message }).
 */
export type Severity = 'error' | 'warning' | 'unknown' | 'info' | 'pass';

export interface Finding {
  /** Stable identifier, snake_case, e.g. `spf_lookup_limit`. */
  id: string;
  severity: Severity;
  message: string;
  /** The specification section behind the finding, e.g. `RFC 7208 §4.6.4`, or null. */
  rfc: string | null;
  /** JSON-safe facts that produced the finding (the record, the count, the address...). */
  evidence: Record<string, unknown> | null;
}

/** Severities from the most to the least serious (`unknown` after the problems, before what is known to be fine). */
export const SEVERITIES: readonly Severity[] = ['error', 'warning', 'unknown', 'info', 'pass'];

/**
 * The evidence of an `unknown` finding: its `error`, when it has one, is the
 * failed lookup as `{ code, message }`, which the reports read back
 * (findingFailures, check-failure.ts); the type holds every such finding to it.
 */
type UnknownEvidence = Record<string, unknown> & { error?: { code: string; message: string } | null };

export function finding<S extends Severity>(
  id: string,
  severity: S,
  message: string,
  rfc: string | null = null,
  evidence: (S extends 'unknown' ? UnknownEvidence : Record<string, unknown>) | null = null,
): Finding {
  return { id, severity, message, rfc, evidence };
}

/** True when any finding is at least as serious as `threshold` (`--fail-on`); `unknown` findings never are (a check that could not run is the exit code's business). */
export function hasFindingAtOrAbove(findings: readonly Finding[], threshold: 'error' | 'warning'): boolean {
  const limit = SEVERITIES.indexOf(threshold);
  return findings.some((item) => item.severity !== 'unknown' && SEVERITIES.indexOf(item.severity) <= limit);
}

/** True when a finding says part of a check could not run (severity `unknown`): the record was checked in part, never in full. */
export function leavesPartUnchecked(findings: readonly Finding[]): boolean {
  return findings.some((item) => item.severity === 'unknown');
}
