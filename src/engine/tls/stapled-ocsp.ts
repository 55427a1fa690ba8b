/**
 * The OCSP response a server staples to its handshake (RFC 6066 §8), read
 * and verified as a TLS client does before believing it (RFC 6960 §3.2):
 * a successful basic response, signed by the certificate's issuer or by a
 * responder the issuer authorised for OCSP (§4.2.2.2), current, with a
 * single response for this certificate. Read with @peculiar/asn1-ocsp;
 * signatures verified with node:crypto. `test/interop/ocsp-openssl.test.ts`
 * holds the verdicts to `openssl ocsp -respin`.
 */
import { createHash, verify, X509Certificate, type KeyObject } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import { BasicOCSPResponse, id_kp_OCSPSigning, id_pkix_ocsp_basic, OCSPResponse, OCSPResponseStatus } from '@peculiar/asn1-ocsp';
import { Certificate, CRLReasons } from '@peculiar/asn1-x509';
import { signedBy } from './path-faults.js';

/**
 * good, revoked, unknown: what a verified response says of the certificate;
 * invalid: a response that does not verify (clients ignore it);
 * unchecked: the issuer, which the response is checked against, was not in
 * the chain.
 */
export type StapledOcspStatus = 'good' | 'revoked' | 'unknown' | 'invalid' | 'unchecked';

export interface StapledOcsp {
  status: StapledOcspStatus;
  /** Why the response is invalid or unchecked; null otherwise. */
  reason: string | null;
  /** ISO 8601 times of the single response, null when none was read. */
  this_update: string | null;
  next_update: string | null;
  /** For `revoked`: when, and the CRL reason code's name when given (RFC 5280 §5.3.1). */
  revoked_at: string | null;
  revocation_reason: string | null;
}

/** How far the clocks of responder and client may disagree (OpenSSL's default for OCSP_check_validity is 5 minutes). */
const CLOCK_SKEW_MS = 5 * 60_000;

/** CertID hash algorithms (RFC 6960 §4.1.1; SHA-1 is what responders use). */
const HASHES: Readonly<Record<string, string>> = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};

/** Response signature algorithms: the digest node:crypto's verify takes with the signer's key (null: the key's own, for Ed25519 and Ed448). */
const SIGNATURES: Readonly<Record<string, string | null>> = {
  '1.2.840.113549.1.1.5': 'sha1',
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.2.840.10045.4.1': 'sha1',
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
  '1.3.101.112': null,
  '1.3.101.113': null,
};

/**
 * The verdict on a stapled response for `leaf`, issued by `issuer` (null
 * when the chain does not hold it), at `now`. Never throws: bytes that are
 * no OCSP response are an invalid response.
 */
export function judgeStapledOcsp(response: Uint8Array, leaf: X509Certificate, issuer: X509Certificate | null, now: Date): StapledOcsp {
  let basic: BasicOCSPResponse;
  try {
    const outer = AsnConvert.parse(Buffer.from(response), OCSPResponse);
    if (outer.responseStatus !== OCSPResponseStatus.successful) return verdict('invalid', `the responder answered ${OCSPResponseStatus[outer.responseStatus] ?? outer.responseStatus}, not successful`);
    if (!outer.responseBytes || outer.responseBytes.responseType !== id_pkix_ocsp_basic) return verdict('invalid', 'not a basic OCSP response (RFC 6960 §4.2.1)');
    basic = AsnConvert.parse(outer.responseBytes.response.buffer, BasicOCSPResponse);
  } catch (error) {
    return verdict('invalid', `not an OCSP response: ${(error as Error).message}`);
  }
  if (issuer === null) return verdict('unchecked', 'the issuer of the server certificate is not in the chain, so the response cannot be checked');
  try {
    return judgeBasic(basic, leaf, issuer, now);
  } catch (error) {
    return verdict('invalid', `the response cannot be read: ${(error as Error).message}`);
  }
}

function verdict(status: StapledOcspStatus, reason: string | null, extra: Partial<StapledOcsp> = {}): StapledOcsp {
  return { status, reason, this_update: null, next_update: null, revoked_at: null, revocation_reason: null, ...extra };
}

/** The checks of RFC 6960 §3.2 on a basic response that was read. */
function judgeBasic(basic: BasicOCSPResponse, leaf: X509Certificate, issuer: X509Certificate, now: Date): StapledOcsp {
  const single = basic.tbsResponseData.responses.find((each) => coversCertificate(each.certID, leaf, issuer));
  if (!single) return verdict('invalid', 'the response has no status for this certificate (RFC 6960 §3.2 (1))');
  const times = { this_update: single.thisUpdate.toISOString(), next_update: single.nextUpdate?.toISOString() ?? null };

  const signer = responseSigner(basic, issuer, now);
  if (signer === null) return verdict('invalid', 'the response is not signed by the issuer nor by a responder the issuer authorised (RFC 6960 §4.2.2.2)', times);
  if (single.thisUpdate.getTime() > now.getTime() + CLOCK_SKEW_MS) return verdict('invalid', `the response is not valid before ${times.this_update} (RFC 6960 §3.2 (4))`, times);
  if (single.nextUpdate && single.nextUpdate.getTime() < now.getTime() - CLOCK_SKEW_MS) return verdict('invalid', `the response expired at ${times.next_update} (RFC 6960 §3.2 (5))`, times);

  if (single.certStatus.revoked) {
    const code = single.certStatus.revoked.revocationReason?.reason;
    return verdict('revoked', null, {
      ...times,
      revoked_at: single.certStatus.revoked.revocationTime.toISOString(),
      revocation_reason: code === undefined ? null : (CRLReasons[code] ?? String(code)),
    });
  }
  if (single.certStatus.good !== undefined) return verdict('good', null, times);
  return verdict('unknown', null, times);
}

/** Whether a CertID names `leaf` (RFC 6960 §4.1.1): its serial number and the hash of its issuer's key (the key identifies the issuer; the name hash adds nothing once it matches). */
function coversCertificate(certId: { hashAlgorithm: { algorithm: string }; issuerKeyHash: { buffer: ArrayBuffer }; serialNumber: ArrayBuffer }, leaf: X509Certificate, issuer: X509Certificate): boolean {
  const hash = HASHES[certId.hashAlgorithm.algorithm];
  if (hash === undefined) return false;
  if (serialHex(new Uint8Array(certId.serialNumber)) !== leaf.serialNumber.replace(/^0+/, '').toUpperCase()) return false;
  const key = AsnConvert.parse(issuer.raw, Certificate).tbsCertificate.subjectPublicKeyInfo.subjectPublicKey;
  return createHash(hash).update(Buffer.from(key)).digest().equals(Buffer.from(certId.issuerKeyHash.buffer));
}

function serialHex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex').replace(/^0+/, '').toUpperCase();
}

/**
 * The certificate whose key verifies the response: the issuer itself, or
 * a certificate the response carries that the issuer signed for OCSP
 * signing (id-kp-OCSPSigning) and that is within its validity at `now`;
 * null when neither does.
 */
function responseSigner(basic: BasicOCSPResponse, issuer: X509Certificate, now: Date): X509Certificate | null {
  const signed = basic.tbsResponseDataRaw;
  if (signed === undefined) return null;
  if (signatureVerifies(basic, signed, issuer.publicKey)) return issuer;
  for (const carried of basic.certs ?? []) {
    let delegate: X509Certificate;
    try {
      delegate = new X509Certificate(Buffer.from(AsnConvert.serialize(carried)));
    } catch {
      continue;
    }
    const current = Date.parse(delegate.validFrom) <= now.getTime() && now.getTime() <= Date.parse(delegate.validTo);
    const authorised = current && delegate.checkIssued(issuer) && signedBy(delegate, issuer) && (delegate.keyUsage ?? []).includes(id_kp_OCSPSigning);
    if (authorised && signatureVerifies(basic, signed, delegate.publicKey)) return delegate;
  }
  return null;
}

function signatureVerifies(basic: BasicOCSPResponse, signed: ArrayBuffer, key: KeyObject): boolean {
  const digest = SIGNATURES[basic.signatureAlgorithm.algorithm];
  if (digest === undefined) return false;
  try {
    return verify(digest, Buffer.from(signed), key, Buffer.from(basic.signature));
  } catch {
    return false;
  }
}
