import type { Finding } from '../findings.js';
import type { StapledOcspStatus } from './stapled-ocsp.js';

/** The protocols `netintel tls --starttls` speaks before the handshake. */
export const STARTTLS_PROTOCOLS = ['smtp', 'imap', 'pop3', 'ftp', 'xmpp', 'ldap', 'postgres'] as const;
export type StarttlsProtocol = (typeof STARTTLS_PROTOCOLS)[number];

/** `tls_expires_soon` below this many days left, unless the caller says otherwise. */
export const DEFAULT_EXPIRY_DAYS = 21;

/** The protocol versions tried one by one, as node:tls names them, and the record's member for each. */
export const TLS_VERSIONS = [
  { version: 'TLSv1', member: 'tls1_0' },
  { version: 'TLSv1.1', member: 'tls1_1' },
  { version: 'TLSv1.2', member: 'tls1_2' },
  { version: 'TLSv1.3', member: 'tls1_3' },
] as const;
export type TlsVersionMember = (typeof TLS_VERSIONS)[number]['member'];

/**
 * A version tried on a connection of its own: `accepted` (the handshake
 * completed), `refused` (the server would not speak it), `not_tried` (this
 * client cannot offer it: its OpenSSL has no such protocol enabled), `failed`
 * (no answer either way: the connection or the STARTTLS preamble failed).
 */
export type VersionSupport = 'accepted' | 'refused' | 'not_tried' | 'failed';

export type TlsProtocols = Record<TlsVersionMember, VersionSupport>;

/** One certificate of the chain, leaf first. */
export interface TlsChainCertificate {
  subject: string;
  issuer: string;
  /** subjectAltName entries as written (`DNS:www.example.com`, `IP Address:192.0.2.1`). */
  san: string[];
  /** `rsa`, `ec`, `ed25519`, `dsa`, ... (node:crypto's asymmetricKeyType), or null. */
  key_type: string | null;
  /** The modulus length (RSA, DSA) or the curve's size (EC), or null. */
  key_bits: number | null;
  /** `sha256WithRSAEncryption`, `ecdsa-with-SHA256`, ..., or the OID when netintel does not name it. */
  signature_algorithm: string;
  valid_from: string;
  valid_to: string;
  days_left: number;
  self_signed: boolean;
  /** The certificate is one of the trust anchors (the bundled roots, or `--ca`). */
  trust_anchor: boolean;
  /** Signed certificate timestamps in the embedded SCT list (OID 1.3.6.1.4.1.11129.2.4.2, RFC 6962 §3.3). */
  embedded_scts: number;
  fingerprint_sha256: string;
}

/** The server certificate, judged. */
export interface TlsCertificateSummary {
  subject: string;
  issuer: string;
  valid_to: string;
  days_left: number;
  /** The name checked (RFC 6125, as node:tls checks it): the host given, or `--servername`. */
  checked_name: string;
  hostname_match: boolean;
  /** The chain leads to a trust anchor, judged apart from the dates. */
  trusted: boolean;
  self_signed: boolean;
  /** The server left out an intermediate certificate needed to reach a trust anchor. */
  chain_incomplete: boolean;
  /**
   * OpenSSL's verification error (`CERT_HAS_EXPIRED`, `UNABLE_TO_VERIFY_LEAF_SIGNATURE`, ...), or
   * null. OpenSSL names the last problem it met, and the dates come last: when that is a date, this
   * is the first fault of the chain apart from the dates (judgeCertificate), if there is one.
   */
  verify_error: string | null;
  /** A stapled OCSP response came with the handshake (RFC 6066 §8). */
  ocsp_stapled: boolean;
  /** The stapled response's verdict once verified (stapled-ocsp.ts), null when none was stapled. */
  ocsp_status: StapledOcspStatus | null;
  /** Embedded SCTs in the leaf; SCTs of the TLS extension are not read (node:tls does not expose them). */
  embedded_scts: number;
}

/** DANE (RFC 6698): the TLSA records of `_<port>._tcp.<host>` against the chain. */
export interface TlsDane {
  /** As `netintel smtp`'s dane.verdict: matched, mismatch, unusable, no-tls, not-applicable, failed. */
  verdict: string;
  tlsa_name: string;
  records: number;
  dnssec: string;
  /** Why the verdict is `failed`: the lookup failed, the records' DNSSEC is bogus, or records were found and their DNSSEC could not be decided; null otherwise. */
  error: string | null;
}

export interface TlsResult {
  kind: 'tls';
  /** The target as given. */
  target: string;
  host: string;
  port: number;
  /** The address connected to, or null when none was. */
  address: string | null;
  starttls: StarttlsProtocol | null;
  connected: boolean;
  /** The handshake completed (judged without certificate verification). */
  established: boolean;
  /** Negotiated with the client's widest offer: `TLSv1.3`, ... */
  protocol: string | null;
  cipher: string | null;
  protocols: TlsProtocols | null;
  certificate: TlsCertificateSummary | null;
  chain: TlsChainCertificate[];
  dane: TlsDane | null;
  findings: Finding[];
  /** Why no TLS session could be had (no connection, a refused STARTTLS, a failed handshake), or null. */
  failure: { code: 'timeout' | 'unreachable' | 'upstream' | 'tls'; message: string } | null;
}
