import type { RecordSchema } from '../record-schema.js';
import { getPath } from '../record-schema.js';
import { IP_SCHEMA } from './ip-schema.js';

/** Where an ASN line's facts go among the IP record's columns. */
const ASN_COLUMNS: Readonly<Record<string, string>> = {
  'network.asn': 'asn',
  'network.organization': 'organization',
  'network.isp': 'organization',
  route: 'route',
};

/**
 * Columns of `netintel bulk` rows: the IP record's, plus `kind` (ip or asn)
 * and `route`. An AS-number line fills the network columns; json, ndjson and
 * xml print each record whole, in its own shape.
 */
export const BULK_SCHEMA: RecordSchema = {
  ...IP_SCHEMA,
  kind: 'bulk',
  columns: ['kind', ...IP_SCHEMA.columns, 'route'],
  identity: ['kind', ...IP_SCHEMA.identity],
  tableColumns: ['kind', ...IP_SCHEMA.tableColumns],
  readColumn: (record, column) => {
    const kind = (record as { kind?: string }).kind === 'asn' ? 'asn' : 'ip';
    if (column === 'kind') return kind;
    if (kind === 'ip') return column === 'route' ? null : getPath(record, column);
    const source = ASN_COLUMNS[column];
    return source === undefined ? null : getPath(record, source);
  },
};
