import type { AsnResult } from '../../engine/asn/lookup-asn.js';
import type { IpInfoRecord } from '../../engine/ip/ip-record.js';
import type { RecordSchema } from '../record-schema.js';
import { getPath } from '../record-schema.js';
import { IP_SCHEMA } from './ip-schema.js';

/**
 * A bulk record in the shape the bulk columns read: an IP record keeps its
 * own objects (so encoders can cache per shared location/network object);
 * an AS-number line puts its facts in the network columns and `route`.
 */
function asBulkRow(record: unknown): Record<string, unknown> {
  const asn = record as Partial<AsnResult>;
  if (asn.kind !== 'asn') {
    // Spelled out rather than spread: this runs once per row of a bulk run.
    const ip = record as IpInfoRecord;
    return {
      kind: 'ip',
      ip: ip.ip,
      type: ip.type,
      location: ip.location,
      network: ip.network,
      security: ip.security,
      reserved: ip.reserved,
      route: null,
    };
  }
  return {
    kind: 'asn',
    network: { isp: asn.organization ?? null, organization: asn.organization ?? null, asn: asn.asn ?? null },
    route: asn.route ?? null,
  };
}

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
  adapt: asBulkRow,
  // Loaded with the CSV encoder, which other formats never load.
  csvRecordWriter: async (columns) => (await import('./bulk-csv-writer.js')).createBulkCsvWriter(columns, asBulkRow),
  readColumn: (record, column) => {
    const value = getPath(asBulkRow(record), column);
    return value === undefined ? null : value;
  },
};
