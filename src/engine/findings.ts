/**
 * One schema for every check's findings (mail domain checks, SMTP probes,
 * blacklist verdicts): a stable id, a severity, a message for people, the
 * RFC section behind it, and the evidence that produced it. The same
 * findings appear in the CLI's json and in the API.
 */
export type Severity = 'error' | 'warning' | 'info' | 'pass';

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

/** Severities from the most to the least serious. */
export const SEVERITIES: readonly Severity[] = ['error', 'warning', 'info', 'pass'];

export function finding(id: string, severity: Severity, message: string, rfc: string | null = null, evidence: Record<string, unknown> | null = null): Finding {
  return { id, severity, message, rfc, evidence };
}

/** True when any finding is at least as serious as `threshold` (`--fail-on`). */
export function hasFindingAtOrAbove(findings: readonly Finding[], threshold: 'error' | 'warning'): boolean {
  const limit = SEVERITIES.indexOf(threshold);
  return findings.some((item) => SEVERITIES.indexOf(item.severity) <= limit);
}
