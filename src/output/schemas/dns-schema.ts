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
  mainValue: ['answers'],
  columns: ['target', 'domain', 'domain_unicode', 'type', 'status', 'rcode', 'answers', 'resolver', 'transport', 'latency_ms'],
  groups: {},
  identity: ['domain', 'type'],
  tableColumns: ['domain', 'type', 'status', 'answers', 'resolver', 'latency_ms'],
  presentColumn: (record, column) => {
    if (record === null || typeof record !== 'object') return column === 'answers' ? null : getPath(record, column);
    const dns = record as Partial<Record<string, unknown>> & { answers?: unknown };
    // A bulk run presents ten cells per row: read the known columns by name
    // rather than through getPath, which splits the path for every cell.
    switch (column) {
      case 'answers':
        return presentAnswers(dns.answers);
      case 'target':
        return dns.target;
      case 'domain':
        return dns.domain;
      case 'domain_unicode':
        return dns.domain_unicode;
      case 'type':
        return dns.type;
      case 'status':
        return dns.status;
      case 'rcode':
        return dns.rcode;
      case 'resolver':
        return dns.resolver;
      case 'transport':
        return dns.transport;
      case 'latency_ms':
        return dns.latency_ms;
      default:
        return getPath(record, column);
    }
  },
};

/** The answer section in zone-file form, one record per line; null when the record has none. */
function presentAnswers(answers: unknown): string | null {
  if (!Array.isArray(answers)) return null;
  let text = '';
  for (let i = 0; i < answers.length; i++) {
    const line = presentDnsAnswer(answers[i] as { name: string; ttl_seconds: number; type: string; data: unknown });
    text += i === 0 ? line : `\n${line}`;
  }
  return text;
}
