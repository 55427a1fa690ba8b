import { presentDnsData } from '../dns-presentation.js';
import type { Finding } from '../../engine/findings.js';
import { factList, findingsBlock, headline, safe, sections, type Fact } from './blocks.js';
import { fittedTable, type TableColumn, type TableRow } from './fitted-table.js';
import type { Tone, ViewContext } from './style.js';
import { failureText, plural, type HumanView, type ViewRow } from './view.js';
import { wrapHanging } from './wrap.js';

interface DnsAnswer {
  name: string;
  type: string;
  ttlSeconds: number;
  data: unknown;
}

interface DnssecLink {
  zone: string;
  ds: Array<{ keyTag: number; algorithm: number; digestType: number }>;
  dnskeys: Array<{ tag: number; algorithm: number; flags: number }>;
  signer: string | null;
  status: string;
  reason: string | null;
}

/** The `--dnssec` part of a record (engine/dns/dnssec/dnssec-report.ts). */
interface DnssecPart {
  status: string;
  reason: string | null;
  trustAnchor: string;
  authenticData: boolean | null;
  chain: DnssecLink[];
  findings: Finding[];
}

interface DnsRecord {
  dnssec?: DnssecPart;
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

const DNSSEC_TONE: Record<string, Tone> = { secure: 'good', insecure: 'warn', bogus: 'bad', indeterminate: 'warn' };

/** One zone of the chain: `child.test.  secure  DS 34979/8/2 by test.; keys 257:34979/8 256:41983/8`. */
function chainLine(link: DnssecLink): string {
  const ds = link.ds.length > 0 ? `DS ${link.ds.map((d) => `${d.keyTag}/${d.algorithm}/${d.digestType}`).join(' ')}` : null;
  const from = link.signer === null ? 'trust anchor' : ds === null ? `no DS from ${link.signer}` : `${ds} from ${link.signer}`;
  const keys = link.dnskeys.length > 0 ? `keys ${link.dnskeys.map((k) => `${k.flags}:${k.tag}/${k.algorithm}`).join(' ')}` : null;
  return [`${link.zone} ${link.status}`, from, keys, link.reason].filter((part) => part !== null).join('; ');
}

/** `--dnssec`: the verdict first, the answers with their RRSIGs, the chain of trust, the findings. */
function dnssecBlock(ctx: ViewContext, dns: DnsRecord, dnssec: DnssecPart): string {
  const answers = dns.answers.length > 0 ? plural(dns.answers.length, 'answer') : emptyVerdict(dns).text;
  const facts: Fact[] = [
    ['DNSSEC', dnssec.reason === null ? dnssec.status : `${dnssec.status}: ${dnssec.reason}`],
    ['AD bit', dnssec.authenticData === null ? 'unknown (the query without CD failed)' : dnssec.authenticData ? 'set by the resolver' : 'not set by the resolver'],
    ['anchor', dnssec.trustAnchor],
    ['chain', dnssec.chain.map(chainLine).join('\n')],
    ['resolver', `${dns.resolver} (${dns.transport})`],
  ];
  return sections(
    headline(ctx, `${dns.domainUnicode} ${dns.type}`, `${dnssec.status} (DNSSEC), ${answers}`, DNSSEC_TONE[dnssec.status] ?? 'warn', ': '),
    answerTable(ctx, dns.answers),
    factList(ctx, facts),
    findingsBlock(ctx, dnssec.findings),
  );
}

function dnsBlock(ctx: ViewContext, value: unknown): string {
  const dns = value as DnsRecord;
  if (dns.dnssec) return dnssecBlock(ctx, dns, dns.dnssec);
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
  const failed = rows.filter((row) => row.error !== null).map(failureText);
  const names = [...new Set([...records.map((dns) => dns.domainUnicode), ...rows.filter((row) => row.error !== null).map((row) => row.query)])];
  const title = names.length === 1 ? names[0]! : plural(rows.length, 'lookup');
  const verdict = `${plural(answers.length, 'answer')} in ${plural(records.length - empty.length, 'type')}${failed.length > 0 ? `, ${plural(failed.length, 'failed lookup')}` : ''}`;
  const list = (items: readonly string[]) => (items.length === 0 ? '' : `${items.flatMap((item) => wrapHanging(safe(item), ctx.width, '  ', '    ')).join('\n')}\n`);
  const resolvers = [...new Set(records.map((dns) => `${dns.resolver} (${dns.transport})`))];
  const verdicts = records.flatMap((dns) => (dns.dnssec ? [`${dns.domainUnicode} ${dns.type}: ${dns.dnssec.status}${dns.dnssec.reason === null ? '' : ` (${dns.dnssec.reason})`}`] : []));
  return sections(
    headline(ctx, title, verdict, failed.length > 0 ? 'bad' : answers.length > 0 ? 'good' : 'warn', ': '),
    verdicts.length > 0 ? `${ctx.chalk.bold('DNSSEC')}\n${list(verdicts)}` : '',
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
