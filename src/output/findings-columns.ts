import type { RecordSchema } from './record-schema.js';

/**
 * A record's findings in CSV: the most serious severity, a count per
 * severity and the finding ids, one flat cell each, instead of the table
 * view's multi-line text (one CSV row stays one line; a spreadsheet or awk
 * can filter on `findings.max_severity`). json, ndjson and xml keep the
 * finding objects.
 */
export const FINDINGS_CSV_COLUMNS = [
  'findings.max_severity',
  'findings.count.error',
  'findings.count.warning',
  'findings.count.info',
  'findings.ids',
] as const;

/** Most serious first; `unknown` (a check that could not run) after the problems, so a record with nothing checked reads `unknown`, not `none`. */
const SEVERITY_ORDER = ['error', 'warning', 'unknown', 'info', 'pass'] as const;

interface FindingLike {
  id: string;
  severity: string;
}

/**
 * One of FINDINGS_CSV_COLUMNS of a findings list: null when the record has
 * none (the check did not run), `none` as the most serious of an empty list.
 */
export function findingsCsvCell(findings: unknown, column: string): string | number | null {
  if (!Array.isArray(findings)) return null;
  const list = findings as readonly FindingLike[];
  switch (column) {
    case 'findings.max_severity':
      return SEVERITY_ORDER.find((severity) => list.some((item) => item.severity === severity)) ?? 'none';
    case 'findings.count.error':
    case 'findings.count.warning':
    case 'findings.count.info': {
      const severity = column.slice('findings.count.'.length);
      return list.filter((item) => item.severity === severity).length;
    }
    case 'findings.ids': // each id once, in the order found
      return [...new Set(list.map((item) => item.id))].join(' ');
    default:
      return null;
  }
}

/** `csvFlat` of a schema whose records carry a `findings` list. */
export const FINDINGS_CSV: NonNullable<RecordSchema['csvFlat']> = { column: 'findings', columns: FINDINGS_CSV_COLUMNS, read: findingsCsvCell };
