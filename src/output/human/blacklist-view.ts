import type { BlacklistResult, BlacklistZoneResult } from '../../engine/blacklist/blacklist-result.js';
import type { Finding } from '../../engine/findings.js';
import { factList, findingsBlock, heading, headline, safe, sections, type Fact, type FindingLike } from './blocks.js';
import { fittedTable, type TableColumn } from './fitted-table.js';
import type { Tone, ViewContext } from './style.js';
import type { HumanView } from './view.js';
import { wrapHanging } from './wrap.js';

const ZONE_COLUMNS: readonly TableColumn[] = [
  // Several lists in a row wrap between their names, never inside one.
  { header: 'list', priority: 0, wrap: true, wholeWords: true },
  { header: 'address', priority: 3, wrap: true },
  { header: 'status', priority: 0 },
  { header: 'answer', priority: 1, wrap: true },
  { header: 'reason', priority: 2, wrap: true },
];

/** The cells of a row after its zone: address, status, answer, reason. */
function answerCells(row: BlacklistZoneResult): string[] {
  const subject = row.mx_hosts.length > 0 ? `${row.subject} (MX ${row.mx_hosts.join(', ')})` : row.subject;
  const answer = row.return_codes.map((code) => (code.meaning ? `${code.address} ${code.meaning}` : code.address)).join('\n');
  const detail = row.detail && row.status !== 'listed' && row.status !== 'clean' ? row.detail : '';
  return [subject, row.status, answer, [row.reason, detail].filter((part) => part).join('\n')];
}

/** Rows that say the same thing of different zones, as one row naming each zone once: five zones that failed their test points alike are one reason. */
function groupedRows(zones: readonly BlacklistZoneResult[]): Array<{ zones: string[]; cells: string[] }> {
  const groups = new Map<string, { zones: string[]; cells: string[] }>();
  for (const row of zones) {
    const cells = answerCells(row);
    const key = JSON.stringify(cells);
    const group = groups.get(key);
    if (group) group.zones.push(row.zone);
    else groups.set(key, { zones: [row.zone], cells });
  }
  return [...groups.values()];
}

function zoneTable(ctx: ViewContext, result: BlacklistResult): string {
  if (result.zones.length === 0) return '';
  const groups = groupedRows(result.zones);
  // The address column only when a row asks about something other than the target (a domain's mail hosts).
  const oneSubject = result.zones.every((row) => row.subject === result.target && row.mx_hosts.length === 0);
  const header = groups.some((group) => group.zones.length > 1) ? 'lists' : 'list';
  const columns = ZONE_COLUMNS.map((column) => (column.header === 'list' ? { ...column, header } : column)).filter((column) => !oneSubject || column.header !== 'address');
  const rows = groups.map((group) => {
    const cells = [group.zones.join(', '), ...group.cells];
    return { cells: oneSubject ? cells.filter((_, index) => index !== 1) : cells };
  });
  const table = fittedTable(ctx, columns, rows);
  if (table !== null) return table;
  return `${rows.flatMap((row) => wrapHanging(safe(row.cells.filter((cell) => cell !== '').join(' ')), ctx.width, '  ', '    ')).join('\n')}\n`;
}

/** `text` without the parenthesis that opens at `start` (and the space before it), brackets inside it kept together. */
function withoutParenthesis(text: string, start: number): string {
  let depth = 0;
  for (let index = start; index < text.length; index++) {
    if (text[index] === '(') depth += 1;
    else if (text[index] === ')' && --depth === 0) return text.slice(0, start - 1) + text.slice(index + 1);
  }
  return text;
}

/**
 * The verdict after the target's name. The list of zones that did not
 * answer, each with its status, is left to the table, which says it with
 * the reason.
 */
function verdictText(result: BlacklistResult): string {
  const { message } = result.verdict;
  let text = message.startsWith(`${result.target} `) ? message.slice(result.target.length + 1).replace(/^is /, '') : message;
  const firstUnchecked = result.zones.find((row) => row.status !== 'listed' && row.status !== 'clean');
  const start = firstUnchecked ? text.indexOf(` (${firstUnchecked.zone}: `) : -1;
  if (start >= 0) text = withoutParenthesis(text, start + 1);
  return text;
}

/** Findings the table says already: a zone that could not be used is a row with its status and reason. */
const SAID_BY_THE_TABLE = new Set(['blacklist_zone_unchecked']);
/** The finding that explains the rest (a documentation or private address is on no public list): it leads, under the headline. */
const KEY_FACT = 'blacklist_special_address';

/**
 * Findings alike but for their zone (a dead list each), as one finding
 * naming the zones; one whose zone is named more than once is kept as it is.
 */
function groupedByZone(findings: readonly Finding[]): FindingLike[] {
  const groups = new Map<string, { finding: Finding; zones: string[]; template: string }>();
  const out: Array<FindingLike | { group: string }> = [];
  for (const finding of findings) {
    const zone = (finding.evidence as { zone?: unknown } | undefined)?.zone;
    const pieces = typeof zone === 'string' && zone !== '' ? finding.message.split(zone) : [];
    if (pieces.length !== 2) {
      out.push(finding);
      continue;
    }
    const template = pieces.join('\u0000');
    const key = JSON.stringify([finding.id, finding.severity, finding.rfc, template]);
    const group = groups.get(key);
    if (group) group.zones.push(zone as string);
    else {
      groups.set(key, { finding, zones: [zone as string], template });
      out.push({ group: key });
    }
  }
  return out.map((item) => {
    if (!('group' in item)) return item;
    const { finding, zones, template } = groups.get(item.group)!;
    return { ...finding, message: template.replace('\u0000', zones.join(', ')), count: zones.length };
  });
}

const VERDICT_TONE: Readonly<Record<string, Tone>> = { listed: 'bad', clean: 'good', incomplete: 'warn', unknown: 'warn' };

function blacklistBlock(ctx: ViewContext, value: unknown): string {
  const result = value as BlacklistResult;
  const mx = result.mx;
  // Skipped zones are not listed here: each reason for skipping has its finding (dead, no IPv6 data, a domain list).
  const facts: Fact[] = [
    ['mail hosts', mx ? (mx.hosts.length > 0 ? mx.hosts.map((host) => `${host.preference ?? 'implicit'} ${host.exchange} ${host.status === 'resolved' ? host.addresses.join(' ') : (host.error?.message ?? host.status)}`).join('\n') : mx.error ? `${mx.status}: ${mx.error.message}` : mx.status) : null],
    ['resolvers', result.resolvers.join(', ')],
  ];
  const keyFacts = result.findings.filter((item) => item.id === KEY_FACT);
  const keyFactLines = keyFacts.flatMap((item) => wrapHanging(safe(`${item.message} [${[item.id, item.rfc].filter((part) => part).join(', ')}]`), ctx.width, '', ''));
  const shown = result.findings.filter((item) => (item.severity !== 'pass' || ctx.all) && item.id !== KEY_FACT && !(SAID_BY_THE_TABLE.has(item.id) && result.zones.length > 0));
  const findings = groupedByZone(shown);
  return sections(
    headline(ctx, result.target, verdictText(result), VERDICT_TONE[result.verdict.status] ?? 'plain') + (keyFactLines.length > 0 ? `${keyFactLines.join('\n')}\n` : ''),
    zoneTable(ctx, result),
    factList(ctx, facts),
    findings.length > 0 ? heading(ctx, 'Findings') + findingsBlock(ctx, findings) : '',
  );
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
      return [result.target, result.verdict.status, listed.join(', '), `${result.verdict.checked_zones} of ${result.verdict.zones}`];
    },
    key: (value) => (value as BlacklistResult).target,
  },
};
