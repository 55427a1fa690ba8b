import type { BlacklistResult, BlacklistZoneResult } from '../../engine/blacklist/blacklist-result.js';
import { factList, findingsBlock, heading, headline, safe, sections, type Fact } from './blocks.js';
import { fittedTable, type TableColumn } from './fitted-table.js';
import type { Tone, ViewContext } from './style.js';
import type { HumanView } from './view.js';
import { wrapHanging } from './wrap.js';

const ZONE_COLUMNS: readonly TableColumn[] = [
  { header: 'list', priority: 0, wrap: true },
  { header: 'address', priority: 3, wrap: true },
  { header: 'status', priority: 0 },
  { header: 'answer', priority: 1, wrap: true },
  { header: 'reason', priority: 2, wrap: true },
];

function zoneCells(row: BlacklistZoneResult): string[] {
  const subject = row.mxHosts.length > 0 ? `${row.subject} (MX ${row.mxHosts.join(', ')})` : row.subject;
  const answer = row.returnCodes.map((code) => (code.meaning ? `${code.address} ${code.meaning}` : code.address)).join('\n');
  const detail = row.detail && row.status !== 'listed' && row.status !== 'clean' ? row.detail : '';
  return [row.zone, subject, row.status, answer, [row.reason, detail].filter((part) => part).join('\n')];
}

function zoneTable(ctx: ViewContext, result: BlacklistResult): string {
  if (result.zones.length === 0) return '';
  // The address column only when a row asks about something other than the target (a domain's mail hosts).
  const oneSubject = result.zones.every((row) => row.subject === result.target && row.mxHosts.length === 0);
  const columns = oneSubject ? ZONE_COLUMNS.filter((column) => column.header !== 'address') : ZONE_COLUMNS;
  const rows = result.zones.map((row) => {
    const cells = zoneCells(row);
    return { cells: oneSubject ? cells.filter((_, index) => index !== 1) : cells };
  });
  const table = fittedTable(ctx, columns, rows);
  if (table !== null) return table;
  return `${rows.flatMap((row) => wrapHanging(safe(row.cells.filter((cell) => cell !== '').join(' ')), ctx.width, '  ', '    ')).join('\n')}\n`;
}

const VERDICT_TONE: Readonly<Record<string, Tone>> = { listed: 'bad', clean: 'good', incomplete: 'warn', unknown: 'warn' };

function blacklistBlock(ctx: ViewContext, value: unknown): string {
  const result = value as BlacklistResult;
  const message = result.verdict.message.startsWith(`${result.target} `) ? result.verdict.message.slice(result.target.length + 1).replace(/^is /, '') : result.verdict.message;
  const mx = result.mx;
  const facts: Fact[] = [
    ['mail hosts', mx ? (mx.hosts.length > 0 ? mx.hosts.map((host) => `${host.preference ?? 'implicit'} ${host.exchange} ${host.status === 'resolved' ? host.addresses.join(' ') : host.error ?? host.status}`).join('\n') : mx.error ? `${mx.status}: ${mx.error}` : mx.status) : null],
    ['not checked', result.skipped.length > 0 ? result.skipped.map((item) => `${item.zone}${item.subject ? ` ${item.subject}` : ''}: ${item.detail}`).join('\n') : null],
    ['resolvers', result.resolvers.join(', ')],
  ];
  const findings = result.findings.filter((item) => item.severity !== 'pass' || ctx.all);
  return sections(headline(ctx, result.target, message, VERDICT_TONE[result.verdict.status] ?? 'plain'), zoneTable(ctx, result), factList(ctx, facts), findings.length > 0 ? heading(ctx, 'Findings') + findingsBlock(ctx, findings) : '');
}

export const BLACKLIST_VIEW: HumanView = {
  block: blacklistBlock,
  table: {
    columns: [
      { header: 'target', priority: 0, wrap: true },
      { header: 'verdict', priority: 0 },
      { header: 'listed on', priority: 1, wrap: true },
      { header: 'checked', priority: 2 },
    ],
    cells: (value) => {
      const result = value as BlacklistResult;
      const listed = result.zones.filter((row) => row.status === 'listed').map((row) => row.zone);
      return [result.target, result.verdict.status, listed.join(', '), `${result.verdict.checkedZones} of ${result.verdict.zones}`];
    },
    key: (value) => (value as BlacklistResult).target,
  },
};
