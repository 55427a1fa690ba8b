import type { DkimSelectorResult } from '../../engine/mail/check-dkim.js';
import type { DkimSignatureCheck } from '../../engine/mail/dkim-message.js';
import type { Finding } from '../../engine/findings.js';
import { presentFindings } from '../findings-table.js';
import { FINDINGS_CSV } from '../findings-columns.js';
import type { RecordSchema } from '../record-schema.js';
import { getPath } from '../record-schema.js';

/** One selector on one line: `google: RSA 2048 bits (CNAME -> x)`, `k1: not found`, `s1: revoked`. */
export function presentDkimSelector(selector: DkimSelectorResult): string {
  const via = selector.cname ? ` (CNAME -> ${selector.cname})` : '';
  if (selector.error) return `${selector.selector}: lookup failed, ${selector.error.code}: ${selector.error.message}`;
  if (!selector.found) return `${selector.selector}: not found${via}`;
  const parts: string[] = [];
  if (selector.key) parts.push(`${selector.key.type === 'rsa' ? 'RSA' : 'Ed25519'} ${selector.key.bits} bits`);
  else if (selector.record?.public_key === '') parts.push('revoked');
  else parts.push('no usable key');
  if (selector.record?.testing) parts.push('testing');
  return `${selector.selector}: ${parts.join(', ')}${via}`;
}

/** The selectors that were found (or failed, or were asked for by name), one per line. */
export function presentDkimSelectors(selectors: readonly DkimSelectorResult[], probed: 'given' | 'common'): string {
  const shown = probed === 'given' ? selectors : selectors.filter((item) => item.found || item.error || item.cname);
  return shown.length > 0 ? shown.map(presentDkimSelector).join('\n') : `none of ${selectors.length} common selectors`;
}

/** One signature on one line: `pass d=example.com s=google rsa-sha256`, with the reason when it did not pass. */
export function presentDkimSignature(signature: DkimSignatureCheck): string {
  const reason = signature.reason ? ` (${signature.reason})` : '';
  return `${signature.result} d=${signature.domain ?? '?'} s=${signature.selector ?? '?'} ${signature.algorithm ?? '?'}${reason}`;
}

/**
 * Columns of the DKIM key check (`netintel dkim`). In table and CSV views
 * the selectors and findings are text; json, ndjson and xml keep the record.
 */
export const DKIM_SCHEMA: RecordSchema = {
  kind: 'dkim',
  columns: ['domain', 'domain_unicode', 'status', 'probed', 'selectors', 'findings', 'resolver'],
  groups: {},
  identity: ['domain'],
  tableColumns: ['status', 'selectors', 'findings'],
  csvFlat: FINDINGS_CSV,
  presentColumn: (record, column) => {
    const value = getPath(record, column);
    if (value === null || value === undefined) return value;
    switch (column) {
      case 'selectors':
        return presentDkimSelectors(value as DkimSelectorResult[], getPath(record, 'probed') as 'given' | 'common');
      case 'findings':
        return presentFindings(value as Finding[]);
      default:
        return value;
    }
  },
};

/** Columns of the DKIM verification of a saved message (`netintel dkim --message FILE`). */
export const DKIM_MESSAGE_SCHEMA: RecordSchema = {
  kind: 'dkim-message',
  columns: ['source', 'from', 'status', 'signatures', 'checked', 'failure.code', 'failure.reason', 'failure.message', 'findings'],
  groups: {},
  identity: ['source'],
  tableColumns: ['status', 'signatures', 'findings'],
  csvFlat: FINDINGS_CSV,
  presentColumn: (record, column) => {
    const value = getPath(record, column);
    if (value === null || value === undefined) return value;
    switch (column) {
      case 'from':
        return (value as string[]).join(', ');
      case 'signatures':
        return (value as DkimSignatureCheck[]).map(presentDkimSignature).join('\n');
      case 'findings':
        return presentFindings(value as Finding[]);
      default:
        return value;
    }
  },
};
