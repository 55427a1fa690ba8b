/**
 * The faults of a certificate chain apart from its dates, as OpenSSL's
 * verifier finds them. judgeCertificate needs this because node:tls reports
 * one error per chain, the last one OpenSSL met, and OpenSSL checks the
 * dates after everything here (X509_verify_cert: the path to a trust anchor,
 * then each certificate's CA flag, purpose and path length, then signatures
 * and dates). An expired certificate hides every fault of its chain.
 *
 * test/interop/tls-trust-openssl.test.ts holds this to `openssl verify
 * -no_check_time -purpose sslserver`.
 */
import type { X509Certificate } from 'node:crypto';
import { KeyUsageFlags } from '@peculiar/asn1-x509';
import { certificateConstraints, type CertificateConstraints } from './certificate-details.js';

/**
 * Key purposes that allow a TLS server (OpenSSL's XKU_SSL_SERVER and
 * XKU_SGC): serverAuth (RFC 5280 §4.2.1.12) and the two Server Gated
 * Cryptography purposes. anyExtendedKeyUsage is not among them, as in OpenSSL.
 */
const SERVER_PURPOSES = new Set(['1.3.6.1.5.5.7.3.1', '2.16.840.1.113730.4.1', '1.3.6.1.4.1.311.10.3.3']);

/** Key usages a TLS server's key needs one of (OpenSSL's KU_TLS). */
const TLS_KEY_USAGES = KeyUsageFlags.digitalSignature | KeyUsageFlags.keyEncipherment | KeyUsageFlags.keyAgreement;

/**
 * The first fault of a chain (leaf first, as node:tls links it) that does
 * not concern dates, under OpenSSL's name for it (X509_V_ERR_ without the
 * prefix); null when the chain leads to a trust anchor and every
 * certificate on it may play its part for a TLS server:
 * - the last certificate is a trust anchor, each one is issued and signed
 *   by the next (RFC 5280 §6.1.3);
 * - every issuer is a CA: basicConstraints with cA, and keyCertSign when it
 *   has a key usage; a trust anchor may instead be an X.509 v1 self-signed
 *   certificate or carry a key usage alone, as OpenSSL allows
 *   (RFC 5280 §4.2.1.9, §6.1.4 (k));
 * - no CA has more intermediates below it than its pathLenConstraint
 *   (self-issued ones not counted, RFC 5280 §6.1.4 (l, m));
 * - no extended key usage leaves out TLS servers, and the server
 *   certificate's key usage allows its key exchange (RFC 5280 §4.2.1.12,
 *   §4.2.1.3; OpenSSL's "sslserver" purpose).
 *
 * @param isAnchor Whether a certificate is one of the trust anchors.
 */
export function pathFault(chain: readonly X509Certificate[], isAnchor: (certificate: X509Certificate) => boolean): string | null {
  const last = chain[chain.length - 1];
  if (last === undefined) return 'UNABLE_TO_GET_ISSUER_CERT';
  if (!isAnchor(last)) {
    if (selfSigned(last)) return chain.length === 1 ? 'DEPTH_ZERO_SELF_SIGNED_CERT' : 'SELF_SIGNED_CERT_IN_CHAIN';
    return chain.length === 1 ? 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' : 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY';
  }
  const constraints = chain.map((certificate) => certificateConstraints(certificate.raw));
  let intermediatesBelow = 0;
  for (let depth = 0; depth < chain.length; depth++) {
    const own = constraints[depth];
    if (own === null || own === undefined) return 'INVALID_EXTENSION';
    if (depth > 0 && !isCa(own, depth === chain.length - 1, chain[depth]!)) return 'INVALID_CA';
    if (!serverPurpose(own, depth === 0)) return 'INVALID_PURPOSE';
    const pathLength = own.basicConstraints?.pathLength ?? null;
    if (depth > 1 && pathLength !== null && intermediatesBelow > pathLength) return 'PATH_LENGTH_EXCEEDED';
    if (depth > 0 && chain[depth]!.subject !== chain[depth]!.issuer) intermediatesBelow++;
  }
  for (let depth = 0; depth + 1 < chain.length; depth++) {
    const issuer = chain[depth + 1]!;
    if (!chain[depth]!.checkIssued(issuer)) return 'UNABLE_TO_GET_ISSUER_CERT';
    if (!signedBy(chain[depth]!, issuer)) return 'CERT_SIGNATURE_FAILURE';
  }
  return null;
}

/** OpenSSL's check_ca: basicConstraints with cA, or at the top of the chain a v1 self-signed certificate or one with a key usage; keyCertSign if a key usage is given. */
function isCa(constraints: CertificateConstraints, atTop: boolean, certificate: X509Certificate): boolean {
  if (constraints.keyUsage !== null && (constraints.keyUsage & KeyUsageFlags.keyCertSign) === 0) return false;
  if (constraints.basicConstraints !== null) return constraints.basicConstraints.ca;
  return atTop && (constraints.keyUsage !== null || (constraints.v1 && selfSigned(certificate)));
}

function serverPurpose(constraints: CertificateConstraints, isServerCertificate: boolean): boolean {
  if (constraints.extendedKeyUsage !== null && !constraints.extendedKeyUsage.some((purpose) => SERVER_PURPOSES.has(purpose))) return false;
  return !isServerCertificate || constraints.keyUsage === null || (constraints.keyUsage & TLS_KEY_USAGES) !== 0;
}

/** Whether the certificate names itself as issuer and its own key verifies its signature. */
export function selfSigned(certificate: X509Certificate): boolean {
  return certificate.checkIssued(certificate) && signedBy(certificate, certificate);
}

/**
 * Whether `issuer`'s key verifies `certificate`'s signature. A key OpenSSL
 * cannot decode makes `publicKey` throw: that is a signature not verified,
 * not a failed probe.
 */
export function signedBy(certificate: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return certificate.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

/** The faults of a chain that leads to a trusted root, in words (keyed by OpenSSL's names for them). */
const FAULT_TEXT: Readonly<Record<string, string>> = {
  INVALID_CA: 'a certificate that issues another in the chain is not a CA',
  INVALID_PURPOSE: 'the key usage or extended key usage of a certificate in the chain rules out TLS servers',
  PATH_LENGTH_EXCEEDED: 'a CA has more intermediates below it than its path length constraint allows',
  CERT_SIGNATURE_FAILURE: 'a signature in the chain does not verify',
  INVALID_EXTENSION: 'a certificate in the chain has extensions that cannot be read',
};

/** A verification error that is no missing or unknown root, in words for a finding; null for the others, whose findings say so already. */
export function pathFaultText(verifyError: string | null): string | null {
  return verifyError === null ? null : (FAULT_TEXT[verifyError] ?? null);
}
