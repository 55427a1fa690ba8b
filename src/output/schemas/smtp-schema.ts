import type { RecordSchema } from '../record-schema.js';
import { getPath } from '../record-schema.js';
import { FINDINGS_CSV } from '../findings-columns.js';

interface FindingLike {
  id: string;
  severity: string;
  message: string;
}

interface TranscriptLineLike {
  atMs: number;
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
  'tls.certificate.validFrom',
  'tls.certificate.validTo',
  'tls.certificate.daysLeft',
  'tls.certificate.expired',
  'tls.certificate.notYetValid',
  'tls.certificate.hostnameMatch',
  'tls.certificate.checkedName',
  'tls.certificate.trusted',
  'tls.certificate.selfSigned',
  'tls.certificate.verifyError',
  'tls.certificate.fingerprintSha256',
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
  'dane.tlsa.ttlSeconds',
  'dane.tlsa.dnssec.status',
  'dane.tlsa.dnssec.reason',
  'dane.tlsa.error',
  'dane.tlsa.resolver',
  'dane.dnssec.status',
  'dane.dnssec.reason',
  'dane.matches',
  'dane.verdict',
];

interface TlsaLike {
  usage: number;
  selector: number;
  matchingType: number;
  data: string;
}

const ENVELOPE_COLUMNS = [
  'envelope.from',
  'envelope.to',
  'envelope.authenticated',
  'envelope.mail',
  'envelope.rcpt',
  'envelope.relayTest',
  'envelope.relayVerdict',
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
      return `${line.atMs.toFixed(1).padStart(8)} ms ${marker} ${line.text}`;
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
  columns: [
    'host',
    'port',
    'address',
    'tlsMode',
    'ehloName',
    'checkedAt',
    'connected',
    'failure.code',
    'failure.stage',
    'failure.message',
    'stoppedAt',
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
    'extensions.sizeLimitBytes',
    'extensions.pipelining',
    'extensions.eightBitMime',
    'extensions.smtpUtf8',
    'extensions.starttls',
    'extensions.chunking',
    'extensions.dsn',
    'extensions.enhancedStatusCodes',
    'extensions.requireTls',
    'extensions.auth',
    'tls.offered',
    'tls.method',
    'tls.established',
    'tls.protocol',
    'tls.cipher',
    'tls.error',
    ...CERTIFICATE_COLUMNS,
    'auth.mechanismsBeforeTls',
    'auth.mechanismsAfterTls',
    'auth.tested',
    'auth.result',
    'auth.reply',
    'auth.skippedReason',
    ...ENVELOPE_COLUMNS,
    'reverseDns.names',
    'reverseDns.forwardConfirmed',
    ...DANE_COLUMNS,
    'timings.dnsMs',
    'timings.connectMs',
    'timings.bannerMs',
    'timings.ehloMs',
    'timings.tlsMs',
    'timings.ehloAfterTlsMs',
    'timings.authMs',
    'timings.mailMs',
    'timings.rcptMs',
    'timings.totalMs',
    'findings',
    'transcript',
  ],
  groups: {
    certificate: CERTIFICATE_COLUMNS,
    relay: ENVELOPE_COLUMNS,
    ptr: ['reverseDns.names', 'reverseDns.forwardConfirmed'],
    dane: DANE_COLUMNS,
  },
  identity: ['host', 'port', 'address'],
  tableColumns: ['host', 'port', 'address', 'connected', 'banner.code', 'tls.established', 'tls.certificate.trusted', 'auth.result', 'timings.totalMs', 'findings'],
  csvFlat: FINDINGS_CSV,
  presentColumn: (record, column) => {
    const value = getPath(record, column);
    if (value === null || value === undefined) return value;
    if (column === 'findings') return presentFindings(value as FindingLike[]);
    if (column === 'transcript') return presentTranscript(value as TranscriptLineLike[]);
    if (column === 'tls.certificate.chain') {
      return (value as Array<{ subject: string; issuer: string; validTo: string }>)
        .map((item, i) => `${i}: ${item.subject} (issuer ${item.issuer}, until ${item.validTo.slice(0, 10)})`)
        .join('\n');
    }
    if (column === 'dane.tlsa.records') {
      return (value as TlsaLike[]).map((item) => `${item.usage} ${item.selector} ${item.matchingType} ${item.data}`).join('\n');
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
    if (Array.isArray(value)) return value.join(column === 'tls.certificate.san' || column === 'reverseDns.names' ? ', ' : ' ');
    return value;
  },
};
