import { EMAIL_CHECKS, EMAIL_TEST_TYPES } from '../engine/mail/email-checks.js';
import type { AsnResult } from '../engine/asn/lookup-asn.js';
import type { BlacklistMx, BlacklistMxHost, BlacklistResult, BlacklistSkippedZone, BlacklistVerdict, BlacklistZoneResult } from '../engine/blacklist/blacklist-result.js';
import type { DnsblReturnCode } from '../engine/blacklist/dnsbl-answer.js';
import type { DnsCaaData, DnsMxData, DnsResult, DnsSoaData, DnsSrvData, DnsTxtData, OtherDnsAnswer } from '../engine/dns/dns-result.js';
import { DNS_RECORD_TYPES } from '../engine/dns/dns-type.js';
import type { Finding } from '../engine/findings.js';
import type { IpInfoRecord, IpLocation, IpNetwork, IpRecordMeta } from '../engine/ip/ip-record.js';
import type { DmarcReportDestination, DmarcResult, DmarcTags } from '../engine/mail/check-dmarc.js';
import type { DaneHost, EmailCheckError, EmailReport, FindingSummary } from '../engine/mail/check-email.js';
import type { CheckFailure } from '../engine/check-failure.js';
import type { MailDnssecCheck, MailDnssecResult } from '../engine/mail/check-mail-dnssec.js';
import type { DkimResult, DkimSelectorResult } from '../engine/mail/check-dkim.js';
import type { DkimKeyRecord } from '../engine/mail/dkim-record.js';
import type { DkimPublicKey } from '../engine/mail/dkim-key.js';
import type { BimiCertificate, BimiDmarcPrerequisites, BimiLogo, BimiResult } from '../engine/mail/check-bimi.js';
import type { BimiTags } from '../engine/mail/bimi-record.js';
import type { SvgFacts } from '../engine/mail/bimi-svg.js';
import type { MarkCertificate } from '../engine/mail/bimi-certificate.js';
import type { MailServerCheck } from '../engine/mail/check-mail-servers.js';
import type { MtaStsPolicy, MtaStsResult } from '../engine/mail/check-mta-sts.js';
import type { SpfNode, SpfResult } from '../engine/mail/check-spf.js';
import type { TlsRptResult } from '../engine/mail/check-tls-rpt.js';
import type { FailureJson } from '../engine/mail/mail-errors.js';
import type { MxAddress, MxHost, MxResult } from '../engine/mail/resolve-mx.js';
import type { SpfEvaluation, SpfMatch, SpfPathStep } from '../engine/mail/spf-evaluate.js';
import type { SpfTerm } from '../engine/mail/spf-record.js';
import type { VpnResult } from '../engine/security/check-vpn.js';
import type { RpkiValidity, RpkiVrp } from '../engine/rpki/route-validity.js';
import type { SecurityVerdict } from '../engine/security/security-signals.js';
import { SIGNAL_NAMES, type SecurityEvidence, type SignalCoverage } from '../engine/security/signals.js';
import { THREAT_LEVELS, THREAT_RULES } from '../engine/security/threat-rule.js';
import type {
  SmtpAuth,
  SmtpBanner,
  SmtpCertificate,
  SmtpChainCertificate,
  SmtpEhlo,
  SmtpEnvelope,
  SmtpExtensions,
  SmtpFailure,
  SmtpReply,
  SmtpResult,
  SmtpReverseDns,
  SmtpTimings,
  SmtpTls,
  SmtpTranscriptLine,
} from '../engine/smtp/smtp-result.js';
import { SMTP_AUTH_MECHANISMS, SMTP_STAGES, type SmtpDane } from '../engine/smtp/smtp-result.js';
import type { RrsetAuthentication, TlsaLookup, TlsaMatch } from '../engine/smtp/dane.js';
import type { TlsaRecord } from '../engine/smtp/tlsa-record.js';
import { ERROR_CODES, type ErrorCode } from '../errors.js';

import { arrayOf, bool, described, eg, int, nullable, num, oneOfStrings, record, ref, str, strings, type JsonSchema } from './json-schema.js';

/**
 * JSON Schemas (2020-12, as OpenAPI 3.1 uses them) of the records the API
 * answers with, written against the engine's result types (json-schema.ts).
 * Each operation names its record's schema (src/operations/<name>.ts); the
 * OpenAPI document is built from those, and the contract test validates
 * every answer the tests receive against it, so a field added to a result
 * type cannot go undocumented.
 */

const FINDING = record<Finding>(
  {
    id: described(str, 'Stable identifier, snake_case (spf_lookup_limit).'),
    severity: described(
      oneOfStrings(['error', 'warning', 'unknown', 'info', 'pass']),
      'unknown: the check behind the finding could not run (its lookups timed out or failed), so nothing is known; never a problem of what was checked.',
    ),
    message: str,
    rfc: nullable(str),
    evidence: { type: ['object', 'null'], description: 'JSON-safe facts that produced the finding.' },
  },
  { description: 'One finding of a check: a stable id, a severity, a message, the RFC section behind it, the evidence.' },
);
const findings = arrayOf(ref('Finding'));

const FAILURE = record<FailureJson>({ code: str, message: str });

const CHECK_FAILURE = record<CheckFailure>(
  {
    code: oneOfStrings(Object.keys(ERROR_CODES)),
    reason: described(eg(str, 'DNS did not answer'), 'What went wrong, in a few words.'),
    message: described(str, 'The first error with that code, as its lookup reported it.'),
  },
  { description: 'Why checks could not run: the most frequent error code among them, and what it means.' },
);

const EVIDENCE = record<SecurityEvidence>({
  signal: oneOfStrings(SIGNAL_NAMES),
  source: str,
  matched: str,
  provider: nullable(str),
  updated: nullable(str),
});

const THREAT_LEVEL = described(
  nullable(oneOfStrings(THREAT_LEVELS)),
  'low, medium or high; unknown when no Tor exit or open proxy list was consulted (see coverage.missing); null when nothing was consulted.',
);
const COVERAGE = record<SignalCoverage>(
  {
    consulted: described(arrayOf(oneOfStrings(SIGNAL_NAMES)), 'The signals checked, whether or not they fired.'),
    missing: described(arrayOf(oneOfStrings(SIGNAL_NAMES)), 'The signals no installed feed gives (netintel data update installs them): a flag they set may be null.'),
  },
  { description: 'Which signals the verdict heard, and which it could not.' },
);
const THREAT_RULE = nullable(oneOfStrings(THREAT_RULES.map((row) => row.rule)));
const META = record<IpRecordMeta>(
  { data: { type: 'object', additionalProperties: nullable(str), description: 'Dataset name -> its date (ISO 8601), or null.' } },
  { description: 'Provenance: the datasets the answer used and their dates.' },
);

const RPKI_VALIDITY = record<RpkiValidity>(
  {
    status: described(
      oneOfStrings(['valid', 'invalid', 'not_found', 'unknown']),
      'RFC 6811 §2: valid (a covering ROA names the origin and allows the length), invalid (covering ROAs, none matching), not_found (no covering ROA); unknown: no RPKI dataset installed.',
    ),
    reason: described(
      nullable(oneOfStrings(['origin_not_authorised', 'max_length_exceeded', 'no_dataset'])),
      'invalid: origin_not_authorised (no covering ROA names the origin AS) or max_length_exceeded (one does, for shorter routes); unknown: no_dataset.',
    ),
    route: described(nullable(eg(str, '8.8.8.0/24')), 'The route validated (the announced block holding the address); null when unknown.'),
    origin_asn: described(nullable(eg(int, 15169)), 'The origin AS of the route; null when unknown.'),
    vrps: described(
      arrayOf(
        record<RpkiVrp>({
          asn: eg(int, 15169),
          prefix: eg(str, '8.8.8.0/24'),
          max_length: eg(int, 24),
          ta: described(nullable(eg(str, 'arin')), 'The trust anchor the ROA was validated under.'),
          matches: described(bool, 'Names the origin AS and allows the route length.'),
        }),
      ),
      'The validated ROA payloads covering the route, matching ones first, at most 32.',
    ),
  },
  { description: 'The RPKI route-origin validity of the route announcing an address (RFC 6811).' },
);

const SECURITY = record<SecurityVerdict>({
  is_vpn: nullable(bool),
  is_proxy: nullable(bool),
  is_tor: nullable(bool),
  is_hosting: nullable(bool),
  threat_level: THREAT_LEVEL,
  threat_rule: described(THREAT_RULE, 'The rule row that set threat_level.'),
  provider: described(nullable(str), 'The operator, when known.'),
  evidence: arrayOf(ref('SecurityEvidence')),
  coverage: COVERAGE,
});

export const IP_RECORD: JsonSchema = {
  ...record<IpInfoRecord & { note: string }>(
    {
      ip: eg(str, '8.8.8.8'),
      type: oneOfStrings(['ipv4', 'ipv6']),
      location: record<IpLocation>({
        country: nullable(eg(str, 'United States')),
        country_code: nullable(eg(str, 'US')),
        region: nullable(eg(str, 'California')),
        region_code: nullable(eg(str, 'US-CA')),
        city: nullable(eg(str, 'Mountain View')),
        latitude: nullable(eg(num, 37.422)),
        longitude: nullable(eg(num, -122.085)),
        timezone: nullable(eg(str, 'America/Los_Angeles')),
        zip: nullable(eg(str, '94043')),
      }),
      network: record<IpNetwork>({
        isp: nullable(eg(str, 'Google LLC')),
        organization: nullable(eg(str, 'Google LLC')),
        asn: nullable(eg(int, 15169)),
        domain: nullable(eg(str, 'google.com')),
        rpki: described(nullable(ref('RpkiValidity')), 'null when no AS announces the address.'),
      }),
      security: SECURITY,
      reserved: described(nullable(str), 'The special-purpose block of the address (e.g. "private (RFC 1918)"), or null.'),
      meta: META,
      note: described(str, 'Free tier only: which groups need a key.'),
    },
    {
      description:
        'The IP information record. null: the data has no value. On the free tier network and security are left out and note says so; ' +
        'POST /api/bulk with fields keeps only the groups named.',
      required: ['ip', 'type', 'reserved', 'meta'],
    },
  ),
  // A free-tier answer (the one with a note) never carries the premium groups.
  dependentSchemas: { note: { properties: { network: false, security: false } } },
};

export const ASN_RECORD = record<AsnResult>({
  kind: { const: 'asn' },
  query: described(eg(str, 'AS15169'), 'The input as given.'),
  asn: eg(int, 15169),
  organization: nullable(eg(str, 'GOOGLE')),
  ip: described(nullable(str), 'The address asked for (IP queries).'),
  route: described(nullable(str), 'The announced CIDR holding ip (IP queries).'),
  rpki: described(nullable(ref('RpkiValidity')), 'The RPKI validity of route with asn as origin (IP queries), else null.'),
  prefixes: nullable(record<NonNullable<AsnResult['prefixes']>>({ ipv4: strings, ipv6: strings })),
  counts: nullable(
    record<NonNullable<AsnResult['counts']>>({
      ipv4_prefixes: int,
      ipv6_prefixes: int,
      ipv4_addresses: int,
      ipv6_addresses: described({ type: 'string', pattern: '^[0-9]+$' }, 'Decimal (exceeds 2^53).'),
    }),
  ),
});

const DNS_DATA: JsonSchema = {
  description: 'A, AAAA, CNAME, NS, PTR and types netintel does not model: text; MX, SOA, TXT, CAA, SRV: an object.',
  anyOf: [
    str,
    record<DnsMxData>({ preference: int, exchange: str }),
    record<DnsSoaData>({ mname: str, rname: str, serial: int, refresh: int, retry: int, expire: int, minimum: int }),
    record<DnsTxtData>({ text: str, strings }),
    record<DnsCaaData>({ flags: int, tag: str, value: str }),
    record<DnsSrvData>({ priority: int, weight: int, port: int, target: str }),
  ],
};

export const DNS_RECORD = record<DnsResult>({
  kind: { const: 'dns' },
  target: described(eg(str, 'example.com'), 'The normalised input: the ASCII domain, or the address of a reverse lookup.'),
  domain: described(eg(str, 'example.com'), 'The name queried, ASCII (punycode).'),
  domain_unicode: eg(str, 'example.com'),
  type: oneOfStrings(DNS_RECORD_TYPES),
  status: oneOfStrings(['answer', 'nodata', 'nxdomain']),
  rcode: str,
  answers: arrayOf(record<OtherDnsAnswer>({ name: str, type: str, ttl_seconds: int, data: DNS_DATA })),
  ignored_answers: described(int, 'Records of the answer section for names off the CNAME/DNAME chain of the name asked, or of a type not asked (neither the type nor a CNAME, nor an RRSIG over them): not answers, left out of `answers`.'),
  resolver: eg(str, '192.0.2.53:53'),
  transport: oneOfStrings(['udp', 'tcp', 'https', 'tls']),
  latency_ms: num,
});

const DNSSEC_VERDICT = record<RrsetAuthentication>(
  {
    status: oneOfStrings(['secure', 'insecure', 'bogus', 'indeterminate']),
    reason: nullable(str),
    error: described(nullable(FAILURE), 'A question of the validation that got no answer (DNSSEC not checked); null otherwise.'),
  },
  { required: ['status', 'reason'] },
);
const TLSA_RECORD = record<TlsaRecord>({
  usage: int,
  selector: int,
  matching_type: int,
  data: described(str, 'The certificate association data, lower-case hex.'),
  label: eg(str, 'DANE-EE(3) SPKI(1) SHA2-256(1)'),
  unusable: nullable(str),
});
const TLSA_LOOKUP = record<TlsaLookup>({
  host: str,
  port: int,
  name: eg(str, '_25._tcp.mx.example.com'),
  tried: strings,
  aliases: strings,
  status: oneOfStrings(['answer', 'nodata', 'nxdomain', 'failed']),
  records: arrayOf(TLSA_RECORD),
  ttl_seconds: nullable(int),
  dnssec: DNSSEC_VERDICT,
  error: nullable(FAILURE),
  resolver: nullable(str),
});
const TLSA_MATCHES = arrayOf(record<TlsaMatch>({ record: TLSA_RECORD, matched: bool, depth: nullable(int), name_match: nullable(bool), reason: nullable(str) }));
const DANE_VERDICT = oneOfStrings(['matched', 'mismatch', 'unusable', 'no-tls', 'not-applicable', 'failed']);
const SMTP_DANE = record<SmtpDane>({ tlsa: TLSA_LOOKUP, dnssec: DNSSEC_VERDICT, matches: TLSA_MATCHES, verdict: DANE_VERDICT });

const REPLY = record<SmtpReply>({ code: int, enhanced_code: nullable(str), text: str });
export const SMTP_RECORD = record<SmtpResult>({
  kind: { const: 'smtp' },
  host: eg(str, 'mx.example.com'),
  port: eg(int, 25),
  address: eg(str, '192.0.2.25'),
  tls_mode: oneOfStrings(['opportunistic', 'required', 'implicit']),
  ehlo_name: nullable(str),
  checked_at: { type: 'string', format: 'date-time' },
  connected: bool,
  failure: nullable(record<SmtpFailure>({ code: oneOfStrings(['unreachable', 'timeout', 'tls']), stage: oneOfStrings(['connect', 'banner']), message: str })),
  stopped_at: oneOfStrings([...SMTP_STAGES, 'quit']),
  completed: bool,
  banner: nullable(record<SmtpBanner>({ code: int, text: str, hostname: nullable(str) })),
  ehlo: nullable(record<SmtpEhlo>({ command: oneOfStrings(['EHLO', 'HELO']), code: int, hostname: nullable(str), text: str })),
  extensions: nullable(
    record<SmtpExtensions>({
      keywords: strings,
      size: bool,
      size_limit_bytes: nullable(int),
      pipelining: bool,
      eight_bit_mime: bool,
      smtp_utf8: bool,
      starttls: bool,
      chunking: bool,
      dsn: bool,
      enhanced_status_codes: bool,
      require_tls: bool,
      auth: strings,
    }),
  ),
  tls: record<SmtpTls>({
    offered: nullable(bool),
    method: nullable(oneOfStrings(['starttls', 'implicit'])),
    established: bool,
    protocol: nullable(str),
    cipher: nullable(str),
    error: nullable(str),
    certificate: nullable(
      record<SmtpCertificate>({
        subject: str,
        issuer: str,
        san: strings,
        valid_from: str,
        valid_to: str,
        days_left: int,
        expired: bool,
        not_yet_valid: bool,
        hostname_match: bool,
        checked_name: str,
        trusted: bool,
        self_signed: bool,
        verify_error: nullable(str),
        fingerprint_sha256: str,
        chain: arrayOf(record<SmtpChainCertificate>({ subject: str, issuer: str, valid_to: str, fingerprint_sha256: str })),
      }),
    ),
  }),
  auth: record<SmtpAuth>({
    mechanisms_before_tls: nullable(strings),
    mechanisms_after_tls: nullable(strings),
    tested: nullable(oneOfStrings(SMTP_AUTH_MECHANISMS)),
    result: nullable(oneOfStrings(['success', 'failure', 'skipped'])),
    reply: nullable(REPLY),
    skipped_reason: nullable(str),
  }),
  envelope: nullable(
    record<SmtpEnvelope>({
      from: str,
      to: str,
      authenticated: bool,
      mail: nullable(REPLY),
      rcpt: nullable(REPLY),
      relay_test: bool,
      relay_verdict: nullable(oneOfStrings(['denied', 'accepted', 'inconclusive'])),
    }),
  ),
  reverse_dns: nullable(record<SmtpReverseDns>({ names: strings, forward_confirmed: nullable(bool) })),
  dane: nullable(SMTP_DANE),
  timings: record<SmtpTimings>({
    dns_ms: nullable(num),
    connect_ms: nullable(num),
    banner_ms: nullable(num),
    ehlo_ms: nullable(num),
    tls_ms: nullable(num),
    ehlo_after_tls_ms: nullable(num),
    auth_ms: nullable(num),
    mail_ms: nullable(num),
    rcpt_ms: nullable(num),
    total_ms: num,
  }),
  findings,
  transcript: nullable(
    arrayOf(record<SmtpTranscriptLine>({ at_ms: num, direction: oneOfStrings(['sent', 'received', 'info']), tls: bool, text: str })),
  ),
});

export const MX_RECORD = record<MxResult>({
  kind: { const: 'mx' },
  domain: str,
  domain_unicode: str,
  status: oneOfStrings(['mx', 'null_mx', 'implicit', 'no_mail', 'nxdomain']),
  records: arrayOf(
    record<MxHost>({
      preference: int,
      exchange: str,
      exchange_unicode: str,
      cname: nullable(str),
      ip_literal: bool,
      addresses: arrayOf(record<MxAddress>({ address: str, family: { enum: [4, 6] }, reserved: nullable(str), ptr: nullable(strings), fcrdns: nullable(bool) })),
      error: nullable(FAILURE),
    }),
  ),
  implicit_addresses: strings,
  ttl_seconds: nullable(int),
  findings,
  resolver: str,
});

export const SPF_NODE = record<SpfNode>({
  domain: str,
  via: nullable(str),
  status: oneOfStrings(['ok', 'none', 'nxdomain', 'multiple', 'invalid', 'loop', 'error', 'not_followed']),
  record: nullable(str),
  lookups: int,
  total_lookups: int,
  void_lookups: int,
  error: nullable(FAILURE),
  children: arrayOf(ref('SpfNode')),
});

const SPF_QUALIFIER = oneOfStrings(['+', '-', '~', '?']);
export const SPF_RECORD = record<SpfResult>({
  kind: { const: 'spf' },
  domain: str,
  domain_unicode: str,
  status: oneOfStrings(['valid', 'none', 'permerror', 'temperror']),
  record: nullable(str),
  record_strings: strings,
  records: strings,
  record_octets: nullable(int),
  terms: nullable(
    arrayOf(
      record<SpfTerm>({
        position: int,
        text: str,
        kind: oneOfStrings(['mechanism', 'modifier']),
        qualifier: nullable(SPF_QUALIFIER),
        name: str,
        value: nullable(str),
        cidr4: nullable(int),
        cidr6: nullable(int),
        counts_lookup: bool,
        known: bool,
      }),
    ),
  ),
  lookups: int,
  lookup_limit: int,
  void_lookups: int,
  void_lookup_limit: int,
  tree: nullable(ref('SpfNode')),
  evaluation: nullable(
    record<SpfEvaluation>({
      ip: str,
      sender: nullable(str),
      helo: nullable(str),
      domain: str,
      result: oneOfStrings(['pass', 'fail', 'softfail', 'neutral', 'none', 'temperror', 'permerror']),
      matched: nullable(record<SpfMatch>({ mechanism: str, qualifier: SPF_QUALIFIER, domain: str, path: arrayOf(record<SpfPathStep>({ domain: str, term: str })) })),
      explanation: nullable(str),
      reason: str,
      lookups: int,
      void_lookups: int,
    }),
  ),
  findings,
  resolver: str,
});

export const DMARC_RECORD = record<DmarcResult>({
  kind: { const: 'dmarc' },
  domain: str,
  location: nullable(str),
  policy_domain: nullable(str),
  organizational_domain: nullable(str),
  inherited: bool,
  record: nullable(str),
  records: strings,
  tags: record<DmarcTags>({
    v: nullable(str),
    p: nullable(str),
    sp: nullable(str),
    np: nullable(str),
    psd: nullable(str),
    t: nullable(str),
    pct: nullable(str),
    rua: nullable(str),
    ruf: nullable(str),
    adkim: nullable(str),
    aspf: nullable(str),
    fo: nullable(str),
    rf: nullable(str),
    ri: nullable(str),
  }),
  policy: nullable(oneOfStrings(['none', 'quarantine', 'reject'])),
  percent: nullable(int),
  alignment_dkim: nullable(oneOfStrings(['r', 's'])),
  alignment_spf: nullable(oneOfStrings(['r', 's'])),
  report_destinations: arrayOf(
    record<DmarcReportDestination>({ tag: oneOfStrings(['rua', 'ruf']), uri: str, domain: nullable(str), external: bool, authorized: nullable(bool), error: nullable(FAILURE) }),
  ),
  findings,
});

export const MTA_STS_RECORD = record<MtaStsResult>({
  kind: { const: 'mta-sts' },
  domain: str,
  record: nullable(str),
  records: strings,
  id: nullable(str),
  policy_url: nullable(str),
  policy: nullable(record<MtaStsPolicy>({ version: nullable(str), mode: nullable(oneOfStrings(['enforce', 'testing', 'none'])), max_age_seconds: nullable(int), mx: strings })),
  content_type: nullable(str),
  policy_error: nullable(FAILURE),
  findings,
});

export const TLS_RPT_RECORD = record<TlsRptResult>({ kind: { const: 'tls-rpt' }, domain: str, record: nullable(str), records: strings, rua: strings, findings });

export const DKIM_RECORD = record<DkimResult>({
  kind: { const: 'dkim' },
  domain: eg(str, 'example.com'),
  domain_unicode: str,
  status: oneOfStrings(['valid', 'invalid', 'none', 'temperror']),
  probed: described(oneOfStrings(['given', 'common']), 'given: the selectors asked for; common: a list of common selectors was probed (selectors cannot be listed from DNS, so none found is not "no DKIM").'),
  selectors: arrayOf(
    record<DkimSelectorResult>({
      selector: eg(str, 'selector1'),
      name: eg(str, 'selector1._domainkey.example.com'),
      found: bool,
      cname: nullable(str),
      text: nullable(str),
      record: nullable(
        record<DkimKeyRecord>({
          tags: arrayOf({ type: 'object', properties: { name: str, value: str }, required: ['name', 'value'], additionalProperties: false }),
          version: nullable(str),
          key_type: str,
          public_key: nullable(str),
          hash_algorithms: nullable(strings),
          service_types: strings,
          flags: strings,
          testing: bool,
          strict_subdomains: bool,
          notes: nullable(str),
        }),
      ),
      key: nullable(record<DkimPublicKey>({ type: oneOfStrings(['rsa', 'ed25519']), bits: int, encoding: oneOfStrings(['spki', 'pkcs1', 'raw', 'spki-ed25519']) })),
      error: nullable({ type: 'object', properties: { code: str, message: str }, required: ['code', 'message'], additionalProperties: false }),
      findings,
    }),
  ),
  findings,
  resolver: nullable(str),
});

export const BIMI_RECORD = record<BimiResult>({
  kind: { const: 'bimi' },
  domain: eg(str, 'example.com'),
  domain_unicode: str,
  selector: eg(str, 'default'),
  status: oneOfStrings(['none', 'declined', 'fail', 'unknown', 'pass']),
  organisational_domain: str,
  location: nullable(str),
  inherited: bool,
  record: nullable(str),
  records: strings,
  tags: nullable(record<BimiTags>({ v: nullable(str), l: nullable(str), a: nullable(str), lps: nullable(str), avp: nullable(str) })),
  dmarc: record<BimiDmarcPrerequisites>({
    met: nullable(bool),
    location: nullable(str),
    policy: nullable(oneOfStrings(['none', 'quarantine', 'reject'])),
    percent: nullable(int),
    organisational_policy: nullable(str),
    subdomain_policy: nullable(str),
    error: nullable(FAILURE),
  }),
  logo: nullable(
    record<BimiLogo>({
      url: str,
      final_url: nullable(str),
      redirects: strings,
      content_type: nullable(str),
      octets: nullable(int),
      truncated: bool,
      compressed: bool,
      svg: nullable(
        record<SvgFacts>({
          root: nullable(str),
          base_profile: nullable(str),
          version: nullable(str),
          title: nullable(str),
          view_box: nullable(str),
          view_box_size: nullable({ type: 'object', properties: { width: num, height: num }, required: ['width', 'height'], additionalProperties: false }),
        }),
      ),
      error: nullable(FAILURE),
    }),
  ),
  certificate: nullable(
    record<BimiCertificate>({
      url: str,
      octets: nullable(int),
      certificate: nullable(
        record<MarkCertificate>({ certificates: int, subject: str, issuer: str, valid_from: str, valid_to: str, extensions: strings, logotype: bool }),
      ),
      error: nullable(FAILURE),
    }),
  ),
  findings,
});

const MAIL_DNSSEC_CHECK = record<MailDnssecCheck>({
  name: str,
  type: oneOfStrings(['MX', 'A']),
  status: oneOfStrings(['secure', 'insecure', 'bogus', 'indeterminate']),
  reason: nullable(str),
  signer: nullable(str),
  error: described(nullable(record<{ code: ErrorCode; message: string }>({ code: oneOfStrings(Object.keys(ERROR_CODES)), message: str })), 'The lookup that failed when the status could not be decided for want of an answer (its finding is then unknown).'),
});
const MAIL_DNSSEC_RECORD = record<MailDnssecResult>({ domain: MAIL_DNSSEC_CHECK, mx: arrayOf(MAIL_DNSSEC_CHECK), findings });

export const EMAIL_RECORD = record<EmailReport>({
  kind: { const: 'email' },
  test: oneOfStrings(EMAIL_TEST_TYPES),
  domain: described(nullable(eg(str, 'example.com')), 'The domain tested (ASCII); null for smtp with a server.'),
  domain_unicode: nullable(str),
  server: nullable(str),
  port: nullable(int),
  mx: nullable(ref('MxResult')),
  spf: nullable(ref('SpfResult')),
  dmarc: nullable(ref('DmarcResult')),
  mta_sts: nullable(ref('MtaStsResult')),
  tls_rpt: nullable(ref('TlsRptResult')),
  dkim: nullable(ref('DkimResult')),
  bimi: nullable(ref('BimiResult')),
  dnssec: described(nullable(MAIL_DNSSEC_RECORD), 'DNSSEC of the MX records and of each MX host, validated from the IANA root trust anchor.'),
  smtp: nullable(
    arrayOf(
      record<MailServerCheck>({
        host: str,
        preference: nullable(int),
        port: int,
        address: nullable(str),
        probe: nullable(ref('SmtpResult')),
        error: nullable(FAILURE),
        findings,
      }),
    ),
  ),
  dane: nullable(arrayOf(record<DaneHost>({ host: str, tlsa: TLSA_LOOKUP, dnssec: DNSSEC_VERDICT, matches: TLSA_MATCHES, verdict: DANE_VERDICT, findings }))),
  errors: arrayOf(record<EmailCheckError>({ check: oneOfStrings(EMAIL_CHECKS), code: str, message: str })),
  checked: described(
    oneOfStrings(['all', 'some', 'none']),
    'Whether the checks could run: all; some (those in errors, or parts of one with unknown findings, could not); none (the report holds no verdict).',
  ),
  failure: described(nullable(CHECK_FAILURE), 'Why checks could not run; null when all ran.'),
  findings,
  summary: record<FindingSummary>({ error: int, warning: int, unknown: int, info: int, pass: int }),
  checked_at: { type: 'string', format: 'date-time' },
});

export const VPN_RECORD = record<VpnResult>({
  kind: { const: 'vpn' },
  ip: eg(str, '198.51.100.7'),
  is_vpn: nullable(bool),
  is_proxy: nullable(bool),
  is_tor: nullable(bool),
  is_hosting: nullable(bool),
  threat_level: THREAT_LEVEL,
  threat_rule: THREAT_RULE,
  provider: nullable(str),
  evidence: arrayOf(ref('SecurityEvidence')),
  coverage: COVERAGE,
  reserved: nullable(str),
  meta: META,
});

export const BLACKLIST_RECORD = record<BlacklistResult>({
  kind: { const: 'blacklist' },
  target: eg(str, '192.0.2.1'),
  target_type: oneOfStrings(['ip', 'domain']),
  verdict: record<BlacklistVerdict>({
    status: oneOfStrings(['listed', 'clean', 'incomplete', 'unknown']),
    listed_zones: int,
    listings: int,
    checked_zones: int,
    unchecked_zones: int,
    zones: int,
    message: str,
    failure: described(
      nullable(CHECK_FAILURE),
      'Why zones (or the mail hosts) could not be checked; null when everything was. With status unknown and zones asked, nothing could be.',
    ),
  }),
  zones: arrayOf(
    record<BlacklistZoneResult>({
      zone: str,
      name: nullable(str),
      list_kind: oneOfStrings(['ip', 'domain']),
      subject: str,
      mx_hosts: strings,
      query: str,
      status: oneOfStrings(['listed', 'clean', 'refused', 'timeout', 'error']),
      return_codes: arrayOf(record<DnsblReturnCode>({ address: str, meaning: nullable(str) })),
      reason: nullable(str),
      detail: nullable(str),
      canary: oneOfStrings(['passed', 'failed', 'refused', 'timeout', 'error']),
      latency_ms: num,
      resolver: nullable(str),
      delist_url: nullable(str),
    }),
  ),
  skipped: arrayOf(record<BlacklistSkippedZone>({ zone: str, subject: nullable(str), reason: oneOfStrings(['dead', 'ipv6_unsupported', 'not_applicable']), detail: str })),
  mx: nullable(
    record<BlacklistMx>({
      status: oneOfStrings(['answer', 'implicit', 'null_mx', 'nxdomain', 'error']),
      hosts: arrayOf(
        record<BlacklistMxHost>({
          exchange: str,
          preference: nullable(int),
          status: oneOfStrings(['resolved', 'nxdomain', 'no_address', 'error']),
          addresses: strings,
          error: nullable(FAILURE),
        }),
      ),
      error: nullable(FAILURE),
    }),
  ),
  findings,
  resolvers: strings,
  registry_version: str,
  checked_at: { type: 'string', format: 'date-time' },
  latency_ms: num,
});

const ERROR_CODE = oneOfStrings(Object.keys(ERROR_CODES));

/** The problem document of every error answer (RFC 9457 §3) with netintel's `code`. */
const PROBLEM: JsonSchema = {
  type: 'object',
  description: 'RFC 9457 problem details with netintel\'s stable error code (the member clients branch on).',
  required: ['type', 'title', 'status', 'detail', 'code'],
  properties: {
    type: { type: 'string', format: 'uri-reference', description: 'Where the code is documented (/docs#problem-CODE).' },
    title: { type: 'string', description: 'The code\'s meaning, the same for every occurrence.' },
    status: { type: 'integer', minimum: 400, maximum: 599, description: 'The HTTP status, repeated.' },
    detail: { type: 'string', description: 'What went wrong this time, for people.' },
    instance: { type: 'string', format: 'uri-reference', description: 'The request path.' },
    code: ERROR_CODE,
    details: { type: 'object', description: 'Facts about the error (on 429: limit, plan, retryAfterSeconds, resetAt, ...).' },
  },
};

const ITEM_ERROR: JsonSchema = {
  type: 'object',
  description: 'A failed item of a bulk answer or of a several-type DNS answer.',
  required: ['code', 'message'],
  properties: { code: ERROR_CODE, message: str, details: { type: 'object' } },
};

/**
 * The components every record or answer of the API refers to, whatever the
 * operation: the problem document, the error of a failed item, and the
 * finding and security evidence records hold.
 */
export const SHARED_COMPONENTS: Readonly<Record<string, JsonSchema>> = {
  Problem: PROBLEM,
  ItemError: ITEM_ERROR,
  QueryError: { type: 'object', required: ['query', 'error'], properties: { query: str, error: ref('ItemError') } },
  Finding: FINDING,
  SecurityEvidence: EVIDENCE,
  RpkiValidity: RPKI_VALIDITY,
};
