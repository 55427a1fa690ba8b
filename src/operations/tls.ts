import type { FastifyRequest } from 'fastify';
import type { FailOn } from '../cli/fail-on.js';
import type { Finding } from '../engine/findings.js';
import type { TlsCertificateSummary, TlsChainCertificate, TlsDane, TlsProtocols, TlsResult, StarttlsProtocol } from '../engine/tls/tls-result.js';
// The record module, not probe-tls.js: the probe (node:tls, the ASN.1 parsers) loads only when a probe runs.
import { DEFAULT_EXPIRY_DAYS, STARTTLS_PROTOCOLS } from '../engine/tls/tls-result.js';
import { NetintelError } from '../errors.js';
import { recordFromSchema } from './declare-record.js';
import { arrayOf, bool, described, eg, int, nullable, oneOfStrings, record, ref, str, strings } from './json-schema.js';
import type { TrustAnchor } from '../engine/dns/dnssec/trust-anchor.js';
import { defineOperation } from './operation.js';
import { oneRecordEach } from './outcomes.js';

interface TlsSettings {
  starttls: StarttlsProtocol | null;
  /** `--ca`: PEM certificates trusted on top of the bundled roots (local runs only). */
  ca: string[];
  expiryDays: number;
  versions: boolean;
  dane: boolean;
  /** DANE: the records of the trust anchor file (`--trust-anchor`, NETINTEL_TRUST_ANCHOR), or undefined for the IANA root KSKs. */
  trustAnchor: TrustAnchor | undefined;
  failOn: FailOn | undefined;
}

const SUPPORT = oneOfStrings(['accepted', 'refused', 'not_tried', 'failed']);

/** The record of `netintel tls` (docs/commands/tls.md): its JSON Schema is where its columns come from. */
const TLS_RECORD = record<TlsResult>(
  {
    kind: { const: 'tls' },
    target: described(eg(str, 'www.example.com'), 'The target as given.'),
    host: described(eg(str, 'www.example.com'), 'The host: a domain name (ASCII form) or an IP address.'),
    port: eg(int, 443),
    address: described(nullable(str), 'The address connected to, or null when no connection was had.'),
    starttls: described(nullable(oneOfStrings(STARTTLS_PROTOCOLS)), 'The STARTTLS protocol spoken before the handshake, or null for TLS on connect.'),
    connected: bool,
    established: described(bool, 'The handshake completed (judged without certificate verification).'),
    protocol: described(nullable(eg(str, 'TLSv1.3')), 'The version negotiated with the widest offer.'),
    cipher: nullable(eg(str, 'TLS_AES_256_GCM_SHA384')),
    protocols: described(
      nullable(record<TlsProtocols>({ tls1_0: SUPPORT, tls1_1: SUPPORT, tls1_2: SUPPORT, tls1_3: SUPPORT })),
      'Each version tried on a connection of its own: accepted, refused, not_tried (this client cannot offer it), failed (no answer either way); null with --no-versions.',
    ),
    certificate: nullable(
      record<TlsCertificateSummary>({
        subject: eg(str, 'CN=www.example.com'),
        issuer: str,
        valid_to: described(str, 'ISO 8601.'),
        days_left: described(int, 'Whole days from now to valid_to; negative once expired.'),
        checked_name: described(str, 'The name checked against the certificate (RFC 6125).'),
        hostname_match: bool,
        trusted: described(bool, 'The chain leads to a trust anchor (the bundled roots, or --ca), judged apart from the dates.'),
        self_signed: bool,
        chain_incomplete: described(bool, 'The chain stops before a trust anchor: an intermediate certificate is missing (or the issuer is unknown).'),
        verify_error: described(nullable(str), 'OpenSSL\'s verification error, or null; when OpenSSL names only a date, the first fault of the chain apart from the dates, under OpenSSL\'s name.'),
        ocsp_stapled: described(bool, 'An OCSP response was stapled to the handshake (RFC 6066 §8).'),
        ocsp_status: described(
          nullable(oneOfStrings(['good', 'revoked', 'unknown', 'invalid', 'unchecked'])),
          'What the stapled OCSP response says of the certificate once verified (RFC 6960 §3.2): good, revoked or unknown; invalid when it does not verify (clients ignore it); unchecked when the chain lacks the issuer to check it against; null when nothing was stapled.',
        ),
        embedded_scts: described(int, 'Certificate Transparency SCTs embedded in the certificate (RFC 6962 §3.3).'),
      }),
    ),
    chain: described(
      arrayOf(
        record<TlsChainCertificate>({
          subject: str,
          issuer: str,
          san: strings,
          key_type: nullable(eg(str, 'ec')),
          key_bits: nullable(eg(int, 256)),
          signature_algorithm: eg(str, 'ecdsa-with-SHA256'),
          valid_from: str,
          valid_to: str,
          days_left: int,
          self_signed: bool,
          trust_anchor: bool,
          embedded_scts: int,
          fingerprint_sha256: str,
        }),
      ),
      'The chain as the server sent it, leaf first, completed by the trust anchor that issued its last certificate.',
    ),
    dane: described(
      nullable(
        record<TlsDane>({
          verdict: oneOfStrings(['matched', 'mismatch', 'unusable', 'no-tls', 'not-applicable', 'failed']),
          tlsa_name: eg(str, '_443._tcp.www.example.com'),
          records: int,
          dnssec: str,
          error: described(nullable(str), 'Why the verdict is failed (the lookup failed, DNSSEC is bogus, or records were found and their DNSSEC could not be decided), or null.'),
        }),
      ),
      'DANE (RFC 6698): the TLSA records of _<port>._tcp.<host> against the chain; null for an IP address or with --no-dane.',
    ),
    findings: arrayOf(ref('Finding')),
    failure: described(
      nullable(record<NonNullable<TlsResult['failure']>>({ code: oneOfStrings(['timeout', 'unreachable', 'upstream', 'tls']), message: str })),
      'Why no TLS session could be had, or null.',
    ),
  },
  { description: 'The TLS of a service: its certificate chain and how it validates, the protocol versions it accepts, OCSP stapling, SCTs and DANE, with findings.' },
);

/** `netintel tls`: certificates and protocols of any TLS service, for people and for cron. */
export const TLS = defineOperation<TlsSettings, TlsResult>()({
  name: 'tls',
  defaults: { starttls: null, ca: [], expiryDays: DEFAULT_EXPIRY_DAYS, versions: true, dane: true, trustAnchor: undefined, failOn: undefined },
  command: {
    declare(command, kit) {
      command
        .description('check the TLS of any service: the certificate chain and its validation, expiry, protocol versions, OCSP stapling, SCTs, DANE')
        .argument('[targets...]', 'host or host:port (default port 443, or the STARTTLS protocol\'s); read from stdin (one per line) when piped')
        .addOption(command.createOption('--starttls <protocol>', 'speak this protocol before the handshake').choices([...STARTTLS_PROTOCOLS]))
        .addOption(command.createOption('--ca <file>', 'PEM file of CA certificates to trust on top of the bundled roots'))
        .addOption(command.createOption('--expiry-days <n>', `tls_expires_soon when a certificate has fewer days left (default ${DEFAULT_EXPIRY_DAYS})`).argParser(kit.integerIn('--expiry-days', 0, 3650)))
        .addOption(command.createOption('--no-versions', 'do not try TLS 1.0 to 1.3 one by one (one connection instead of five)'))
        .addOption(command.createOption('--no-dane', 'skip the TLSA lookup'))
        .addHelpText('after', HELP)
        .addOption(kit.failOnOption());
    },
    refuseRemote(flags) {
      if (flags.ca !== undefined) throw new NetintelError('usage', 'remote mode cannot send --ca to the server: run netintel tls without --server for it');
    },
    settings: async (flags, kit) => ({
      starttls: (flags.starttls as StarttlsProtocol | undefined) ?? null,
      ca: flags.ca === undefined ? [] : kit.readCaFile(flags.ca as string, '--ca'),
      expiryDays: (flags.expiryDays as number | undefined) ?? DEFAULT_EXPIRY_DAYS,
      versions: flags.versions !== false,
      dane: flags.dane !== false,
      trustAnchor: flags.dane !== false ? await kit.trustAnchor() : undefined,
      failOn: flags.failOn as FailOn | undefined,
    }),
    run: (run) =>
      run.lookupTargets({
        targets: run.args,
        none: { usage: 'tls needs a host or host:port: give one or more, or pipe a list in' },
        failOn: { level: run.settings.failOn, findings: (result) => result.findings },
        coverage: tlsCoverage,
      }),
  },
  async lookup(ctx, settings) {
    // node:tls, the certificate parser and the DANE code load only when this command runs.
    const { probeTls } = await import('../engine/tls/probe-tls.js');
    return oneRecordEach((target) =>
      probeTls(ctx, { target, starttls: settings.starttls, ca: settings.ca, expiryDays: settings.expiryDays, versions: settings.versions, dane: settings.dane, ...(settings.trustAnchor ? { daneOptions: { trustAnchors: settings.trustAnchor } } : {}) }),
    );
  },
  record: recordFromSchema({
    name: 'TlsResult',
    schema: TLS_RECORD,
    kind: 'tls',
    identity: ['target'],
    tableColumns: ['target', 'protocol', 'certificate.valid_to', 'certificate.days_left', 'findings'],
    mainValue: ['certificate.days_left'],
    presentColumn: (value, column) => {
      const result = value as TlsResult;
      if (column === 'findings') return problemIds(result.findings);
      if (column === 'chain') return result.chain.map((each) => each.subject).join(' | ');
      return column.split('.').reduce<unknown>((at, key) => (at === null || typeof at !== 'object' ? undefined : (at as Record<string, unknown>)[key]), result);
    },
    view: async () => (await import('../output/human/tls-view.js')).TLS_VIEW,
  }),
  api: {
    method: 'GET',
    path: '/api/tls-check',
    feature: null,
    query: (target, settings) => ({
      host: target ?? undefined,
      starttls: settings.starttls ?? undefined,
      expiry_days: settings.expiryDays === DEFAULT_EXPIRY_DAYS ? undefined : String(settings.expiryDays),
      versions: settings.versions ? undefined : 'false',
      dane: settings.dane ? undefined : 'false',
    }),
    route: () => ({
      network: true,
      operationId: 'getTlsCheck',
      summary: 'TLS of a service: certificate chain, expiry, protocol versions, OCSP stapling, SCTs, DANE',
      description:
        'Connects to `host` (`host:port`, default port 443 or the STARTTLS protocol\'s), speaks the STARTTLS preamble of `starttls` when given, ' +
        'and reports the certificate chain, its validation against the server\'s bundled roots, the versions TLS 1.0 to 1.3 the server accepts, ' +
        'OCSP stapling, embedded SCTs and DANE, with findings. The host is resolved once and the checked address is the one connected to; ' +
        'private, loopback, link-local and metadata addresses, and ports other than the TLS service ports, are refused.',
      querystring: {
        type: 'object',
        required: ['host'],
        properties: {
          host: { type: 'string', minLength: 1, maxLength: 300, description: 'Host name or address, optionally with `:port` (`[v6]:port` for IPv6).' },
          port: { type: 'integer', minimum: 1, maximum: 65535, description: 'The port, when `host` does not carry one.' },
          starttls: { type: 'string', enum: [...STARTTLS_PROTOCOLS], description: 'The protocol to speak before the handshake.' },
          expiry_days: { type: 'integer', minimum: 0, maximum: 3650, default: DEFAULT_EXPIRY_DAYS, description: '`tls_expires_soon` below this many days left.' },
          versions: { type: 'boolean', default: true, description: 'Try TLS 1.0 to 1.3 one by one.' },
          dane: { type: 'boolean', default: true, description: 'Look up and match TLSA records.' },
        },
      },
      responseDescription: 'The TLS record of `netintel tls -f json`.',
      examples: [{ query: '?host=www.example.com' }, { query: '?host=mail.example.com:587&starttls=smtp' }],
      handler: async (request: FastifyRequest, _reply, api) => (await import('./tls-answer.js')).tlsCheck(request, api),
    }),
  },
});

/**
 * How far a TLS check could run: nothing without a TLS session (its
 * failure's code); else in full, or in part when a finding says what could
 * not be checked (DANE when the TLSA lookup failed), as any record's.
 */
function tlsCoverage(result: TlsResult): { checked: 'all' | 'none'; failure: { code: string } | null } {
  return result.failure !== null ? { checked: 'none', failure: result.failure } : { checked: 'all', failure: null };
}

/** The problems of a record (errors and warnings) by id, for CSV cells and tables. */
function problemIds(findings: readonly Finding[]): string {
  return findings
    .filter((finding) => finding.severity === 'error' || finding.severity === 'warning')
    .map((finding) => finding.id)
    .join(' ');
}

const HELP = [
  '',
  'Each target is probed on one connection, and on one more per protocol version (TLS 1.0 to 1.3, each',
  'with minVersion = maxVersion) unless --no-versions. Certificate and protocol problems are findings',
  '(exit 0, or 10 with --fail-on); no connection, a refused STARTTLS or a failed handshake exit 4 or 5',
  '(7 when only some targets failed). A list read from stdin gives one row per target in CSV.',
  'Examples:',
  '  netintel tls www.example.com',
  '  netintel tls mail.example.com:587 --starttls smtp',
  '  netintel tls imap.example.com --starttls imap --expiry-days 30',
  '  netintel tls db.internal:5432 --starttls postgres --ca internal-ca.pem',
  '  netintel tls < hosts.txt -f csv --expiry-days 21 --fail-on warning',
].join('\n');
