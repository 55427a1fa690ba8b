import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';


/**
 * Account passwords: scrypt (RFC 7914) from node:crypto.
 *
 * Parameters: N = 2^15 (cost), r = 8 (block size), p = 1 (parallelism), a
 * 16-byte random salt and a 32-byte derived key. The stored string carries
 * them, so they can be raised later without invalidating existing hashes:
 *
 *     scrypt$<log2 N>$<r>$<p>$<salt, base64url>$<key, base64url>
 *     scrypt$15$8$1$Jr0yQ...$5n1c...
 *
 * A password is normalised to Unicode NFKC before it is hashed or measured,
 * so the same password typed on two keyboards (full-width digits, ligatures,
 * composed or decomposed accents) gives the same hash.
 *
 * No password holds U+0000. scrypt keys HMAC-SHA-256 with the password
 * (RFC 7914 §2, via PBKDF2), and HMAC pads a key shorter than its 64-byte
 * block with zeros (RFC 2104 §2): `pass phrase` and `pass phrase\0` derive
 * the same key. So a new password with a NUL is refused and a sign-in with
 * one never matches; an older password that ended in NUL still signs in
 * without it, the same key.
 */
export interface ScryptParameters {
  /** log2 of the cost parameter N. */
  log2N: number;
  r: number;
  p: number;
}

export const SCRYPT_DEFAULTS: Readonly<ScryptParameters> = Object.freeze({ log2N: 15, r: 8, p: 1 });
export const SALT_BYTES = 16;
export const KEY_BYTES = 32;

export const PASSWORD_MIN_BYTES = 10;
export const PASSWORD_MAX_BYTES = 256;

// Bounds for parameters read back from a stored string: a corrupt or hostile
// row must not make one verification take minutes or gigabytes.
const LOG2N_RANGE = [10, 20] as const;
const R_RANGE = [1, 32] as const;
const P_RANGE = [1, 16] as const;
const SALT_BYTES_RANGE = [16, 64] as const;
const MAX_SCRYPT_MEMORY_BYTES = 256 * 1024 * 1024;

const BASE64URL = /^[A-Za-z0-9_-]+$/;

function normalise(password: string): Buffer {
  return Buffer.from(password.normalize('NFKC'), 'utf8');
}

function derive(password: Buffer, salt: Buffer, keyBytes: number, parameters: ScryptParameters): Promise<Buffer> {
  const N = 2 ** parameters.log2N;
  // scrypt needs 128 * N * r bytes (RFC 7914 §2); Node's default maxmem is exactly 32 MiB, too little for N = 2^15, r = 8.
  const options: ScryptOptions = { N, r: parameters.r, p: parameters.p, maxmem: 256 * N * parameters.r };
  return new Promise((resolve, reject) => {
    scrypt(password, salt, keyBytes, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/**
 * The reason a new password is refused, or null when it is acceptable:
 * 10 to 256 bytes of UTF-8 after NFKC, not only whitespace, and no NUL.
 */
export function passwordProblem(password: string): string | null {
  if (password.includes('\0')) return 'a password cannot contain the NUL character (U+0000)';
  const bytes = normalise(password).length;
  const tooShort = bytes < PASSWORD_MIN_BYTES;
  const tooLong = bytes > PASSWORD_MAX_BYTES;
  const blank = password.normalize('NFKC').trim() === '';
  if (!tooShort && !tooLong && !blank) return null;
  return `a password must be ${PASSWORD_MIN_BYTES} to ${PASSWORD_MAX_BYTES} bytes long and not only spaces`;
}

/**
 * Hashes a password into the stored form. Any string is accepted: the rules
 * are checked by `passwordProblem` when an account sets a password,
 * not here, so that old passwords keep verifying if the rules change.
 */
export async function hashPassword(password: string, parameters: ScryptParameters = SCRYPT_DEFAULTS): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(normalise(password), salt, KEY_BYTES, parameters);
  return ['scrypt', parameters.log2N, parameters.r, parameters.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

interface StoredHash {
  parameters: ScryptParameters;
  salt: Buffer;
  key: Buffer;
}

function inRange(value: number, [low, high]: readonly [number, number]): boolean {
  return Number.isSafeInteger(value) && value >= low && value <= high;
}

function decimal(text: string): number {
  return /^[1-9][0-9]{0,2}$/.test(text) ? Number(text) : Number.NaN;
}

/** The parts of a stored hash, or null when it is not one this module wrote (or could have). */
export function parseStoredHash(stored: string): StoredHash | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [, log2NText = '', rText = '', pText = '', saltText = '', keyText = ''] = parts;
  const parameters = { log2N: decimal(log2NText), r: decimal(rText), p: decimal(pText) };
  if (!inRange(parameters.log2N, LOG2N_RANGE) || !inRange(parameters.r, R_RANGE) || !inRange(parameters.p, P_RANGE)) return null;
  if (128 * 2 ** parameters.log2N * parameters.r > MAX_SCRYPT_MEMORY_BYTES) return null;
  if (!BASE64URL.test(saltText) || !BASE64URL.test(keyText)) return null;
  const salt = Buffer.from(saltText, 'base64url');
  const key = Buffer.from(keyText, 'base64url');
  // Reject texts that do not round-trip: base64url with stray trailing bits is not what hashPassword writes.
  if (salt.toString('base64url') !== saltText || key.toString('base64url') !== keyText) return null;
  // scrypt's output for a shorter length is a prefix of the longer one (RFC 7914 §6 ends in PBKDF2), so a key
  // cut short would still match: the key length is fixed by the format, not read from the string.
  if (!inRange(salt.length, SALT_BYTES_RANGE) || key.length !== KEY_BYTES) return null;
  return { parameters, salt, key };
}

/**
 * True when the password matches the stored hash. Never throws: a stored
 * string that is malformed, or has parameters out of bounds, gives false,
 * and so does a password with a NUL (see above), after the same work.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseStoredHash(stored);
  if (parsed === null) return false;
  try {
    const key = await derive(normalise(password), parsed.salt, KEY_BYTES, parsed.parameters);
    return timingSafeEqual(key, parsed.key) && !password.includes('\0');
  } catch {
    return false;
  }
}

/**
 * Costs what `verifyPassword` costs against a hash made with the default
 * parameters, and is always false. Call it when the account does not exist,
 * so that the time to answer a sign-in does not tell whether an address has
 * an account.
 */
export async function dummyVerify(password: string): Promise<false> {
  const key = await derive(normalise(password), randomBytes(SALT_BYTES), KEY_BYTES, SCRYPT_DEFAULTS);
  timingSafeEqual(key, DUMMY_KEY);
  return false;
}

const DUMMY_KEY = randomBytes(KEY_BYTES);
