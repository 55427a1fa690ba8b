import { createHash, X509Certificate } from 'node:crypto';
import tls, { type PeerCertificate, type TLSSocket } from 'node:tls';
import { ipVersionOf } from '../address/ip-text.js';
import type { EngineContext } from '../context.js';
import type { SmtpCertificate, SmtpChainCertificate } from '../smtp/smtp-result.js';
import { pathFault, selfSigned } from './path-faults.js';

const DAY_MS = 86_400_000;

/** OpenSSL verification errors about validity dates only (the chain itself may be fine). */
const TIME_ERRORS = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'ERROR_IN_CERT_NOT_AFTER_FIELD', 'ERROR_IN_CERT_NOT_BEFORE_FIELD']);

/**
 * TLS client options for a probe: the handshake is judged without
 * verification (does TLS work at all?), so nothing is rejected here; the
 * certificate is judged afterwards by `judgeCertificate`. Old protocol
 * versions and ciphers are allowed so that an outdated server is reported
 * as outdated rather than as "no TLS". Nothing confidential travels over a
 * probe's connection but the AUTH test's credentials, which are sent only
 * when the user asks for it.
 */
export function probeTlsOptions(servername: string | null, extraCa: readonly string[]): tls.ConnectionOptions {
  return {
    ...(servername ? { servername } : {}),
    rejectUnauthorized: false,
    // Name matching is judged on its own (hostname_match), not folded into authorizationError.
    checkServerIdentity: () => undefined,
    minVersion: 'TLSv1',
    ciphers: 'DEFAULT:@SECLEVEL=0',
    ...(extraCa.length > 0 ? { ca: [...tls.rootCertificates, ...extraCa] } : {}),
  };
}

let bundledFingerprints: string[] | null = null;
let defaultFingerprints: { from: readonly string[]; set: Set<string> } | null = null;

/**
 * SHA-256 fingerprints (hex, upper case) of the trust anchors node:tls
 * verifies a probe against (probeTlsOptions): without `extraCa`, Node's
 * default store, its bundled roots and the certificates of
 * NODE_EXTRA_CA_CERTS (`defaultExtra`, EngineContext.extraTrustAnchors);
 * with it, the bundled roots and `extraCa`, since an explicit `ca`
 * replaces the default store, extra certificates included (Node's
 * documentation of NODE_EXTRA_CA_CERTS).
 */
export function trustAnchorFingerprints(extraCa: readonly string[], defaultExtra: (() => readonly string[]) | undefined): Set<string> {
  bundledFingerprints ??= tls.rootCertificates.map(pemFingerprint);
  if (extraCa.length > 0) return new Set([...bundledFingerprints, ...extraCa.flatMap(splitPem).map(pemFingerprint)]);
  const extra = defaultExtra?.() ?? [];
  if (defaultFingerprints?.from !== extra) defaultFingerprints = { from: extra, set: new Set([...bundledFingerprints, ...extra.flatMap(splitPem).map(pemFingerprint)]) };
  return defaultFingerprints.set;
}

function splitPem(text: string): string[] {
  return text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

function pemFingerprint(pem: string): string {
  const body = pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
  return createHash('sha256').update(Buffer.from(body, 'base64')).digest('hex').toUpperCase();
}

function derFingerprint(raw: Buffer): string {
  return createHash('sha256').update(raw).digest('hex').toUpperCase();
}

/** The chain as node:tls links it (leaf first), each certificate once. */
function peerChain(leaf: tls.DetailedPeerCertificate): tls.DetailedPeerCertificate[] {
  const chain: tls.DetailedPeerCertificate[] = [];
  const seen = new Set<string>();
  let current: tls.DetailedPeerCertificate | undefined = leaf;
  while (current && current.raw && !seen.has(current.fingerprint256)) {
    seen.add(current.fingerprint256);
    chain.push(current);
    current = current.issuerCertificate;
  }
  return chain;
}

/**
 * The DER of each certificate of the peer's chain, leaf first, as node:tls
 * links it (the certificates presented, completed from the trust store):
 * the chain the probe describes.
 */
export function peerChainDer(socket: TLSSocket): Buffer[] {
  const leaf = socket.getPeerCertificate(true);
  if (!leaf || !leaf.raw) return [];
  return peerChain(leaf).map((certificate) => certificate.raw);
}

/**
 * The DER of the certificates the peer sent, in the order it sent them
 * (node:tls links `getPeerX509Certificate()` to them alone, never to the
 * trust store): what DANE matches TLSA records against. A sender knows only
 * these; a DANE-TA anchor the server leaves out is not found in the
 * sender's trust store (RFC 7671 §5.2.2).
 *
 * Read it last, once: on Node 20, `getPeerX509Certificate()` takes the
 * certificates out of the session's peer chain (nodejs/node#65579), so
 * `getPeerCertificate()` and this function see none after it.
 */
export function presentedChainDer(socket: TLSSocket): Buffer[] {
  const chain: Buffer[] = [];
  const seen = new Set<string>();
  for (let certificate = socket.getPeerX509Certificate(); certificate && !seen.has(certificate.fingerprint256); certificate = certificate.issuerCertificate) {
    seen.add(certificate.fingerprint256);
    chain.push(certificate.raw);
  }
  return chain;
}

/** `CN=mx.example.com, O=Example` from node's object form of a distinguished name. */
function distinguishedName(name: PeerCertificate['subject'] | undefined): string {
  if (!name) return '';
  return Object.entries(name)
    .map(([key, value]) => `${key}=${Array.isArray(value) ? value.join('+') : String(value)}`)
    .join(', ');
}

function isoDate(text: string): string {
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? text : date.toISOString();
}

/**
 * Whether the certificate names the host (RFC 6125 §6), as OpenSSL's
 * X509_check_host and X509_check_ip decide it with their default flags (what
 * `openssl s_client -verify_hostname` answers). node:tls's
 * checkServerIdentity drops a trailing dot from the names in the
 * certificate, so `DNS:mx.example.com.` matched there and not in OpenSSL,
 * whose reading RFC 5280 §4.2.1.6 supports: a dNSName is in the preferred
 * name syntax, which has no trailing dot. The host's own trailing dot only
 * marks the name absolute; a name Node will not pass to OpenSSL (one holding
 * a NUL) names nothing.
 */
export function namesHost(certificate: X509Certificate, host: string): boolean {
  if (ipVersionOf(host) !== 0) return certificate.checkIP(host) !== undefined;
  if (host.includes('\0')) return false;
  return certificate.checkHost(host.endsWith('.') ? host.slice(0, -1) : host) !== undefined;
}

/**
 * Judges the certificate of an established TLS connection apart from the
 * handshake: trust (the chain leads to a trusted root, whatever the dates),
 * validity dates against the probe's clock, and the host name (RFC 6125,
 * with namesHost).
 *
 * OpenSSL reports one error per chain, the last one it met, and it checks
 * the dates last: an expired certificate reads `CERT_HAS_EXPIRED` whatever
 * else is wrong with its chain. So when the error is about dates, trust is
 * decided here by the checks OpenSSL makes before the dates (pathFault), and
 * `verify_error` names the first fault found, or the date error when the
 * chain is otherwise sound.
 *
 * @param checkedName The host name (or IP address) the certificate should name.
 */
export function judgeCertificate(socket: TLSSocket, checkedName: string, ctx: Pick<EngineContext, 'now' | 'extraTrustAnchors'>, extraCa: readonly string[]): SmtpCertificate | null {
  const now = ctx.now();
  const leaf = socket.getPeerCertificate(true);
  if (!leaf || !leaf.raw) return null;
  const chain = peerChain(leaf);
  let verifyError = socket.authorized ? null : String(socket.authorizationError ?? 'UNKNOWN');
  const x509 = chain.map((certificate) => new X509Certificate(certificate.raw));
  let trusted = verifyError === null;
  if (!trusted && TIME_ERRORS.has(verifyError!)) {
    const anchors = trustAnchorFingerprints(extraCa, ctx.extraTrustAnchors);
    const fault = pathFault(x509, (certificate) => anchors.has(derFingerprint(certificate.raw)));
    trusted = fault === null;
    verifyError = fault ?? verifyError;
  }

  const validFrom = isoDate(leaf.valid_from);
  const validTo = isoDate(leaf.valid_to);
  const notAfter = new Date(leaf.valid_to).getTime();
  const notBefore = new Date(leaf.valid_from).getTime();
  const nowMs = now.getTime();
  const san = (leaf.subjectaltname ?? '')
    .split(/,\s*/)
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);

  return {
    subject: distinguishedName(leaf.subject),
    issuer: distinguishedName(leaf.issuer),
    san,
    valid_from: validFrom,
    valid_to: validTo,
    days_left: Math.floor((notAfter - nowMs) / DAY_MS),
    expired: nowMs > notAfter,
    not_yet_valid: nowMs < notBefore,
    hostname_match: namesHost(x509[0]!, checkedName),
    checked_name: checkedName,
    trusted,
    self_signed: selfSigned(x509[0]!),
    verify_error: verifyError,
    fingerprint_sha256: leaf.fingerprint256,
    chain: chain.map(
      (certificate): SmtpChainCertificate => ({
        subject: distinguishedName(certificate.subject),
        issuer: distinguishedName(certificate.issuer),
        valid_to: isoDate(certificate.valid_to),
        fingerprint_sha256: certificate.fingerprint256,
      }),
    ),
  };
}
