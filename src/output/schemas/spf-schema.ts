import type { SpfNode } from '../../engine/mail/check-spf.js';
import type { SpfMatch } from '../../engine/mail/spf-evaluate.js';
import type { SpfTerm } from '../../engine/mail/spf-record.js';
import type { Finding } from '../../engine/findings.js';
import { presentFindings } from '../findings-table.js';
import type { RecordSchema } from '../record-schema.js';
import { getPath } from '../record-schema.js';
import { FINDINGS_CSV } from '../findings-columns.js';

/** The include tree, one record per line, indented by depth, with its own and total lookups. */
export function presentSpfTree(node: SpfNode, depth = 0): string {
  const lookups = node.children.length > 0 ? `${node.lookups} lookups, ${node.total_lookups} with those below` : `${node.lookups} lookups`;
  const status = node.status === 'ok' ? '' : ` [${node.status}${node.error ? `: ${node.error.message}` : ''}]`;
  const voids = node.void_lookups > 0 ? `, ${node.void_lookups} void` : '';
  const via = node.via ? `${node.via} -> ` : '';
  const line = `${'  '.repeat(depth)}${via}${node.domain} (${lookups}${voids})${status}`;
  return [line, ...node.children.map((child) => presentSpfTree(child, depth + 1))].join('\n');
}

/** The matched mechanism with its path: `example.com: include:_spf.example.com > _spf.example.com: ip4:192.0.2.0/24`. */
export function presentSpfMatch(match: SpfMatch): string {
  return match.path.map((step) => `${step.domain}: ${step.term}`).join(' > ');
}

/**
 * Columns of the SPF record (`netintel spf`, GET /api/email-tests?type=spf).
 * In table and CSV views the terms, the include tree and the findings
 * (grouped by severity) are text; json, ndjson and xml keep the record.
 */
export const SPF_SCHEMA: RecordSchema = {
  kind: 'spf',
  mainValue: ['status'],
  columns: [
    'domain',
    'domain_unicode',
    'status',
    'record',
    'record_strings',
    'records',
    'record_octets',
    'terms',
    'lookups',
    'lookup_limit',
    'void_lookups',
    'void_lookup_limit',
    'tree',
    'evaluation.ip',
    'evaluation.sender',
    'evaluation.helo',
    'evaluation.domain',
    'evaluation.result',
    'evaluation.matched',
    'evaluation.explanation',
    'evaluation.reason',
    'evaluation.lookups',
    'evaluation.void_lookups',
    'findings',
    'resolver',
  ],
  groups: {
    evaluation: [
      'evaluation.ip',
      'evaluation.sender',
      'evaluation.helo',
      'evaluation.domain',
      'evaluation.result',
      'evaluation.matched',
      'evaluation.explanation',
      'evaluation.reason',
      'evaluation.lookups',
      'evaluation.void_lookups',
    ],
  },
  identity: ['domain'],
  tableColumns: ['status', 'lookups', 'void_lookups', 'evaluation.result', 'findings'],
  csvFlat: FINDINGS_CSV,
  presentColumn: (record, column) => {
    const value = getPath(record, column);
    if (value === null || value === undefined) return value;
    switch (column) {
      case 'record_strings':
      case 'records':
        return (value as string[]).map((text) => JSON.stringify(text)).join('\n');
      case 'terms':
        return (value as SpfTerm[]).map((term) => `${term.position}: ${term.text}${term.counts_lookup ? ' (lookup)' : ''}`).join('\n');
      case 'tree':
        return presentSpfTree(value as SpfNode);
      case 'evaluation.matched':
        return presentSpfMatch(value as SpfMatch);
      case 'findings':
        return presentFindings(value as Finding[]);
      default:
        return value;
    }
  },
};
