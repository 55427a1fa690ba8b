import { presentDnsData } from '../dns-presentation.js';
import { factList, headline, safe, sections, type Fact } from './blocks.js';
import { fittedTable, type TableColumn, type TableRow } from './fitted-table.js';
import type { Tone, ViewContext } from './style.js';
import { plural, type HumanView, type ViewRow } from './view.js';
import { wrapHanging } from './wrap.js';

interface DnsAnswer {
  name: string;
  type: string;
  ttlSeconds: number;
  data: unknown;
}

interface DnsRecord {
  target: string;
  domain: string;
  domainUnicode: string;
  type: string;
  status: string;
  rcode: string;
  answers: DnsAnswer[];
  resolver: string;
  transport: string;
}

const ANSWER_COLUMNS: readonly TableColumn[] = [
  { header: 'name', priority: 2, wrap: true },
  { header: 'TTL', priority: 3 },
  { header: 'type', priority: 1 },
  { header: 'data', priority: 0, wrap: true },
];

function answerRow(answer: DnsAnswer): TableRow {
  return { cells: [answer.name, String(answer.ttlSeconds), answer.type, presentDnsData(answer.type, answer.data)] };
}

/** The answers as a table, or one `name TTL type data` line each when even the data column does not fit. */
function answerTable(ctx: ViewContext, answers: readonly DnsAnswer[]): string {
  if (answers.length === 0) return '';
  const table = fittedTable(ctx, ANSWER_COLUMNS, answers.map(answerRow));
  if (table !== null) return table;
  const lines = answers.flatMap((answer) => wrapHanging(safe(`${answer.name} ${answer.ttlSeconds} ${answer.type} ${presentDnsData(answer.type, answer.data)}`), ctx.width, '', '  '));
  return `${lines.join('\n')}\n`;
}

/** What a lookup without answers found: `no such domain (NXDOMAIN)`. */
function emptyVerdict(dns: DnsRecord): { text: string; tone: Tone } {
  switch (dns.status) {
    case 'nxdomain':
      return { text: 'no such domain (NXDOMAIN)', tone: 'bad' };
    case 'nodata':
      return { text: `no ${dns.type} records`, tone: 'warn' };
    default:
      return { text: `${dns.status} (${dns.rcode})`, tone: 'bad' };
  }
}

function dnsBlock(ctx: ViewContext, value: unknown): string {
  const dns = value as DnsRecord;
  const verdict = dns.answers.length > 0 ? { text: plural(dns.answers.length, 'answer'), tone: 'good' as Tone } : emptyVerdict(dns);
  const facts: Fact[] = [
    ['name', dns.domainUnicode !== dns.domain ? `${dns.domainUnicode} (${dns.domain})` : null],
    ['asked', dns.target !== dns.domain && dns.target !== dns.domainUnicode ? dns.target : null],
    ['resolver', `${dns.resolver} (${dns.transport})`],
  ];
  return sections(headline(ctx, `${dns.domainUnicode} ${dns.type}`, verdict.text, verdict.tone, ': '), answerTable(ctx, dns.answers), factList(ctx, facts));
}

/** The answers of every record in one table; the types without answers and the failed lookups under it. */
function dnsMany(ctx: ViewContext, rows: readonly ViewRow[]): string {
  const records = rows.filter((row) => row.error === null).map((row) => row.record as DnsRecord);
  const answers = records.flatMap((dns) => dns.answers);
  const empty = records.filter((dns) => dns.answers.length === 0).map((dns) => `${dns.domainUnicode} ${dns.type}: ${emptyVerdict(dns).text}`);
  const failed = rows.filter((row) => row.error !== null).map((row) => `${row.query}: ${row.error!.code}: ${row.error!.message}`);
  const names = [...new Set([...records.map((dns) => dns.domainUnicode), ...rows.filter((row) => row.error !== null).map((row) => row.query)])];
  const title = names.length === 1 ? names[0]! : plural(rows.length, 'lookup');
  const verdict = `${plural(answers.length, 'answer')} in ${plural(records.length - empty.length, 'type')}${failed.length > 0 ? `, ${plural(failed.length, 'failed lookup')}` : ''}`;
  const list = (items: readonly string[]) => (items.length === 0 ? '' : `${items.flatMap((item) => wrapHanging(safe(item), ctx.width, '  ', '    ')).join('\n')}\n`);
  const resolvers = [...new Set(records.map((dns) => `${dns.resolver} (${dns.transport})`))];
  return sections(
    headline(ctx, title, verdict, failed.length > 0 ? 'bad' : answers.length > 0 ? 'good' : 'warn', ': '),
    answerTable(ctx, answers),
    empty.length > 0 ? `${ctx.chalk.bold('No answer')}\n${list(empty)}` : '',
    failed.length > 0 ? `${ctx.chalk.red.bold('Failed')}\n${list(failed)}` : '',
    factList(ctx, [['resolver', resolvers.join(', ')]]),
  );
}

export const DNS_VIEW: HumanView = {
  block: dnsBlock,
  table: {
    columns: [
      { header: 'name', priority: 0, wrap: true },
      { header: 'type', priority: 0 },
      { header: 'answers', priority: 0, wrap: true },
    ],
    cells: (value) => {
      const dns = value as DnsRecord;
      const answers = dns.answers.map((answer) => presentDnsData(answer.type, answer.data)).join('\n');
      return [dns.domainUnicode, dns.type, dns.answers.length > 0 ? answers : emptyVerdict(dns).text];
    },
    key: (value) => (value as DnsRecord).target,
  },
  many: dnsMany,
};
