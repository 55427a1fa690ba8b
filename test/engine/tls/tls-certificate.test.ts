/**
 * The chain checks shared by `netintel tls` and `netintel smtp`: a key
 * OpenSSL cannot decode reads as "not signed by", never as an exception;
 * the faults of a chain apart from its dates have OpenSSL's names (the
 * verdicts themselves are held to OpenSSL by
 * test/interop/tls-trust-openssl.test.ts).
 */
import { X509Certificate } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import { Certificate } from '@peculiar/asn1-x509';
import { describe, expect, it } from 'vitest';
import { pathFault, pathFaultText, signedBy } from '../../../src/engine/tls/path-faults.js';
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

describe('pathFault', () => {
  const ca = createCertificateAuthority('path root');
  const inter = issueCertificate({ commonName: 'path intermediate', ca: true, issuer: ca });
  const leaf = issueCertificate({ commonName: 'path.test', issuer: inter });
  const anchorIs = (anchor: X509Certificate) => (certificate: X509Certificate) => certificate.fingerprint256 === anchor.fingerprint256;

  it('finds nothing wrong with a sound chain to the anchor', () => {
    expect(pathFault([leaf.x509, inter.x509, ca.x509], anchorIs(ca.x509))).toBeNull();
  });

  it('names a chain that stops short, or ends in a self-signed certificate that is no anchor, as OpenSSL does', () => {
    const other = createCertificateAuthority('another root');
    expect(pathFault([leaf.x509], anchorIs(ca.x509))).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    expect(pathFault([leaf.x509, inter.x509], anchorIs(ca.x509))).toBe('UNABLE_TO_GET_ISSUER_CERT_LOCALLY');
    expect(pathFault([leaf.x509, inter.x509, ca.x509], anchorIs(other.x509))).toBe('SELF_SIGNED_CERT_IN_CHAIN');
    const alone = issueCertificate({ commonName: 'alone.test' });
    expect(pathFault([alone.x509], anchorIs(ca.x509))).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
  });

  it('names an issuer that is not a CA, in words too', () => {
    const underLeaf = issueCertificate({ commonName: 'under-a-leaf.test', issuer: leaf });
    const fault = pathFault([underLeaf.x509, leaf.x509, inter.x509, ca.x509], anchorIs(ca.x509));
    expect(fault).toBe('INVALID_CA');
    expect(pathFaultText(fault)).toBe('a certificate that issues another in the chain is not a CA');
    expect(pathFaultText('UNABLE_TO_GET_ISSUER_CERT_LOCALLY')).toBeNull();
  });

  it('names a signature that does not verify', () => {
    const impostor = issueCertificate({ commonName: 'path intermediate', ca: true, issuer: ca });
    expect(pathFault([leaf.x509, impostor.x509, ca.x509], anchorIs(ca.x509))).toBe('CERT_SIGNATURE_FAILURE');
  });
});
