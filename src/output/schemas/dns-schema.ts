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
    if (column !== 'answers') return getPath(record, column);
    const answers = getPath(record, 'answers') as Array<{ name: string; ttlSeconds: number; type: string; data: unknown }> | undefined;
    return answers?.map(presentDnsAnswer).join('\n') ?? null;
  },
};
