import type { SmtpResult } from '../../engine/smtp/smtp-result.js';
import { factList, findingCounts, findingsBlock, headline, sections, type Fact } from './blocks.js';
import type { ViewContext } from './style.js';
import { grouped, type HumanView } from './view.js';

function tlsText(smtp: SmtpResult): string | null {
  const tls = smtp.tls;
  if (!smtp.connected || smtp.ehlo === null) return null;
  if (tls.established) return [tls.protocol, tls.cipher].filter((part) => part !== null).join(', ') + (tls.method === 'implicit' ? ' (implicit TLS)' : ' (STARTTLS)');
  if (tls.offered) return `STARTTLS offered but failed${tls.error ? `: ${tls.error}` : ''}`;
  return 'not offered: mail to this server travels in clear text';
}

function certificateFacts(smtp: SmtpResult): Fact[] {
  const certificate = smtp.tls.certificate;
  if (!certificate) return [];
  const problems = [
    certificate.trusted ? null : `not trusted${certificate.verify_error ? ` (${certificate.verify_error})` : ''}`,
    certificate.hostname_match ? null : `does not name ${certificate.checked_name}`,
    certificate.expired ? 'expired' : null,
    certificate.not_yet_valid ? 'not yet valid' : null,
    certificate.self_signed ? 'self-signed' : null,
  ].filter((problem) => problem !== null);
  return [
    ['certificate', `${certificate.subject}\nissued by ${certificate.issuer}`],
    ['names', certificate.san.join(', ')],
    ['valid until', `${certificate.valid_to} (${certificate.days_left} days left)`],
    ['checks', problems.length > 0 ? problems.join(', ') : `trusted, names ${certificate.checked_name}`],
  ];
}

/** The DANE line: the verdict first, then what it rests on. */
function daneText(smtp: SmtpResult): string | null {
  const dane = smtp.dane;
  if (!dane) return null;
  const { tlsa } = dane;
  const count = `${tlsa.records.length} TLSA record${tlsa.records.length === 1 ? '' : 's'} at ${tlsa.name}`;
  const dnssec = `DNSSEC ${dane.dnssec.status}`;
  const matched = dane.matches.filter((match) => match.matched).map((match) => match.record.label);
  switch (dane.verdict) {
    case 'matched':
      return `matched: ${matched.join(', ')} (${count}, ${dnssec})`;
    case 'mismatch':
      return `no match with the presented chain (${count}, ${dnssec})`;
    case 'unusable':
      return `unusable for SMTP: PKIX or unknown usages only (${count})`;
    case 'no-tls':
      return `no certificate to match (${count}, ${dnssec})`;
    case 'failed':
      if (tlsa.status === 'failed') return `TLSA lookup failed: ${tlsa.error?.message ?? 'unknown error'}`;
      if (dane.dnssec.status === 'bogus') return `DNSSEC bogus at ${tlsa.name}${dane.dnssec.reason ? `: ${dane.dnssec.reason}` : ''}`;
      return `not checked: DNSSEC could not be decided (${count}: ${dane.dnssec.error?.message ?? dane.dnssec.reason ?? 'unknown'})`;
    case 'not-applicable':
      return tlsa.records.length === 0
        ? `not in use (no TLSA records at ${tlsa.name})`
        : `${matched.length > 0 ? 'matches, but ' : ''}ignored by senders: ${count}, ${dnssec}`;
  }
}

function authText(smtp: SmtpResult): string | null {
  const auth = smtp.auth;
  const mechanisms = auth.mechanisms_after_tls ?? auth.mechanisms_before_tls;
  const offered = mechanisms && mechanisms.length > 0 ? mechanisms.join(' ') : null;
  const before = auth.mechanisms_before_tls && auth.mechanisms_before_tls.length > 0 && auth.mechanisms_after_tls ? ` (before TLS: ${auth.mechanisms_before_tls.join(' ')})` : '';
  const tested = auth.tested ? `; ${auth.tested} ${auth.result ?? ''}${auth.reply ? `: ${auth.reply.code} ${auth.reply.text.split('\n')[0]}` : ''}` : '';
  const skipped = auth.result === 'skipped' && auth.skipped_reason ? `; not tested: ${auth.skipped_reason}` : '';
  const text = `${offered ?? 'none offered'}${before}${tested}${skipped}`;
  return offered === null && tested === '' && skipped === '' ? null : text;
}

function envelopeFacts(smtp: SmtpResult): Fact[] {
  const envelope = smtp.envelope;
  if (!envelope) return [];
  const reply = (value: { code: number; text: string } | null) => (value ? `${value.code} ${value.text.split('\n')[0]}` : null);
  return [
    ['envelope', `${envelope.from} -> ${envelope.to}${envelope.authenticated ? ' (authenticated)' : ''}`],
    ['MAIL FROM', reply(envelope.mail)],
    ['RCPT TO', reply(envelope.rcpt)],
    ['open relay', envelope.relay_test ? (envelope.relay_verdict === 'accepted' ? 'yes: accepts mail for others' : envelope.relay_verdict === 'denied' ? 'no' : envelope.relay_verdict ?? 'not told') : null],
  ];
}

function smtpBlock(ctx: ViewContext, value: unknown): string {
  const smtp = value as SmtpResult;
  const counts = findingCounts(smtp.findings);
  const verdict = smtp.failure ? { text: `${smtp.failure.code} at ${smtp.failure.stage}`, tone: 'bad' as const } : counts;
  const reverse = smtp.reverse_dns;
  const ptr = reverse === null ? null : reverse.names.length > 0 ? `PTR ${reverse.names.join(', ')}${reverse.forward_confirmed === true ? ', forward-confirmed' : reverse.forward_confirmed === false ? ', not forward-confirmed' : ''}` : 'no PTR';
  const extensions = smtp.extensions;
  const facts: Fact[] = [
    ['address', smtp.address ? `${smtp.address}${ptr ? ` (${ptr})` : ''}` : null],
    // The failure once: a finding that says it (with its id and RFC) stands for it.
    ['failure', smtp.failure && !smtp.findings.some((item) => item.message.startsWith(smtp.failure!.message)) ? smtp.failure.message : null],
    ['banner', smtp.banner ? `${smtp.banner.code} ${smtp.banner.text}` : null],
    [smtp.ehlo?.command ?? 'EHLO', smtp.ehlo ? `${smtp.ehlo.code} ${smtp.ehlo.text.split('\n')[0]}` : null],
    ['extensions', extensions && extensions.keywords.length > 0 ? extensions.keywords.join(' ') : null],
    ['size limit', extensions?.size_limit_bytes ? `${grouped(extensions.size_limit_bytes)} bytes` : null],
    ['TLS', tlsText(smtp)],
    ...certificateFacts(smtp),
    ['DANE', daneText(smtp)],
    ['AUTH', authText(smtp)],
    ...envelopeFacts(smtp),
    // A failure's stage is in the headline.
    ['stopped at', smtp.completed || smtp.failure ? null : smtp.stopped_at],
    ['total time', `${smtp.timings.total_ms} ms`],
  ];
  return sections(headline(ctx, `${smtp.host} port ${smtp.port} SMTP`, verdict.text, verdict.tone, ': '), factList(ctx, facts), findingsBlock(ctx, smtp.findings));
}

export const SMTP_VIEW: HumanView = {
  block: smtpBlock,
  table: {
    columns: [
      { header: 'host', priority: 0, wrap: true },
      { header: 'port', priority: 2 },
      { header: 'address', priority: 3 },
      { header: 'TLS', priority: 1, wrap: true },
      { header: 'findings', priority: 0, wrap: true },
    ],
    cells: (value) => {
      const smtp = value as SmtpResult;
      const tls = smtp.tls.established ? smtp.tls.protocol ?? 'yes' : smtp.tls.offered === null ? 'unknown' : smtp.tls.offered ? 'failed' : 'no';
      const verdict = smtp.failure ? `${smtp.failure.code} at ${smtp.failure.stage}` : findingCounts(smtp.findings).text;
      return [smtp.host, String(smtp.port), smtp.address ?? '', tls, verdict];
    },
    key: (value) => (value as SmtpResult).host,
  },
};
