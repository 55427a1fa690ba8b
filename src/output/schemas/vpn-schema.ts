import type { RecordSchema } from '../record-schema.js';
import { getPath } from '../record-schema.js';

interface EvidenceItem {
  signal: string;
  source: string;
  matched: string;
  provider: string | null;
  updated: string | null;
}

/** One evidence item as a line: `tor_exit_list tor-exit 185.220.101.1 (2026-11-22T09:00:00Z)`, the operator in brackets. */
export function presentEvidence(item: EvidenceItem): string {
  const provider = item.provider === null ? '' : ` [${item.provider}]`;
  const updated = item.updated === null ? '' : ` (${item.updated})`;
  return `${item.signal} ${item.source} ${item.matched}${provider}${updated}`;
}

/**
 * Columns of the VPN record (`netintel vpn`, GET /api/vpn-check). In table
 * and CSV views `evidence` is one line per signal (presentEvidence) and
 * `coverage.missing` the missing signals space-separated; json, ndjson and
 * xml keep the typed lists.
 */
export const VPN_SCHEMA: RecordSchema = {
  kind: 'vpn',
  mainValue: ['threat_level'],
  columns: ['ip', 'is_vpn', 'is_proxy', 'is_tor', 'is_hosting', 'threat_level', 'threat_rule', 'provider', 'evidence', 'coverage.missing', 'reserved'],
  groups: { flags: ['is_vpn', 'is_proxy', 'is_tor', 'is_hosting'] },
  identity: ['ip'],
  tableColumns: ['ip', 'threat_level', 'threat_rule', 'is_vpn', 'is_proxy', 'is_tor', 'is_hosting', 'provider', 'reserved'],
  credit: 'Signals: netintel curated ASN list, the feeds installed by netintel data update (sources and licences: netintel data status); ASN data: RouteViews, NRO and DB-IP (CC BY 4.0)',
  presentColumn: (record, column) => {
    const value = getPath(record, column);
    // The signals no installed feed gives, space-separated: an empty cell means full coverage.
    if (column === 'coverage.missing' && Array.isArray(value)) return value.join(' ');
    if (column !== 'evidence' || !Array.isArray(value)) return value === undefined ? null : value;
    return value.length === 0 ? '' : (value as EvidenceItem[]).map(presentEvidence).join('\n');
  },
};
