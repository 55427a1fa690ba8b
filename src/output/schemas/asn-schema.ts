import type { RecordSchema } from '../record-schema.js';

/** Columns of the ASN record (`netintel asn`, GET /api/asn-lookup). */
export const ASN_SCHEMA: RecordSchema = {
  kind: 'asn',
  mainValue: ['organization'],
  columns: [
    'asn',
    'organization',
    'ip',
    'route',
    'rpki.status',
    'rpki.reason',
    'counts.ipv4_prefixes',
    'counts.ipv6_prefixes',
    'counts.ipv4_addresses',
    'counts.ipv6_addresses',
    'prefixes.ipv4',
    'prefixes.ipv6',
  ],
  groups: {
    rpki: ['rpki.status', 'rpki.reason'],
    counts: ['counts.ipv4_prefixes', 'counts.ipv6_prefixes', 'counts.ipv4_addresses', 'counts.ipv6_addresses'],
    prefixes: ['prefixes.ipv4', 'prefixes.ipv6'],
  },
  identity: ['asn'],
  tableColumns: ['asn', 'organization', 'ip', 'route', 'counts.ipv4_prefixes', 'counts.ipv6_prefixes'],
  credit: 'ASN data: RouteViews, NRO and DB-IP (https://db-ip.com), CC BY 4.0',
};
