import type { Finding } from '../findings.js';
import type { DaneResult } from './dane.js';

/** The DANE section of a probe (RFC 7672); its findings join the probe's. */
export type SmtpDane = Omit<DaneResult, 'findings'>;

/**
 * The stages of an SMTP probe, in conversation order (swaks' stop points).
 * `connect` is the TCP connection (and the TLS handshake under implicit
 * TLS), `tls` the STARTTLS exchange with its handshake and the EHLO after
 * it, `mail` and `rcpt` the envelope commands of the relay test.
 */
export const SMTP_STAGES = ['connect', 'banner', 'ehlo', 'tls', 'auth', 'mail', 'rcpt'] as const;
export type SmtpStage = (typeof SMTP_STAGES)[number];

/** How TLS is asked for: STARTTLS when offered, STARTTLS or fail, or TLS from the first byte (port 465). */
export type SmtpTlsMode = 'opportunistic' | 'required' | 'implicit';

/** SASL mechanisms netintel can test (RFC 4616, draft-murchison-sasl-login, RFC 2195). */
export const SMTP_AUTH_MECHANISMS = ['PLAIN', 'LOGIN', 'CRAM-MD5'] as const;
export type SmtpAuthMechanism = (typeof SMTP_AUTH_MECHANISMS)[number];

/** One SMTP reply: its code, its enhanced status code when given (RFC 3463), the text of its lines. */
export interface SmtpReply {
  code: number;
  /** `2.1.5` and the like when the server uses ENHANCEDSTATUSCODES (RFC 2034), else null. */
  enhanced_code: string | null;
  /** The lines' text after the code, joined with `\n`; control characters escaped. */
  text: string;
}

/** The greeting (RFC 5321 §4.2, §3.1). */
export interface SmtpBanner {
  code: number;
  text: string;
  /** The host name the greeting starts with, lower case, when it is a domain or address literal; else null. */
  hostname: string | null;
}

/** The answer to the first EHLO (or HELO, when EHLO was refused). */
export interface SmtpEhlo {
  command: 'EHLO' | 'HELO';
  code: number;
  /** The name the server gives on its first reply line, lower case, or null. */
  hostname: string | null;
  text: string;
}

/** What the last successful EHLO advertised (after TLS when TLS was established). */
export interface SmtpExtensions {
  /** Every keyword advertised, upper case, in the server's order (`SIZE`, `8BITMIME`, ...). */
  keywords: string[];
  /** SIZE (RFC 1870). */
  size: boolean;
  /** SIZE's declared limit in bytes; 0 means "no fixed limit"; null when SIZE is absent or gives no value. */
  size_limit_bytes: number | null;
  pipelining: boolean;
  eight_bit_mime: boolean;
  smtp_utf8: boolean;
  starttls: boolean;
  chunking: boolean;
  dsn: boolean;
  enhanced_status_codes: boolean;
  require_tls: boolean;
  /** SASL mechanisms of the AUTH keyword, upper case. */
  auth: string[];
}

/** One certificate of the chain the server presented. */
export interface SmtpChainCertificate {
  subject: string;
  issuer: string;
  valid_to: string;
  fingerprint_sha256: string;
}

/** The server certificate, judged apart from the handshake. */
export interface SmtpCertificate {
  /** The distinguished name, one `key=value` per RDN joined with `, ` (`CN=mx.example.com`). */
  subject: string;
  issuer: string;
  /** subjectAltName entries as written in the certificate (`DNS:mx.example.com`, `IP Address:192.0.2.1`). */
  san: string[];
  /** ISO 8601. */
  valid_from: string;
  valid_to: string;
  /** Whole days from the probe's clock to valid_to; negative once expired. */
  days_left: number;
  expired: boolean;
  not_yet_valid: boolean;
  /** Whether the certificate names the host probed (RFC 6125 rules, as node:tls checks them). */
  hostname_match: boolean;
  /** The name checked against the certificate. */
  checked_name: string;
  /** Whether the chain leads to a trusted root, judged apart from the validity dates. */
  trusted: boolean;
  self_signed: boolean;
  /**
   * OpenSSL's verification error (`CERT_HAS_EXPIRED`, `UNABLE_TO_VERIFY_LEAF_SIGNATURE`, ...), or
   * null. OpenSSL names the last problem it met, and the dates come last: when that is a date, this
   * is the first fault of the chain apart from the dates (judgeCertificate), if there is one.
   */
  verify_error: string | null;
  fingerprint_sha256: string;
  /** The chain as presented and completed from the trust store, leaf first. */
  chain: SmtpChainCertificate[];
}

export interface SmtpTls {
  /**
   * STARTTLS was advertised in the EHLO reply (always true under implicit TLS, where TLS is not
   * negotiated); null when no EHLO reply was read (the conversation ended before it): not known.
   */
  offered: boolean | null;
  /** How TLS was attempted: `starttls`, `implicit`, or null when it was not attempted. */
  method: 'starttls' | 'implicit' | null;
  /** The handshake completed (judged without certificate verification). */
  established: boolean;
  /** `TLSv1.3`, `TLSv1.2`, ... */
  protocol: string | null;
  /** The OpenSSL/IANA cipher suite name. */
  cipher: string | null;
  /** Why TLS did not come up (the STARTTLS reply or the handshake error), or null. */
  error: string | null;
  certificate: SmtpCertificate | null;
}

export interface SmtpAuth {
  /** Mechanisms the EHLO before TLS advertised; null when there was no plaintext EHLO (implicit TLS). */
  mechanisms_before_tls: string[] | null;
  /** Mechanisms the EHLO after TLS advertised; null when TLS was not established. */
  mechanisms_after_tls: string[] | null;
  /** The mechanism tried, or null when no credentials were given or none was tried. */
  tested: SmtpAuthMechanism | null;
  /** `success`/`failure` when tried; `skipped` when credentials were given but not sent; null without credentials. */
  result: 'success' | 'failure' | 'skipped' | null;
  /** The server's final reply to AUTH. */
  reply: SmtpReply | null;
  /** Why credentials were not sent, or null. */
  skipped_reason: string | null;
}

/** The MAIL FROM / RCPT TO commands (relay test or `--quit-after mail|rcpt`); DATA is never sent. */
export interface SmtpEnvelope {
  from: string;
  to: string;
  /** Whether the session was authenticated when the envelope was sent. */
  authenticated: boolean;
  mail: SmtpReply | null;
  rcpt: SmtpReply | null;
  /** This envelope was an open-relay test (an outside recipient). */
  relay_test: boolean;
  /**
   * Relay test verdict: `denied` (RCPT refused), `accepted` (RCPT 2xx without
   * authentication: may be an open relay), `inconclusive` (MAIL refused,
   * a temporary failure, or authenticated); null when not a relay test.
   */
  relay_verdict: 'denied' | 'accepted' | 'inconclusive' | null;
}

export interface SmtpReverseDns {
  /** The PTR names of the address, lower case, no trailing dot ([] when there are none). */
  names: string[];
  /** One of `names` resolves back to the address (FCrDNS); null when there are no names, or when none confirmed and a forward lookup failed (unknown). */
  forward_confirmed: boolean | null;
}

/** Milliseconds per stage (0.1 ms resolution); null for a stage that did not run. */
export interface SmtpTimings {
  dns_ms: number | null;
  connect_ms: number | null;
  banner_ms: number | null;
  ehlo_ms: number | null;
  /** STARTTLS command and TLS handshake (the handshake alone under implicit TLS). */
  tls_ms: number | null;
  ehlo_after_tls_ms: number | null;
  auth_ms: number | null;
  mail_ms: number | null;
  rcpt_ms: number | null;
  /** The conversation, from connecting to closing (dns_ms apart; the PTR lookup runs beside it and is not counted). */
  total_ms: number;
}

/** One line of the conversation. */
export interface SmtpTranscriptLine {
  /** Milliseconds since the probe started. */
  at_ms: number;
  /** `sent` by netintel, `received` from the server, `info`: a netintel note (connect, TLS, close). */
  direction: 'sent' | 'received' | 'info';
  /** The line travelled inside TLS. */
  tls: boolean;
  /** The line, credentials replaced by `[redacted]`, control characters escaped. */
  text: string;
}

/** Why the conversation could not take place at all, or null (see probeSmtp). */
export interface SmtpFailure {
  /** The error code a command reports for it (`netintel smtp` exits with it). */
  code: 'unreachable' | 'timeout' | 'tls';
  /** `connect`: no TCP connection (or, under implicit TLS, no handshake); `banner`: no greeting. */
  stage: 'connect' | 'banner';
  message: string;
}

/**
 * The record of `netintel smtp` and GET /api/smtp-test: one SMTP server
 * address, tested stage by stage.
 */
export interface SmtpResult {
  kind: 'smtp';
  /** The host as given, normalised (ASCII, lower case) or the canonical IP. */
  host: string;
  port: number;
  /** The address connected to. */
  address: string;
  tls_mode: SmtpTlsMode;
  /** The name netintel sent (or would send) in EHLO/HELO; null when it was to be the local address and no connection was made. */
  ehlo_name: string | null;
  /** ISO 8601 time the probe started. */
  checked_at: string;
  connected: boolean;
  /** Set when no SMTP conversation took place: no TCP connection, or no greeting. */
  failure: SmtpFailure | null;
  /** The last stage reached. */
  stopped_at: SmtpStage | 'quit';
  /** The planned conversation ran to its end and QUIT was answered. */
  completed: boolean;
  banner: SmtpBanner | null;
  ehlo: SmtpEhlo | null;
  extensions: SmtpExtensions | null;
  tls: SmtpTls;
  auth: SmtpAuth;
  envelope: SmtpEnvelope | null;
  reverse_dns: SmtpReverseDns | null;
  /** TLSA records of `_25._tcp.<host>` matched against the presented chain, when asked for (`dane`) and the host is a name; else null. */
  dane: SmtpDane | null;
  timings: SmtpTimings;
  findings: Finding[];
  /** The conversation when asked for (`transcript: true`), else null. */
  transcript: SmtpTranscriptLine[] | null;
}
