import type { MxHost } from '../../engine/mail/resolve-mx.js';
import type { Finding } from '../../engine/findings.js';
import { presentFindings } from '../findings-table.js';
import type { RecordSchema } from '../record-schema.js';
import { getPath } from '../record-schema.js';
import { FINDINGS_CSV } from '../findings-columns.js';

/** One MX host per line: preference, exchange, then each address with its PTR and FCrDNS mark. */
export function presentMxHosts(hosts: readonly MxHost[]): string {
  if (hosts.length === 0) return 'none';
  return hosts
    .map((host) => {
      const head = `${host.preference} ${host.exchange === '.' ? '. (null MX)' : host.exchange}${host.cname ? ` (CNAME ${host.cname})` : ''}`;
      if (host.exchange === '.') return head;
      if (host.error && host.addresses.length === 0) return `${head} -> lookup failed: ${host.error.code}`;
      if (host.ip_literal) return `${head} -> IP literal`;
      if (host.addresses.length === 0) return `${head} -> no address`;
      const addresses = host.addresses.map((item) => {
        const ptr = item.ptr === null ? 'PTR ?' : item.ptr.length === 0 ? 'no PTR' : `PTR ${item.ptr.join(',')}`;
        const fcrdns = item.fcrdns === true ? ' FCrDNS ok' : item.fcrdns === false && item.ptr?.length ? ' FCrDNS mismatch' : '';
        return `${item.address} (${ptr}${fcrdns}${item.reserved ? `; ${item.reserved}` : ''})`;
      });
      return `${head} -> ${addresses.join(', ')}${host.error ? `; others: lookup failed: ${host.error.code}` : ''}`;
    })
    .join('\n');
}

/**
 * Columns of the MX record (`netintel mx`, GET /api/email-tests?type=mx).
 * In table and CSV views the hosts are one line each and the findings are
 * grouped by severity; json, ndjson and xml keep the typed record.
 */
export const MX_SCHEMA: RecordSchema = {
  kind: 'mx',
  mainValue: ['status'],
  columns: ['domain', 'domain_unicode', 'status', 'records', 'implicit_addresses', 'ttl_seconds', 'findings', 'resolver'],
  groups: {},
  identity: ['domain'],
  tableColumns: ['status', 'records', 'findings'],
  csvFlat: FINDINGS_CSV,
  presentColumn: (record, column) => {
    const value = getPath(record, column);
    if (value === null || value === undefined) return value;
    switch (column) {
      case 'records':
        return presentMxHosts(value as MxHost[]);
      case 'implicit_addresses':
        return (value as string[]).join(' ');
      case 'findings':
        return presentFindings(value as Finding[]);
      default:
        return value;
    }
  },
};
