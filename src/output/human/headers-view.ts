import type { HeadersHop, HeadersReport } from '../../engine/mail/headers/analyze-headers.js';
import { durationText } from '../../engine/mail/headers/hops.js';
import { factList, findingCounts, findingsBlock, heading, headline, safe, sections } from './blocks.js';
import { toned, type Tone, type ViewContext } from './style.js';
import { plural, type HumanView } from './view.js';
import { wrapHanging } from './wrap.js';

/** The widest delay bar, in characters: the longest delay of the message fills it. */
const BAR_WIDTH = 16;

function verdict(report: HeadersReport): string {
  const hops = plural(report.hops.length, 'hop');
  return report.total_transit_seconds === null ? hops : `${hops}, ${durationText(report.total_transit_seconds)} in transit`;
}

/** "10:00:02" of the hop's time (UTC), or "--:--:--". */
function clock(hop: HeadersHop): string {
  return hop.timestamp === null ? '--:--:--' : hop.timestamp.slice(11, 19);
}

/** The delay of a hop as a figure and a bar scaled to the message's longest delay; skew said as such. */
function delayCell(hop: HeadersHop, longest: number): string {
  if (hop.clock_skew_seconds !== null) return `skew -${durationText(hop.clock_skew_seconds)}`.padEnd(BAR_WIDTH + 13);
  if (hop.delay_seconds === null) return ''.padEnd(BAR_WIDTH + 13);
  const figure = `+${durationText(hop.delay_seconds)}`.padEnd(13);
  const length = longest === 0 ? 0 : Math.max(hop.delay_seconds > 0 ? 1 : 0, Math.round((hop.delay_seconds / longest) * BAR_WIDTH));
  return figure + '#'.repeat(length).padEnd(BAR_WIDTH);
}

/** Who handed the message to whom: `helo (rdns) [ip] -> by`. */
function route(hop: HeadersHop): string {
  const from = [hop.from_helo, hop.from_rdns !== null && hop.from_rdns !== hop.from_helo ? `(${hop.from_rdns})` : null, hop.from_ip === null ? null : `[${hop.from_ip}]`].filter((part) => part !== null).join(' ');
  return `${from === '' ? '?' : from} -> ${hop.by_host ?? '?'}`;
}

/** What else the hop says: protocol, TLS, id, and its address described. */
function details(hop: HeadersHop): string {
  const tls = [hop.tls_version, hop.tls_cipher].filter((part) => part !== null).join(' ');
  const address = hop.address;
  const where =
    address === null
      ? null
      : address.scope === 'special'
        ? address.special_purpose
        : address.lookup_error !== null
          ? `not described: ${address.lookup_error}`
          : [address.country_code, address.asn === null ? null : `AS${address.asn}`, address.organization, address.is_hosting ? 'hosting' : null, address.is_vpn ? 'VPN' : null, address.is_tor ? 'Tor' : null]
              .filter((part) => part !== null)
              .join(' ');
  const listed = address?.blacklist ? `DNSBL ${address.blacklist.status}${address.blacklist.listed_zones.length > 0 ? ` (${address.blacklist.listed_zones.join(', ')})` : ''}` : null;
  return [hop.protocol, tls === '' ? null : tls, hop.id === null ? null : `id ${hop.id}`, where, listed].filter((part) => part !== null && part !== '').join(', ');
}

function hopLines(ctx: ViewContext, report: HeadersReport): string {
  if (report.hops.length === 0) return '';
  const longest = Math.max(0, ...report.hops.map((hop) => hop.delay_seconds ?? 0));
  const lines: string[] = [];
  for (const hop of report.hops) {
    const number = String(hop.hop).padStart(2);
    lines.push(`${number}  ${clock(hop)}  ${delayCell(hop, longest)}`.trimEnd());
    if (!hop.parsed) {
      for (const line of wrapHanging(`not read, as written: ${safe(hop.raw)}`, ctx.width, '    ', '    ')) lines.push(line);
      continue;
    }
    for (const line of wrapHanging(safe(route(hop)), ctx.width, '    ', '      ')) lines.push(line);
    const more = details(hop);
    if (more !== '') for (const line of wrapHanging(safe(more), ctx.width, '    ', '      ')) lines.push(line);
  }
  const total = report.total_transit_seconds === null ? '' : `total ${durationText(report.total_transit_seconds)}\n`;
  return `${heading(ctx, 'hops (oldest first, times UTC)')}${lines.join('\n')}\n${total}`;
}

/** The tone of a verdict: pass green, fail red, what could not be checked yellow. */
function verdictTone(result: string): Tone {
  if (result === 'pass') return 'good';
  if (result === 'fail' || result === 'permerror' || result === 'softfail') return 'bad';
  if (result === 'temperror' || result === 'not_checked') return 'warn';
  return 'plain';
}

/** What the topmost Authentication-Results states for a method, or null. */
function statedText(report: HeadersReport, method: string): string | null {
  const top = report.authentication.stated[0]?.field;
  const said = report.authentication.stated.filter((item) => item.field === top && item.method === method).map((item) => item.result);
  return said.length === 0 ? null : [...new Set(said)].join(',');
}

/** SPF, DKIM and DMARC as recomputed, each beside what the message states. */
function verdictLines(ctx: ViewContext, report: HeadersReport): string {
  const { spf, dkim, dmarc } = report.authentication;
  const dkimWhat = dkim.signatures.length === 0 ? 'no signature' : dkim.signatures.map((signature) => `d=${signature.domain ?? '?'} ${signature.result}${signature.reason ? ` (${signature.reason})` : ''}`).join('; ');
  const rows: Array<[string, string, string]> = [
    ['SPF', spf.result, spf.ip === null ? spf.reason : `${spf.ip} (hop ${spf.hop}) for ${spf.domain ?? spf.sender ?? spf.helo ?? '?'}${spf.result === 'pass' ? '' : `: ${spf.reason}`}`],
    ['DKIM', dkim.result, dkim.result === 'not_checked' && dkim.reason ? dkim.reason : dkimWhat],
    ['DMARC', dmarc.result, dmarc.policy === null ? dmarc.reason : `${dmarc.from_domain}, policy ${dmarc.policy}: ${dmarc.reason}`],
  ];
  const { arc } = report.authentication;
  if (arc.result !== 'none') {
    const sealers = arc.seals.map((seal) => `i=${seal.instance} ${seal.domain ?? '?'} cv=${seal.cv ?? '?'}`).join(', ');
    rows.push(['ARC', arc.result, `${sealers}${arc.reason ? `: ${arc.reason}` : ''}`]);
  }
  const authserv = report.authentication.stated[0]?.authserv_id;
  const lines: string[] = [];
  for (const [method, result, what] of rows) {
    const said = statedText(report, method.toLowerCase());
    const disagrees = report.findings.some((item) => item.id === 'headers_auth_results_disagree' && item.evidence?.method === method.toLowerCase());
    const statedPart = said === null ? '' : `; stated ${said}${disagrees ? ' (disagrees)' : ''}`;
    const plain = `  ${method.padEnd(6)}${result.padEnd(12)}`;
    const wrapped = wrapHanging(safe(`${what}${statedPart}`), ctx.width, plain, ' '.repeat(20));
    // The prefix is measured uncoloured, then the verdict coloured in place.
    wrapped[0] = `  ${method.padEnd(6)}${toned(ctx, verdictTone(result), result)}${wrapped[0]!.slice(8 + result.length)}`;
    lines.push(...wrapped);
  }
  const title = authserv === undefined ? 'authentication (recomputed)' : `authentication (recomputed; stated by ${authserv})`;
  return `${heading(ctx, title)}${lines.join('\n')}\n`;
}

function headersBlock(ctx: ViewContext, value: unknown): string {
  const report = value as HeadersReport;
  const counts = findingCounts(report.findings);
  return sections(
    headline(ctx, report.message.subject ?? report.source, `${verdict(report)}; ${counts.text}`, counts.tone),
    verdictLines(ctx, report),
    factList(ctx, [
      ['source', report.source],
      ['from', report.message.from],
      ['to', report.message.to],
      ['date', report.message.date],
      ['message-id', report.message.message_id],
      ['return-path', report.message.return_path],
    ]),
    hopLines(ctx, report),
    findingsBlock(ctx, report.findings),
  );
}

/** `netintel headers`: the message, the hops as a timeline with delay bars, the findings. */
export const HEADERS_VIEW: HumanView = {
  block: headersBlock,
  table: {
    columns: [
      { header: 'source', priority: 0 },
      { header: 'subject', priority: 1, wrap: true },
      { header: 'hops', priority: 0, align: 'right' },
      { header: 'transit', priority: 0 },
      { header: 'findings', priority: 1 },
    ],
    cells: (value) => {
      const report = value as HeadersReport;
      return [report.source, report.message.subject ?? '', String(report.hops.length), report.total_transit_seconds === null ? '' : durationText(report.total_transit_seconds), findingCounts(report.findings).text];
    },
    key: (value) => (value as HeadersReport).source,
  },
};
