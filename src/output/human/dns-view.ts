import { presentDnsData } from '../dns-presentation.js';
import type { DnssecChainLink } from '../../engine/dns/dnssec/validate.js';
import type { Finding } from '../../engine/findings.js';
import { factList, findingsBlock, headline, safe, sections, type Fact } from './blocks.js';
import { displayWidth } from './display-width.js';
import type { Tone, ViewContext } from './style.js';
import { failureText, plural, type HumanView, type ViewRow } from './view.js';
import { wrapHanging } from './wrap.js';

interface DnsAnswer {
  name: string;
  type: string;
  ttl_seconds: number;
  data: unknown;
}

/** The `--dnssec` part of a record (engine/dns/dnssec/dnssec-report.ts). */
interface DnssecPart {
  status: string;
  reason: string | null;
  trust_anchor: string;
  authentic_data: boolean | null;
  /** A chain question that got no answer (older servers' records lack it). */
  error?: { code: string; message: string } | null;
  chain: DnssecChainLink[];
  findings: Finding[];
}

interface DnsRecord {
  dnssec?: DnssecPart;
  target: string;
  domain: string;
  domain_unicode: string;
  type: string;
  status: string;
  rcode: string;
  answers: DnsAnswer[];
  resolver: string;
  transport: string;
  latency_ms: number;
}

/** The narrowest the data column is made beside the other three; narrower, each record's data goes under it. */
const MIN_DATA_WIDTH = 24;

/**
 * The answers one line each, as dig and doggo print them: name, type, TTL
 * and data in aligned columns under a header, no rules. Data longer than
 * the line (a TXT record, a key) wraps under its own column, every
 * character kept; when the names leave the data too little room, each
 * record's data goes on the lines under it instead.
 */
function answerList(ctx: ViewContext, answers: readonly DnsAnswer[]): string {
  if (answers.length === 0) return '';
  const rows = answers.map((answer) => [safe(answer.name).replaceAll('\n', ' '), safe(answer.type), String(answer.ttl_seconds), safe(presentDnsData(answer.type, answer.data))] as const);
  const header = ['name', 'type', 'TTL', 'data'] as const;
  const widthOf = (column: 0 | 1 | 2) => Math.max(displayWidth(header[column]), ...rows.map((row) => displayWidth(row[column])));
  const [nameWidth, typeWidth, ttlWidth] = [widthOf(0), widthOf(1), widthOf(2)];
  const pad = (text: string, width: number) => text + ' '.repeat(Math.max(0, width - displayWidth(text)));
  const lead = (name: string, type: string, ttl: string) => `${pad(name, nameWidth)}  ${pad(type, typeWidth)}  ${' '.repeat(ttlWidth - displayWidth(ttl))}${ttl}  `;
  const dataColumn = nameWidth + typeWidth + ttlWidth + 6;
  const beside = ctx.width - dataColumn >= MIN_DATA_WIDTH;
  const headerLead = lead(header[0], header[1], header[2].padStart(ttlWidth));
  if (beside) {
    const lines = [ctx.chalk.bold(`${headerLead}${header[3]}`)];
    for (const [name, type, ttl, data] of rows) lines.push(...wrapHanging(data, ctx.width, lead(name, type, ttl), ' '.repeat(dataColumn)));
    return `${lines.join('\n')}\n`;
  }
  // The header says where the data is: on the lines under each record, indented. A name wider than the line is broken.
  const wrapped = (text: string) => wrapHanging(text, ctx.width, '', '  ');
  const lines = [...wrapped(headerLead).map((line) => ctx.chalk.bold(line)), ctx.chalk.bold(`    ${header[3]}`)];
  for (const [name, type, ttl, data] of rows) lines.push(...wrapped(lead(name, type, ttl)), ...wrapHanging(data, ctx.width, '    ', '    '));
  return `${lines.join('\n')}\n`;
}

/** `127.0.0.1:53 (udp), 4 ms`: where the answers came from and how long they took, said once. */
function resolverText(dns: DnsRecord): string {
  return `${dns.resolver} (${dns.transport}), ${dns.latency_ms} ms`;
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

/**
 * The headline of one lookup: its answers counted, or what it found without
 * one. A CNAME chain that leads to no record of the type (or to a name that
 * does not exist) is listed, but is not an answer (RFC 2308 §2.1, RFC 6604).
 */
function lookupVerdict(dns: DnsRecord): { text: string; tone: Tone } {
  if (dns.status === 'answer') return { text: plural(dns.answers.length, 'answer'), tone: 'good' };
  const empty = emptyVerdict(dns);
  const aliases = dns.answers.filter((answer) => answer.type === 'CNAME' || answer.type === 'DNAME').length;
  return aliases === 0 ? empty : { ...empty, text: `${empty.text}, after ${plural(aliases, 'alias', 'aliases')}` };
}

const DNSSEC_TONE: Record<string, Tone> = { secure: 'good', insecure: 'warn', bogus: 'bad', indeterminate: 'warn' };

/** One zone of the chain: `child.test.  secure  DS 34979/8/2 by test.; keys 257:34979/8 256:41983/8`. */
function chainLine(link: DnssecChainLink, said: (text: string) => boolean): string {
  const ds = link.ds.length > 0 ? `DS ${link.ds.map((d) => `${d.key_tag}/${d.algorithm}/${d.digest_type}`).join(' ')}` : null;
  const from = link.signer === null ? 'trust anchor' : ds === null ? `no DS from ${link.signer}` : `${ds} from ${link.signer}`;
  const keys = link.dnskeys.length > 0 ? `keys ${link.dnskeys.map((k) => `${k.flags}:${k.tag}/${k.algorithm}`).join(' ')}` : null;
  return [`${link.zone} ${link.status}`, from, keys, link.reason !== null && said(link.reason) ? null : link.reason].filter((part) => part !== null).join('; ');
}

/** `--dnssec`: the verdict first, the answers with their RRSIGs, the chain of trust, the findings. */
function dnssecBlock(ctx: ViewContext, dns: DnsRecord, dnssec: DnssecPart): string {
  const answers = lookupVerdict(dns).text;
  // Each reason once: the finding that gives it (with its id and RFC) stands for the verdict's and the chain's.
  const inFindings = (text: string) => dnssec.findings.some((item) => item.message.includes(text));
  // Undecided for want of an answer: not a verdict, so the view does not give the status as one.
  const status = dnssec.error ? 'not checked' : dnssec.status;
  const facts: Fact[] = [
    // Not checked: the finding says why (the lookup that failed), once.
    ['DNSSEC', dnssec.error || dnssec.reason === null || inFindings(dnssec.reason) ? status : `${status}: ${dnssec.reason}`],
    ['AD bit', dnssec.authentic_data === null ? 'unknown (the query without CD failed)' : dnssec.authentic_data ? 'set by the resolver' : 'not set by the resolver'],
    ['anchor', dnssec.trust_anchor],
    ['chain', dnssec.chain.map((link) => chainLine(link, (text) => inFindings(text) || (dnssec.reason ?? '').includes(text))).join('\n')],
    ['resolver', resolverText(dns)],
  ];
  return sections(
    headline(ctx, `${dns.domain_unicode} ${dns.type}`, `${status} (DNSSEC), ${answers}`, dnssec.error ? 'warn' : (DNSSEC_TONE[dnssec.status] ?? 'warn'), ': '),
    answerList(ctx, dns.answers),
    factList(ctx, facts),
    findingsBlock(ctx, dnssec.findings),
  );
}

function dnsBlock(ctx: ViewContext, value: unknown): string {
  const dns = value as DnsRecord;
  if (dns.dnssec) return dnssecBlock(ctx, dns, dns.dnssec);
  const verdict = lookupVerdict(dns);
  const facts: Fact[] = [
    ['name', dns.domain_unicode !== dns.domain ? `${dns.domain_unicode} (${dns.domain})` : null],
    ['asked', dns.target !== dns.domain && dns.target !== dns.domain_unicode ? dns.target : null],
    ['resolver', resolverText(dns)],
  ];
  return sections(headline(ctx, `${dns.domain_unicode} ${dns.type}`, verdict.text, verdict.tone, ': '), answerList(ctx, dns.answers), factList(ctx, facts));
}

/** The DNSSEC verdict of each lookup, lookups with the same verdict and reason on one line naming each: `a.test A, b.test A: indeterminate (why)`. */
function dnssecVerdicts(records: readonly DnsRecord[]): string[] {
  const groups = new Map<string, string[]>();
  for (const dns of records) {
    if (!dns.dnssec) continue;
    const verdict = `${dns.dnssec.status}${dns.dnssec.reason === null ? '' : ` (${dns.dnssec.reason})`}`;
    groups.set(verdict, [...(groups.get(verdict) ?? []), `${dns.domain_unicode} ${dns.type}`]);
  }
  return [...groups].map(([verdict, lookups]) => `${lookups.join(', ')}: ${verdict}`);
}

/** The answers of every record in one list; the types without answers and the failed lookups under it. */
function dnsMany(ctx: ViewContext, rows: readonly ViewRow[]): string {
  const records = rows.filter((row) => row.error === null).map((row) => row.record as DnsRecord);
  // Every record is listed (a chain that led nowhere too); only the lookups that found the type count as answered.
  const listed = records.flatMap((dns) => dns.answers);
  const answers = records.flatMap((dns) => (dns.status === 'answer' ? dns.answers : []));
  const empty = records.filter((dns) => dns.status !== 'answer').map((dns) => `${dns.domain_unicode} ${dns.type}: ${lookupVerdict(dns).text}`);
  const failed = rows.filter((row) => row.error !== null).map(failureText);
  const names = [...new Set([...records.map((dns) => dns.domain_unicode), ...rows.filter((row) => row.error !== null).map((row) => row.query)])];
  const title = names.length === 1 ? names[0]! : plural(rows.length, 'lookup');
  const verdict = `${plural(answers.length, 'answer')} in ${plural(records.length - empty.length, 'type')}${failed.length > 0 ? `, ${plural(failed.length, 'failed lookup')}` : ''}`;
  const list = (items: readonly string[]) => (items.length === 0 ? '' : `${items.flatMap((item) => wrapHanging(safe(item), ctx.width, '  ', '    ')).join('\n')}\n`);
  const resolvers = [...new Set(records.map((dns) => `${dns.resolver} (${dns.transport})`))];
  const slowest = Math.max(0, ...records.map((dns) => dns.latency_ms));
  const timing = records.length === 1 ? `${slowest} ms` : `${plural(records.length, 'query', 'queries')}, slowest ${slowest} ms`;
  const verdicts = dnssecVerdicts(records);
  return sections(
    headline(ctx, title, verdict, failed.length > 0 ? 'bad' : answers.length > 0 ? 'good' : 'warn', ': '),
    verdicts.length > 0 ? `${ctx.chalk.bold('DNSSEC')}\n${list(verdicts)}` : '',
    answerList(ctx, listed),
    empty.length > 0 ? `${ctx.chalk.bold('No answer')}\n${list(empty)}` : '',
    failed.length > 0 ? `${ctx.chalk.red.bold('Failed')}\n${list(failed)}` : '',
    factList(ctx, [['resolver', resolvers.length > 0 ? `${resolvers.join(', ')}, ${timing}` : null]]),
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
      return [dns.domain_unicode, dns.type, dns.status === 'answer' ? answers : [answers, lookupVerdict(dns).text].filter(Boolean).join('\n')];
    },
    key: (value) => (value as DnsRecord).target,
  },
  many: dnsMany,
};
