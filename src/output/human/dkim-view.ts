import type { Finding } from '../../engine/findings.js';
import type { DkimResult, DkimStatus } from '../../engine/mail/check-dkim.js';
import type { DkimMessageResult } from '../../engine/mail/dkim-message.js';
import { presentDkimSelectors, presentDkimSignature } from '../schemas/dkim-schema.js';
import { factList, findingCounts, findingsBlock, headline, sections, type Fact } from './blocks.js';
import type { ViewContext } from './style.js';
import type { HumanView } from './view.js';

const STATUS_TEXT: Readonly<Record<DkimStatus, string>> = {
  valid: 'valid: at least one usable key',
  invalid: 'invalid: keys are published but none is usable',
  none: 'no key found at the selectors asked',
  temperror: 'temperror: a lookup failed and no usable key was found',
};

function domainName(record: DkimResult): string {
  return record.domain_unicode === record.domain ? record.domain : `${record.domain_unicode} (${record.domain})`;
}

function block(ctx: ViewContext, subject: string, facts: readonly Fact[], findings: readonly Finding[]): string {
  const counts = findingCounts(findings);
  return sections(headline(ctx, subject, counts.text, counts.tone, ': '), factList(ctx, facts), findingsBlock(ctx, findings));
}

function count(findings: readonly Finding[], severity: Finding['severity']): string {
  return String(findings.filter((item) => item.severity === severity).length);
}

const COUNT_COLUMNS = [
  { header: 'errors', priority: 1 },
  { header: 'warnings', priority: 2 },
  { header: 'notes', priority: 3 },
] as const;

/** `netintel dkim`: status first, the selectors found (or asked for), then findings by severity. */
export const DKIM_VIEW: HumanView = {
  block: (ctx, value) => {
    const dkim = value as DkimResult;
    const found = dkim.selectors.filter((item) => item.found).length;
    const facts: Fact[] = [
      ['status', STATUS_TEXT[dkim.status]],
      ['probed', dkim.probed === 'common' ? `${dkim.selectors.length} common selectors, ${found} found` : null],
      ['selectors', presentDkimSelectors(dkim.selectors, dkim.probed)],
    ];
    return block(ctx, `${domainName(dkim)} DKIM`, facts, dkim.findings);
  },
  table: {
    columns: [{ header: 'domain', priority: 0, wrap: true }, { header: 'status', priority: 0 }, { header: 'keys', priority: 0, wrap: true }, ...COUNT_COLUMNS],
    cells: (value) => {
      const dkim = value as DkimResult;
      const keys = dkim.selectors.filter((item) => item.found).map((item) => item.selector);
      return [domainName(dkim), dkim.status, keys.length > 0 ? keys.join(', ') : '-', count(dkim.findings, 'error'), count(dkim.findings, 'warning'), count(dkim.findings, 'info')];
    },
    key: (value) => (value as DkimResult).domain,
  },
};

/** `netintel dkim --message FILE`: the message's verdict, each signature's result and why, then findings. */
export const DKIM_MESSAGE_VIEW: HumanView = {
  block: (ctx, value) => {
    const message = value as DkimMessageResult;
    const facts: Fact[] = [
      ['status', message.status === 'none' ? 'unsigned' : message.status],
      ['from', message.from.join(', ')],
      ['signatures', message.signatures.map(presentDkimSignature).join('\n')],
    ];
    return block(ctx, `${message.source} DKIM signatures`, facts, message.findings);
  },
  table: {
    columns: [{ header: 'message', priority: 0, wrap: true }, { header: 'status', priority: 0 }, ...COUNT_COLUMNS],
    cells: (value) => {
      const message = value as DkimMessageResult;
      return [message.source, message.status, count(message.findings, 'error'), count(message.findings, 'warning'), count(message.findings, 'info')];
    },
    key: (value) => (value as DkimMessageResult).source,
  },
};
