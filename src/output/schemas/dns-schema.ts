import { presentDnsAnswer } from '../dns-presentation.js';
import type { RecordSchema } from '../record-schema.js';
import { getPath } from '../record-schema.js';

/**
 * Columns of the DNS record (`netintel dns`, GET /api/dns-lookup). In CSV and
 * table views `answers` is the answer section in zone-file form, one record
 * per line; json, ndjson and xml keep the typed records, with `--fields` too.
 */
export const DNS_SCHEMA: RecordSchema = {
  kind: 'dns',
  columns: ['target', 'domain', 'domainUnicode', 'type', 'status', 'rcode', 'answers', 'resolver', 'transport', 'latencyMs'],
  groups: {},
  identity: ['domain', 'type'],
  tableColumns: ['domain', 'type', 'status', 'answers', 'resolver', 'latencyMs'],
  presentColumn: (record, column) => {
    if (column === 'answers') {
      const answers = (record as { answers?: Array<{ name: string; ttlSeconds: number; type: string; data: unknown }> | null } | null)?.answers;
      if (answers === undefined || answers === null) return null;
      let text = '';
      for (let i = 0; i < answers.length; i++) text += i === 0 ? presentDnsAnswer(answers[i]!) : `\n${presentDnsAnswer(answers[i]!)}`;
      return text;
    }
    // The columns are top-level keys: read them without splitting the path
    // for every cell of a bulk run.
    if (record !== null && typeof record === 'object' && !column.includes('.')) return (record as Record<string, unknown>)[column];
    return getPath(record, column);
  },
};
