import type { Finding, Severity } from '../engine/findings.js';

const ORDER: readonly Severity[] = ['error', 'warning', 'unknown', 'info', 'pass'];

/**
 * Findings as text grouped by severity, most serious first, for the table
 * and CSV views: a heading per severity present, then one line per finding
 * (`id: message [RFC]`). json, ndjson and xml keep the finding objects.
 */
export function presentFindings(findings: readonly Finding[] | null | undefined): string | null {
  if (!findings) return null;
  if (findings.length === 0) return 'no findings';
  const lines: string[] = [];
  for (const severity of ORDER) {
    const group = findings.filter((item) => item.severity === severity);
    if (group.length === 0) continue;
    lines.push(`${severity.toUpperCase()} (${group.length})`);
    for (const item of group) lines.push(`  ${item.id}: ${item.message}${item.rfc ? ` [${item.rfc}]` : ''}`);
  }
  return lines.join('\n');
}

/** Counts per severity in one line: `2 error, 1 warning, 4 pass`. */
export function presentFindingCounts(findings: readonly Finding[] | null | undefined): string | null {
  if (!findings) return null;
  const parts = ORDER.map((severity) => [severity, findings.filter((item) => item.severity === severity).length] as const)
    .filter(([, count]) => count > 0)
    .map(([severity, count]) => `${count} ${severity}`);
  return parts.length > 0 ? parts.join(', ') : 'no findings';
}
