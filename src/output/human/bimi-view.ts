import type { BimiResult } from '../../engine/mail/check-bimi.js';
import { presentBimiLogo } from '../schemas/bimi-schema.js';
import { factList, findingCounts, findingsBlock, headline, sections, type Fact } from './blocks.js';
import type { HumanView } from './view.js';

const STATUS: Readonly<Record<BimiResult['status'], string>> = {
  pass: 'pass: a valid record, DMARC enforced, the logo meets the basics checked',
  fail: 'fail: receivers will not show the logo (see the errors)',
  unknown: 'unknown: a part could not be checked for want of DNS (see "not checked")',
  declined: 'declined: the record explicitly declines BIMI',
  none: 'none: no BIMI record',
};

function domainName(record: BimiResult): string {
  return record.domain_unicode === record.domain ? record.domain : `${record.domain_unicode} (${record.domain})`;
}

function dmarcFact(bimi: BimiResult): string | null {
  const { dmarc } = bimi;
  if (dmarc.error) return `not checked: ${dmarc.error.code}`;
  if (dmarc.location === null) return 'no DMARC record: not met';
  const percent = dmarc.percent !== null && dmarc.percent !== 100 ? `, pct=${dmarc.percent}` : '';
  const subdomains = dmarc.subdomain_policy === null ? '' : `, sp=${dmarc.subdomain_policy}`;
  return `${dmarc.met ? 'met' : 'not met'} (${dmarc.policy ?? 'no valid policy'}${percent}${subdomains} at ${dmarc.location})`;
}

function bimiFacts(bimi: BimiResult): Fact[] {
  const svg = bimi.logo?.svg ?? null;
  const mark = bimi.certificate?.certificate ?? null;
  return [
    ['status', STATUS[bimi.status]],
    ['selector', bimi.selector],
    ['record', bimi.record ?? (bimi.records.length > 1 ? bimi.records.map((text) => JSON.stringify(text)).join('\n') : null)],
    ['found at', bimi.location === null ? null : `${bimi.location}${bimi.inherited ? ' (organisational domain)' : ''}`],
    ['DMARC', dmarcFact(bimi)],
    ['logo', bimi.logo ? presentBimiLogo(bimi.logo) : null],
    ['title', svg?.title ?? null],
    ['profile', svg ? `base_profile ${svg.base_profile ?? '(none)'}, version ${svg.version ?? '(none)'}, view box ${svg.view_box ?? '(none)'}` : null],
    ['certificate', bimi.certificate ? (bimi.certificate.error ? `${bimi.certificate.url}: ${bimi.certificate.error.code}` : bimi.certificate.url) : null],
    ['subject', mark?.subject ?? null],
    ['issuer', mark?.issuer ?? null],
    ['valid', mark ? `${mark.valid_from.slice(0, 10)} to ${mark.valid_to.slice(0, 10)}${mark.logotype ? ', logotype extension' : ''} (chain not validated)` : null],
  ];
}

export const BIMI_VIEW: HumanView = {
  block: (ctx, value) => {
    const bimi = value as BimiResult;
    const counts = findingCounts(bimi.findings);
    return sections(headline(ctx, `${domainName(bimi)} BIMI`, counts.text, counts.tone, ': '), factList(ctx, bimiFacts(bimi)), findingsBlock(ctx, bimi.findings));
  },
  table: {
    columns: [
      { header: 'domain', priority: 0, wrap: true },
      { header: 'status', priority: 0 },
      { header: 'DMARC', priority: 1 },
      { header: 'errors', priority: 1 },
      { header: 'warnings', priority: 2 },
      { header: 'notes', priority: 3 },
    ],
    cells: (value) => {
      const bimi = value as BimiResult;
      const count = (severity: string) => String(bimi.findings.filter((item) => item.severity === severity).length);
      const dmarc = bimi.dmarc.met === null ? '?' : bimi.dmarc.met ? 'met' : 'not met';
      return [domainName(bimi), bimi.status, dmarc, count('error'), count('warning'), count('info')];
    },
    key: (value) => (value as BimiResult).domain,
  },
};
