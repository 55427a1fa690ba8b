import type { RecordSchema } from '../record-schema.js';
import { getPath } from '../record-schema.js';
import { FINDINGS_CSV } from '../findings-columns.js';

interface ZoneRow {
  zone: string;
  subject: string;
  mx_hosts: string[];
  status: string;
  return_codes: Array<{ address: string; meaning: string | null }>;
  reason: string | null;
  detail: string | null;
  latency_ms: number;
}

interface MxHost {
  exchange: string;
  preference: number | null;
  status: string;
  addresses: string[];
  error: { code: string; message: string } | null;
}

/** One zone row as a line: `zen.spamhaus.org 192.0.2.1 (mx1.example.com) listed 127.0.0.2 SBL "reason" 12.3 ms`. */
export function presentZoneRow(row: ZoneRow): string {
  const parts = [row.zone, row.mx_hosts.length > 0 ? `${row.subject} (MX ${row.mx_hosts.join(', ')})` : row.subject, row.status];
  if (row.return_codes.length > 0) {
    parts.push(row.return_codes.map((code) => (code.meaning ? `${code.address} ${code.meaning}` : code.address)).join(', '));
  }
  if (row.reason) parts.push(JSON.stringify(row.reason));
  if (row.detail && row.status !== 'listed' && row.status !== 'clean') parts.push(`(${row.detail})`);
  parts.push(`${row.latency_ms} ms`);
  return parts.join(' ');
}

function presentMx(mx: { status: string; hosts: MxHost[]; error: { code: string; message: string } | null } | null): string | null {
  if (mx === null) return null;
  if (mx.hosts.length === 0) return mx.error ? `${mx.status}: ${mx.error.message}` : mx.status;
  return mx.hosts
    .map((host) => {
      const head = `${host.preference ?? 'implicit'} ${host.exchange}`;
      const tail = host.status === 'resolved' ? host.addresses.join(' ') : (host.error?.message ?? host.status);
      return `${head} ${tail}`;
    })
    .join('\n');
}

/**
 * Columns of the blacklist record (`netintel blacklist`, GET
 * /api/blacklist-check). In CSV and table views the zone rows, mail hosts,
 * skipped zones and findings are one line each; json, ndjson and xml keep
 * the typed records, with `--fields` too.
 */
export const BLACKLIST_SCHEMA: RecordSchema = {
  kind: 'blacklist',
  mainValue: ['verdict.status'],
  columns: [
    'target',
    'target_type',
    'verdict.status',
    'verdict.listed_zones',
    'verdict.listings',
    'verdict.checked_zones',
    'verdict.unchecked_zones',
    'verdict.zones',
    'verdict.message',
    'verdict.failure.code',
    'verdict.failure.reason',
    'zones',
    'skipped',
    'mx',
    'findings',
    'resolvers',
    'registry_version',
    'checked_at',
    'latency_ms',
  ],
  groups: {
    verdict: [
      'verdict.status',
      'verdict.listed_zones',
      'verdict.listings',
      'verdict.checked_zones',
      'verdict.unchecked_zones',
      'verdict.zones',
      'verdict.message',
      'verdict.failure.code',
      'verdict.failure.reason',
    ],
  },
  identity: ['target'],
  tableColumns: ['verdict.status', 'verdict.listed_zones', 'verdict.unchecked_zones', 'verdict.zones', 'verdict.message'],
  csvFlat: FINDINGS_CSV,
  presentColumn: (record, column) => {
    const value = getPath(record, column);
    if (value === null || value === undefined) return value;
    switch (column) {
      case 'zones':
        return (value as ZoneRow[]).map(presentZoneRow).join('\n');
      case 'skipped':
        return (value as Array<{ zone: string; subject: string | null; detail: string }>)
          .map((item) => `${item.zone}${item.subject ? ` ${item.subject}` : ''}: ${item.detail}`)
          .join('\n');
      case 'mx':
        return presentMx(value as { status: string; hosts: MxHost[]; error: { code: string; message: string } | null });
      case 'findings':
        return (value as Array<{ id: string; severity: string; message: string }>).map((item) => `${item.severity} ${item.id}: ${item.message}`).join('\n');
      case 'resolvers':
        return (value as string[]).join(' ');
      default:
        return value;
    }
  },
};

/** Columns of a zone registry entry (`netintel blacklist --list-zones`). */
export const BLACKLIST_ZONE_SCHEMA: RecordSchema = {
  kind: 'dnsbl-zone',
  mainValue: ['status'],
  columns: [
    'zone',
    'name',
    'kind',
    'ipv6',
    'status',
    'dead_since',
    'default',
    'refuses_public_resolvers',
    'listing_severity',
    'codes',
    'bitmask',
    'refusal_codes',
    'canaries.listed',
    'canaries.not_listed',
    'usage',
    'info_url',
    'delist_url',
    'registered',
  ],
  groups: {},
  identity: ['zone'],
  tableColumns: ['zone', 'kind', 'ipv6', 'status', 'dead_since', 'default', 'refuses_public_resolvers'],
};
