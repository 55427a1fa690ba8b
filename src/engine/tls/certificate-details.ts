/**
 * What node:crypto does not say about a certificate: its signature
 * algorithm, its embedded SCT list (RFC 6962 §3.3) and the constraints on
 * its use, read from the DER with @peculiar/asn1-x509; and its key's type
 * and size.
 */
import { X509Certificate } from 'node:crypto';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { BasicConstraints, Certificate, ExtendedKeyUsage, id_ce_basicConstraints, id_ce_extKeyUsage, id_ce_keyUsage, KeyUsage } from '@peculiar/asn1-x509';

/** The embedded SCT list extension (RFC 6962 §3.3). */
export const SCT_LIST_OID = '1.3.6.1.4.1.11129.2.4.2';

/** Signature algorithms by OID (RFC 4055, RFC 5758, RFC 8410, RFC 3279). */
const SIGNATURE_ALGORITHMS: Readonly<Record<string, string>> = {
  '1.2.840.113549.1.1.4': 'md5WithRSAEncryption',
  '1.2.840.113549.1.1.5': 'sha1WithRSAEncryption',
  '1.2.840.113549.1.1.10': 'RSASSA-PSS',
  '1.2.840.113549.1.1.11': 'sha256WithRSAEncryption',
  '1.2.840.113549.1.1.12': 'sha384WithRSAEncryption',
  '1.2.840.113549.1.1.13': 'sha512WithRSAEncryption',
  '1.2.840.10045.4.1': 'ecdsa-with-SHA1',
  '1.2.840.10045.4.3.2': 'ecdsa-with-SHA256',
  '1.2.840.10045.4.3.3': 'ecdsa-with-SHA384',
  '1.2.840.10045.4.3.4': 'ecdsa-with-SHA512',
  '1.2.840.10040.4.3': 'dsa-with-SHA1',
  '2.16.840.1.101.3.4.3.2': 'dsa-with-SHA256',
  '1.3.101.112': 'Ed25519',
  '1.3.101.113': 'Ed448',
};

const CURVE_BITS: Readonly<Record<string, number>> = {
  prime256v1: 256,
  secp256k1: 256,
  secp384r1: 384,
  secp521r1: 521,
  secp224r1: 224,
  prime192v1: 192,
};

export interface CertificateFields {
  signatureAlgorithm: string;
  /** SCTs in the embedded list; 0 without the extension or when it cannot be read. */
  embeddedScts: number;
}

/** The signature algorithm and the embedded SCTs of a DER certificate; never throws. */
export function certificateFields(der: Uint8Array): CertificateFields {
  let certificate: Certificate;
  try {
    certificate = AsnConvert.parse(Buffer.from(der), Certificate);
  } catch {
    return { signatureAlgorithm: 'unreadable', embeddedScts: 0 };
  }
  const oid = certificate.signatureAlgorithm.algorithm;
  const sctExtension = certificate.tbsCertificate.extensions?.find((extension) => extension.extnID === SCT_LIST_OID);
  return {
    signatureAlgorithm: SIGNATURE_ALGORITHMS[oid] ?? oid,
    embeddedScts: sctExtension ? countEmbeddedScts(sctExtension.extnValue.buffer) : 0,
  };
}

/** The constraints a certificate's extensions put on its use (RFC 5280 §4.2.1.3, §4.2.1.9, §4.2.1.12); null where the extension is absent. */
export interface CertificateConstraints {
  /** An X.509 version 1 certificate, which has no extensions (RFC 5280 §4.1.2.1). */
  v1: boolean;
  basicConstraints: { ca: boolean; pathLength: number | null } | null;
  /** The KeyUsage bits, as @peculiar/asn1-x509's KeyUsageFlags number them. */
  keyUsage: number | null;
  /** The key purpose OIDs. */
  extendedKeyUsage: string[] | null;
}

/**
 * The basic constraints, key usage and extended key usage of a DER
 * certificate; null when the certificate or one of them cannot be read
 * (OpenSSL calls such a certificate's extensions invalid).
 */
export function certificateConstraints(der: Uint8Array): CertificateConstraints | null {
  try {
    const { version, extensions = [] } = AsnConvert.parse(Buffer.from(der), Certificate).tbsCertificate;
    const value = (oid: string) => extensions.find((extension) => extension.extnID === oid)?.extnValue.buffer;
    const basic = value(id_ce_basicConstraints);
    const usage = value(id_ce_keyUsage);
    const purposes = value(id_ce_extKeyUsage);
    const constraints = basic === undefined ? null : AsnConvert.parse(basic, BasicConstraints);
    return {
      v1: version === 0,
      basicConstraints: constraints === null ? null : { ca: constraints.cA, pathLength: constraints.pathLenConstraint ?? null },
      keyUsage: usage === undefined ? null : AsnConvert.parse(usage, KeyUsage).toNumber(),
      extendedKeyUsage: purposes === undefined ? null : [...AsnConvert.parse(purposes, ExtendedKeyUsage)],
    };
  } catch {
    return null;
  }
}

/**
 * The number of SCTs in the extension's value: an OCTET STRING holding a
 * SignedCertificateTimestampList (RFC 6962 §3.3): a 16-bit length, then each
 * SCT as a 16-bit length and its bytes. 0 when the list is malformed.
 */
export function countEmbeddedScts(extensionValue: ArrayBuffer | Uint8Array): number {
  let list: Buffer;
  try {
    list = Buffer.from(AsnConvert.parse(extensionValue, OctetString).buffer);
  } catch {
    return 0;
  }
  if (list.length < 2 || list.readUInt16BE(0) !== list.length - 2) return 0;
  let count = 0;
  for (let offset = 2; offset < list.length; count++) {
    if (offset + 2 > list.length) return 0;
    const length = list.readUInt16BE(offset);
    if (length === 0 || offset + 2 + length > list.length) return 0;
    offset += 2 + length;
  }
  return count;
}

/** The key's type and size (RSA and DSA by modulus, EC by curve, Edwards keys by their security level's curve). */
export function keyDetails(x509: X509Certificate): { type: string | null; bits: number | null } {
  const key = x509.publicKey;
  const type = key.asymmetricKeyType ?? null;
  const details = key.asymmetricKeyDetails ?? {};
  let bits: number | null = null;
  if (type === 'rsa' || type === 'rsa-pss' || type === 'dsa') bits = details.modulusLength ?? null;
  else if (type === 'ec') bits = details.namedCurve ? (CURVE_BITS[details.namedCurve] ?? null) : null;
  else if (type === 'ed25519') bits = 256;
  else if (type === 'ed448') bits = 456;
  return { type, bits };
}
