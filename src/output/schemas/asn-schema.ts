import type { RecordSchema } from '../record-schema.js';

/** Columns of the ASN record (`netintel asn`, GET /api/asn-lookup). */
export const ASN_SCHEMA: RecordSchema = {
  kind: 'asn',
  columns: [
    'asn',
    'organization',
    'ip',
    'route',
    'counts.ipv4Prefixes',
    'counts.ipv6Prefixes',
    'counts.ipv4Addresses',
    'counts.ipv6Addresses',
    'prefixes.ipv4',
    'prefixes.ipv6',
  ],
  groups: {
    counts: ['counts.ipv4Prefixes', 'counts.ipv6Prefixes', 'counts.ipv4Addresses', 'counts.ipv6Addresses'],
    prefixes: ['prefixes.ipv4', 'prefixes.ipv6'],
  },
  identity: ['asn'],
  tableColumns: ['asn', 'organization', 'ip', 'route', 'counts.ipv4Prefixes', 'counts.ipv6Prefixes'],
  credit: 'ASN data: RouteViews, NRO and DB-IP (https://db-ip.com), CC BY 4.0',
};
