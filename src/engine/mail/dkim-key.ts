import { createPublicKey, type KeyObject } from 'node:crypto';

/** What the public key of a record is, read from the key itself. */
export interface DkimPublicKey {
  type: 'rsa' | 'ed25519';
  /** RSA modulus length, or 256 for Ed25519. */
  bits: number;
  /**
   * How p= encodes it: `spki` (an RSA key in a SubjectPublicKeyInfo, what
   * key generators publish), `pkcs1` (a bare RSAPublicKey, the form RFC
   * 6376 §3.6.1 names for k=rsa, which some verifiers still refuse), `raw`
   * (the 32 octets of an Ed25519 key, RFC 8463 §4.2) or `spki-ed25519` (an
   * Ed25519 key wrapped in SubjectPublicKeyInfo, which RFC 8463 does not
   * provide for).
   */
  encoding: 'spki' | 'pkcs1' | 'raw' | 'spki-ed25519';
}

/** Why a key could not be read. */
export interface DkimKeyProblem {
  message: string;
}

/** DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410 §4) before the 32 key octets. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** A key read from p=, with node:crypto's object of it for verifying. */
export interface LoadedDkimKey {
  key: DkimPublicKey;
  object: KeyObject;
}

/**
 * Reads the key of a record: `p=` (base64, whitespace already removed)
 * interpreted as `k=` says. Never throws.
 */
export function readDkimKey(keyType: string, base64: string): DkimPublicKey | DkimKeyProblem {
  const loaded = loadDkimKey(keyType, base64);
  return 'message' in loaded ? loaded : loaded.key;
}

/**
 * {@link readDkimKey} with the KeyObject: RSA from a SubjectPublicKeyInfo
 * or a bare RSAPublicKey (RFC 6376 §3.6.1 names the latter; key generators
 * publish the former, and both carry the same modulus and exponent);
 * Ed25519 from its 32 raw octets (RFC 8463 §4.2) or, read with a warning
 * by the key check, from a SubjectPublicKeyInfo (RFC 8410 §4), which holds
 * the same 32 octets behind a fixed prefix. Never throws.
 */
export function loadDkimKey(keyType: string, base64: string): LoadedDkimKey | DkimKeyProblem {
  const der = Buffer.from(base64, 'base64');
  if (der.length === 0) return { message: 'p= holds no key octets' };
  if (keyType === 'ed25519') {
    if (der.length === 32) return keyOf(tryKey(() => createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, der]), format: 'der', type: 'spki' })), 'raw', 'ed25519');
    const wrapped = tryKey(() => createPublicKey({ key: der, format: 'der', type: 'spki' }));
    if (wrapped && wrapped.asymmetricKeyType === 'ed25519') return keyOf(wrapped, 'spki-ed25519', 'ed25519');
    return { message: `k=ed25519 needs the 32 octets of the key in p= (RFC 8463 §4.2); p= holds ${der.length} octets` };
  }
  if (keyType !== 'rsa') return { message: `k=${keyType} is not a key type that can be read` };
  const spki = tryKey(() => createPublicKey({ key: der, format: 'der', type: 'spki' }));
  if (spki) return keyOf(spki, 'spki', 'rsa');
  const pkcs1 = tryKey(() => createPublicKey({ key: der, format: 'der', type: 'pkcs1' }));
  if (pkcs1) return keyOf(pkcs1, 'pkcs1', 'rsa');
  return { message: 'p= does not decode to an RSA public key (an RSAPublicKey, bare or in a SubjectPublicKeyInfo)' };
}

export function isDkimKeyProblem(value: DkimPublicKey | DkimKeyProblem): value is DkimKeyProblem {
  return 'message' in value;
}

function keyOf(key: KeyObject | null, encoding: DkimPublicKey['encoding'], expected: 'rsa' | 'ed25519'): LoadedDkimKey | DkimKeyProblem {
  if (!key) return { message: `p= does not decode to an ${expected === 'rsa' ? 'RSA' : 'Ed25519'} public key` };
  if (key.asymmetricKeyType !== expected) return { message: `p= holds a ${key.asymmetricKeyType ?? 'unknown'} key, but k= says ${expected}` };
  const bits = expected === 'ed25519' ? 256 : (key.asymmetricKeyDetails?.modulusLength ?? 0);
  return { key: { type: expected, bits, encoding }, object: key };
}

function tryKey(make: () => KeyObject): KeyObject | null {
  try {
    return make();
  } catch {
    return null;
  }
}
