import type { Finding } from '../../engine/findings.js';
import type { BimiLogo } from '../../engine/mail/check-bimi.js';
import { presentFindings } from '../findings-table.js';
import type { RecordSchema } from '../record-schema.js';
import { getPath } from '../record-schema.js';
import { FINDINGS_CSV } from '../findings-columns.js';

/** The logo fetch in one line: size, type, redirects. */
export function presentBimiLogo(logo: BimiLogo): string {
  if (logo.error) return `${logo.url}: ${logo.error.code}: ${logo.error.message}`;
  const size = logo.truncated ? `over ${logo.octets} octets` : `${logo.octets} octets${logo.compressed ? ' (gzip)' : ''}`;
  const via = logo.redirects.length > 0 ? `, via ${logo.redirects.join(' -> ')}` : '';
  return `${logo.url} (${size}, ${logo.content_type ?? 'no Content-Type'}${via})`;
}

const BIMI_GROUPS = {
  tags: ['tags.v', 'tags.l', 'tags.a', 'tags.lps', 'tags.avp'],
  dmarc: ['dmarc.met', 'dmarc.location', 'dmarc.policy', 'dmarc.percent', 'dmarc.organisational_policy', 'dmarc.subdomain_policy', 'dmarc.error'],
  logo: [
    'logo.url',
    'logo.final_url',
    'logo.redirects',
    'logo.content_type',
    'logo.octets',
    'logo.truncated',
    'logo.compressed',
    'logo.svg.root',
    'logo.svg.base_profile',
    'logo.svg.version',
    'logo.svg.title',
    'logo.svg.view_box',
    'logo.error',
  ],
  certificate: [
    'certificate.url',
    'certificate.octets',
    'certificate.certificate.certificates',
    'certificate.certificate.subject',
    'certificate.certificate.issuer',
    'certificate.certificate.valid_from',
    'certificate.certificate.valid_to',
    'certificate.certificate.logotype',
    'certificate.error',
  ],
} as const;

/**
 * Columns of the BIMI record (`netintel bimi`). In table and CSV views the
 * findings are grouped by severity; json, ndjson and xml keep the record.
 */
export const BIMI_SCHEMA: RecordSchema = {
  kind: 'bimi',
  columns: [
    'domain',
    'domain_unicode',
    'selector',
    'status',
    'organisational_domain',
    'location',
    'inherited',
    'record',
    'records',
    ...BIMI_GROUPS.tags,
    ...BIMI_GROUPS.dmarc,
    ...BIMI_GROUPS.logo,
    ...BIMI_GROUPS.certificate,
    'findings',
  ],
  groups: BIMI_GROUPS,
  identity: ['domain'],
  tableColumns: ['selector', 'status', 'dmarc.met', 'logo.url', 'findings'],
  csvFlat: FINDINGS_CSV,
  presentColumn: (record, column) => {
    const value = getPath(record, column);
    if (value === null || value === undefined) return value;
    switch (column) {
      case 'records':
        return (value as string[]).map((text) => JSON.stringify(text)).join('\n');
      case 'logo.redirects':
        return (value as string[]).join(' ');
      case 'dmarc.error':
      case 'logo.error':
      case 'certificate.error': {
        const error = value as { code: string; message: string };
        return `${error.code}: ${error.message}`;
      }
      case 'findings':
        return presentFindings(value as Finding[]);
      default:
        return value;
    }
  },
};
