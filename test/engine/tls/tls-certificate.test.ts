/**
 * The signature check shared by `netintel tls` and `netintel smtp`: a key
 * OpenSSL cannot decode reads as "not signed by", never as an exception.
 */
import { X509Certificate } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import { Certificate } from '@peculiar/asn1-x509';
import { describe, expect, it } from 'vitest';
import { signedBy } from '../../../src/engine/tls/tls-certificate.js';
import { createCertificateAuthority, issueCertificate } from '../../support/smtp-servers.js';

/** The certificate with its key's algorithm replaced by an OID no one knows: its `publicKey` throws. */
function withUndecodableKey(x509: X509Certificate): X509Certificate {
  const certificate = AsnConvert.parse(x509.raw, Certificate);
  certificate.tbsCertificate.subjectPublicKeyInfo.algorithm.algorithm = '1.3.6.1.4.1.99999.1';
  certificate.tbsCertificate.subjectPublicKeyInfo.algorithm.parameters = null;
  return new X509Certificate(Buffer.from(AsnConvert.serialize(certificate)));
}

describe('signedBy', () => {
  it('says whether the issuer key verifies the signature', () => {
    const ca = createCertificateAuthority();
    const leaf = issueCertificate({ commonName: 'signed.test', issuer: ca });
    expect(signedBy(leaf.x509, ca.x509)).toBe(true);
    expect(signedBy(ca.x509, ca.x509)).toBe(true);
    expect(signedBy(leaf.x509, leaf.x509)).toBe(false);
  });

  it('is false, not an exception, when the issuer key cannot be decoded', () => {
    const ca = createCertificateAuthority();
    const leaf = issueCertificate({ commonName: 'signed.test', issuer: ca });
    const undecodable = withUndecodableKey(ca.x509);
    expect(() => undecodable.publicKey).toThrow();
    expect(signedBy(leaf.x509, undecodable)).toBe(false);
    expect(signedBy(undecodable, undecodable)).toBe(false);
  });
});
