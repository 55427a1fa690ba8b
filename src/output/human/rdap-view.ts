import type { RdapResult } from '../../engine/rdap/rdap-record.js';
import { factList, findingCounts, findingsBlock, headline, sections, type Fact } from './blocks.js';
import { plural, type HumanView } from './view.js';

/** A value, or `(redacted)` when the registry withheld it, or null (the fact is left out). */
function orRedacted(record: RdapResult, value: string | null, field: string): string | null {
  return value ?? (record.redacted.includes(field) ? '(redacted)' : null);
}

function day(date: string | null): string | null {
  return date === null ? null : date.slice(0, 10);
}

function expiry(record: RdapResult): string | null {
  if (record.expires === null) return null;
  const days = record.days_until_expiry;
  if (days === null) return day(record.expires);
  if (days < 0) return `${day(record.expires)} (expired ${plural(-days, 'day')} ago)`;
  return `${day(record.expires)} (in ${plural(days, 'day')})`;
}

function range(record: RdapResult): string | null {
  if (record.start_address !== null && record.end_address !== null) {
    const blocks = record.cidrs.length > 0 ? ` (${record.cidrs.join(', ')})` : '';
    return `${record.start_address} - ${record.end_address}${blocks}`;
  }
  if (record.start_autnum !== null && record.end_autnum !== null) {
    return record.start_autnum === record.end_autnum ? `AS${record.start_autnum}` : `AS${record.start_autnum} - AS${record.end_autnum}`;
  }
  return null;
}

function abuseFacts(record: RdapResult): Fact[] {
  const { abuse } = record;
  return [
    ['abuse e-mail', orRedacted(record, abuse.email, 'abuse.email') ?? (abuse.phone === null ? 'none given' : null)],
    ['abuse phone', orRedacted(record, abuse.phone, 'abuse.phone')],
    ['abuse contact', abuse.name],
  ];
}

function rdapFacts(record: RdapResult): Fact[] {
  const registrar = record.registrar.name === null ? null : `${record.registrar.name}${record.registrar.iana_id === null ? '' : ` (IANA ID ${record.registrar.iana_id})`}`;
  return [
    ['handle', record.handle],
    ['name', record.name],
    ['range', range(record)],
    ['type', record.network_type],
    ['organisation', orRedacted(record, record.organisation, 'organisation')],
    ['country', record.country],
    ...abuseFacts(record),
    ['registrar', registrar],
    ['status', record.status.length > 0 ? record.status.join(', ') : null],
    ['name servers', record.nameservers.length > 0 ? record.nameservers.join(' ') : null],
    ['DNSSEC', record.delegation_signed === null ? null : record.delegation_signed ? 'delegation signed' : 'delegation not signed'],
    ['registered', day(record.registered)],
    ['last changed', day(record.last_changed)],
    ['expires', expiry(record)],
    ['redacted', record.redacted.length > 0 ? record.redacted.join(', ') : null],
    ['source', record.sources.map((source) => `${source.url}${source.cached ? ' (cached)' : ''}`).join('\n')],
  ];
}

/** `netintel rdap`: one target as its registration, many as a table of holders and abuse contacts. */
export const RDAP_VIEW: HumanView = {
  block: (ctx, value) => {
    const record = value as RdapResult;
    const counts = findingCounts(record.findings);
    return sections(headline(ctx, `${record.target} RDAP`, counts.text, counts.tone, ': '), factList(ctx, rdapFacts(record)), findingsBlock(ctx, record.findings));
  },
  table: {
    columns: [
      { header: 'target', priority: 0, wrap: true },
      { header: 'holder', priority: 1, wrap: true },
      { header: 'abuse', priority: 0, wrap: true },
      { header: 'expires', priority: 2 },
    ],
    cells: (value) => {
      const record = value as RdapResult;
      const abuse = record.abuse.email ?? record.abuse.phone ?? (record.redacted.some((name) => name.startsWith('abuse.')) ? '(redacted)' : '');
      return [record.target, record.organisation ?? record.registrar.name ?? record.name ?? '', abuse, day(record.expires) ?? ''];
    },
    key: (value) => (value as RdapResult).target,
  },
};
