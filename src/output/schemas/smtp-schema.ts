import type { RecordSchema } from '../record-schema.js';
import { getPath } from '../record-schema.js';
import { FINDINGS_CSV } from '../findings-columns.js';

interface FindingLike {
  id: string;
  severity: string;
  message: string;
}

interface TranscriptLineLike {
  at_ms: number;
  direction: 'sent' | 'received' | 'info';
  tls: boolean;
  text: string;
}

interface ReplyLike {
  code: number;
  text: string;
}

const CERTIFICATE_COLUMNS = [
  'tls.certificate.subject',
  'tls.certificate.issuer',
  'tls.certificate.san',
  'tls.certificate.valid_from',
  'tls.certificate.valid_to',
  'tls.certificate.days_left',
  'tls.certificate.expired',
  'tls.certificate.not_yet_valid',
  'tls.certificate.hostname_match',
  'tls.certificate.checked_name',
  'tls.certificate.trusted',
  'tls.certificate.self_signed',
  'tls.certificate.verify_error',
  'tls.certificate.fingerprint_sha256',
  'tls.certificate.chain',
];

const DANE_COLUMNS = [
  'dane.tlsa.host',
  'dane.tlsa.port',
  'dane.tlsa.name',
  'dane.tlsa.tried',
  'dane.tlsa.aliases',
  'dane.tlsa.status',
  'dane.tlsa.records',
  'dane.tlsa.ttl_seconds',
  'dane.tlsa.dnssec.status',
  'dane.tlsa.dnssec.reason',
  'dane.tlsa.error.code',
  'dane.tlsa.error.message',
  'dane.tlsa.resolver',
  'dane.dnssec.status',
  'dane.dnssec.reason',
  'dane.matches',
  'dane.verdict',
];

interface TlsaLike {
  usage: number;
  selector: number;
  matching_type: number;
  data: string;
}

const ENVELOPE_COLUMNS = [
  'envelope.from',
  'envelope.to',
  'envelope.authenticated',
  'envelope.mail',
  'envelope.rcpt',
  'envelope.relay_test',
  'envelope.relay_verdict',
];

/**
 * The transcript in swaks' notation: ` ->` sent, `<- ` received, ` ~>` and
 * `<~ ` the same inside TLS, `===` netintel's notes; each line with its
 * time since the probe started.
 */
export function presentTranscript(lines: readonly TranscriptLineLike[]): string {
  return lines
    .map((line) => {
      const marker =
        line.direction === 'info' ? '===' : line.direction === 'sent' ? (line.tls ? ' ~>' : ' ->') : line.tls ? '<~ ' : '<- ';
      return `${line.at_ms.toFixed(1).padStart(8)} ms ${marker} ${line.text}`;
    })
    .join('\n');
}

/** One finding per line: severity, id, message. */
export function presentFindings(findings: readonly FindingLike[]): string {
  return findings.map((item) => `${item.severity.padEnd(7)} ${item.id}: ${item.message}`).join('\n');
}

/**
 * Columns of the SMTP record (`netintel smtp`, GET /api/smtp-test). In CSV
 * and table views lists are joined, replies read `code text`, findings and
 * the transcript are one entry per line; json, ndjson and xml keep the
 * structure.
 */
export const SMTP_SCHEMA: RecordSchema = {
  kind: 'smtp',
  mainValue: ['connected'],
  columns: [
    'host',
    'port',
    'address',
    'tls_mode',
    'ehlo_name',
    'checked_at',
    'connected',
    'failure.code',
    'failure.stage',
    'failure.message',
    'stopped_at',
    'completed',
    'banner.code',
    'banner.text',
    'banner.hostname',
    'ehlo.command',
    'ehlo.code',
    'ehlo.hostname',
    'ehlo.text',
    'extensions.keywords',
    'extensions.size',
    'extensions.size_limit_bytes',
    'extensions.pipelining',
    'extensions.eight_bit_mime',
    'extensions.smtp_utf8',
    'extensions.starttls',
    'extensions.chunking',
    'extensions.dsn',
    'extensions.enhanced_status_codes',
    'extensions.require_tls',
    'extensions.auth',
    'tls.offered',
    'tls.method',
    'tls.established',
    'tls.protocol',
    'tls.cipher',
    'tls.error',
    ...CERTIFICATE_COLUMNS,
    'auth.mechanisms_before_tls',
    'auth.mechanisms_after_tls',
    'auth.tested',
    'auth.result',
    'auth.reply',
    'auth.skipped_reason',
    ...ENVELOPE_COLUMNS,
    'reverse_dns.names',
    'reverse_dns.forward_confirmed',
    ...DANE_COLUMNS,
    'timings.dns_ms',
    'timings.connect_ms',
    'timings.banner_ms',
    'timings.ehlo_ms',
    'timings.tls_ms',
    'timings.ehlo_after_tls_ms',
    'timings.auth_ms',
    'timings.mail_ms',
    'timings.rcpt_ms',
    'timings.total_ms',
    'findings',
    'transcript',
  ],
  groups: {
    certificate: CERTIFICATE_COLUMNS,
    relay: ENVELOPE_COLUMNS,
    ptr: ['reverse_dns.names', 'reverse_dns.forward_confirmed'],
    dane: DANE_COLUMNS,
  },
  identity: ['host', 'port', 'address'],
  tableColumns: ['host', 'port', 'address', 'connected', 'banner.code', 'tls.established', 'tls.certificate.trusted', 'auth.result', 'timings.total_ms', 'findings'],
  csvFlat: FINDINGS_CSV,
  presentColumn: (record, column) => {
    const value = getPath(record, column);
    if (value === null || value === undefined) return value;
    if (column === 'findings') return presentFindings(value as FindingLike[]);
    if (column === 'transcript') return presentTranscript(value as TranscriptLineLike[]);
    if (column === 'tls.certificate.chain') {
      return (value as Array<{ subject: string; issuer: string; valid_to: string }>)
        .map((item, i) => `${i}: ${item.subject} (issuer ${item.issuer}, until ${item.valid_to.slice(0, 10)})`)
        .join('\n');
    }
    if (column === 'dane.tlsa.records') {
      return (value as TlsaLike[]).map((item) => `${item.usage} ${item.selector} ${item.matching_type} ${item.data}`).join('\n');
    }
    if (column === 'dane.matches') {
      return (value as Array<{ record: TlsaLike & { label: string }; matched: boolean; reason: string | null }>)
        .map((item) => `${item.record.label}: ${item.matched ? 'matches' : `no (${item.reason ?? 'no match'})`}`)
        .join('\n');
    }
    if (column === 'auth.reply' || column === 'envelope.mail' || column === 'envelope.rcpt') {
      const reply = value as ReplyLike;
      return `${reply.code} ${reply.text.split('\n')[0] ?? ''}`;
    }
    if (Array.isArray(value)) return value.join(column === 'tls.certificate.san' || column === 'reverse_dns.names' ? ', ' : ' ');
    return value;
  },
};
