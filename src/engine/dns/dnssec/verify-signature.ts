import { createPublicKey, verify, type KeyObject } from 'node:crypto';

/**
 * DNSSEC signature algorithms checked with node:crypto: RSA/SHA-256 (8) and
 * RSA/SHA-512 (10) per RFC 5702, ECDSA P-256 (13) and P-384 (14) per
 * RFC 6605, Ed25519 (15) and Ed448 (16) per RFC 8080. Others are unknown to
 * the validator, which then treats the zone as insecure (RFC 4035 §5.2).
 */
const ALGORITHMS: Record<number, { name: string; hash: string | null }> = {
  8: { name: 'RSASHA256', hash: 'sha256' },
  10: { name: 'RSASHA512', hash: 'sha512' },
  13: { name: 'ECDSAP256SHA256', hash: 'sha256' },
  14: { name: 'ECDSAP384SHA384', hash: 'sha384' },
  15: { name: 'ED25519', hash: null },
  16: { name: 'ED448', hash: null },
};

export function isSupportedAlgorithm(algorithm: number): boolean {
  return algorithm in ALGORITHMS;
}

/** The mnemonic of an algorithm number (IANA "DNS Security Algorithm Numbers"). */
export function algorithmName(algorithm: number): string {
  return ALGORITHMS[algorithm]?.name ?? OTHER_ALGORITHMS[algorithm] ?? `ALG${algorithm}`;
}

/** The number of an algorithm mnemonic (`ECDSAP256SHA256`), or null. */
export function algorithmNumber(name: string): number | null {
  const upper = name.toUpperCase();
  for (const [number, spec] of Object.entries(ALGORITHMS)) if (spec.name === upper) return Number(number);
  for (const [number, mnemonic] of Object.entries(OTHER_ALGORITHMS)) if (mnemonic === upper) return Number(number);
  return null;
}

const OTHER_ALGORITHMS: Record<number, string> = { 1: 'RSAMD5', 3: 'DSA', 5: 'RSASHA1', 6: 'DSA-NSEC3-SHA1', 7: 'RSASHA1-NSEC3-SHA1', 12: 'ECC-GOST' };

/**
 * True when `signature` is a valid signature of `data` by the DNSKEY public
 * key field `publicKey` under `algorithm`. A key that cannot be read gives
 * false, as a signature that does not verify.
 */
export function verifySignature(algorithm: number, publicKey: Buffer, data: Buffer, signature: Buffer): boolean {
  const spec = ALGORITHMS[algorithm];
  if (!spec) return false;
  let key: KeyObject;
  try {
    key = importKey(algorithm, publicKey);
  } catch {
    return false;
  }
  try {
    if (algorithm === 13 || algorithm === 14) {
      // RFC 6605 §4: the signature is r || s, each as long as the curve's order.
      return verify(spec.hash, data, { key, dsaEncoding: 'ieee-p1363' }, signature);
    }
    return verify(spec.hash, data, key, signature);
  } catch {
    return false;
  }
}

function importKey(algorithm: number, publicKey: Buffer): KeyObject {
  const base64url = (bytes: Buffer): string => bytes.toString('base64url');
  switch (algorithm) {
    case 8:
    case 10: {
      // RFC 3110 §2: exponent length (one octet, or zero and then two), exponent, modulus.
      let at = 1;
      let exponentLength = publicKey[0]!;
      if (exponentLength === 0) {
        exponentLength = publicKey.readUInt16BE(1);
        at = 3;
      }
      const e = publicKey.subarray(at, at + exponentLength);
      const n = publicKey.subarray(at + exponentLength);
      if (e.length === 0 || n.length === 0) throw new Error('bad RSA key');
      return createPublicKey({ key: { kty: 'RSA', n: base64url(n), e: base64url(e) }, format: 'jwk' });
    }
    case 13:
    case 14: {
      // RFC 6605 §4: the key is x || y.
      const half = algorithm === 13 ? 32 : 48;
      if (publicKey.length !== half * 2) throw new Error('bad ECDSA key');
      const crv = algorithm === 13 ? 'P-256' : 'P-384';
      return createPublicKey({
        key: { kty: 'EC', crv, x: base64url(publicKey.subarray(0, half)), y: base64url(publicKey.subarray(half)) },
        format: 'jwk',
      });
    }
    default:
      // RFC 8080 §3: the key is the raw public key.
      return createPublicKey({ key: { kty: 'OKP', crv: algorithm === 15 ? 'Ed25519' : 'Ed448', x: base64url(publicKey) }, format: 'jwk' });
  }
}
