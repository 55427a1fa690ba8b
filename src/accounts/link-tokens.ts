import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Single-use, expiring tokens for the links mailed to an account holder:
 * e-mail verification and password reset.
 *
 * - The token is 32 random bytes in base64url (43 characters), put in the
 *   link and never stored.
 * - The caller stores only its SHA-256 (hex), the expiry, and when it was
 *   used. 256 random bits cannot be guessed, so a fast one-way hash is
 *   enough; a leaked table does not give working links.
 * - A presented token is compared with the stored hash by
 *   `crypto.timingSafeEqual` on the two digests.
 */
export type LinkPurpose = 'verify-email' | 'reset-password';

const HOUR_MS = 3_600_000;

export const LINK_LIFETIME_MS: Readonly<Record<LinkPurpose, number>> = Object.freeze({
  'verify-email': 24 * HOUR_MS,
  'reset-password': 1 * HOUR_MS,
});

export const LINK_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface NewLinkToken {
  /** Goes into the link; shown once, never stored. */
  token: string;
  /** SHA-256 of the token, 64 hex digits: what the caller stores. */
  hash: string;
  expiresAt: Date;
}

export interface StoredLinkToken {
  hash: string;
  expiresAt: Date;
  /** When the link was followed; null while unused. */
  usedAt: Date | null;
}

export type LinkTokenStatus = 'ok' | 'expired' | 'used' | 'unknown';

/** SHA-256 of a token as 64 hex digits, the key a store looks tokens up by. */
export function hashLinkToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function createLinkToken(purpose: LinkPurpose, now: Date = new Date()): NewLinkToken {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashLinkToken(token), expiresAt: new Date(now.getTime() + LINK_LIFETIME_MS[purpose]) };
}

/**
 * What a presented token is worth at `now` against the stored row (or
 * undefined when no row was found): `unknown` when it does not match,
 * else `used` once followed, else `expired` from `expiresAt` on, else `ok`.
 * The caller marks the row used when it acts on `ok`.
 */
export function checkLinkToken(presented: string, stored: StoredLinkToken | undefined, now: Date): LinkTokenStatus {
  if (stored === undefined || !LINK_TOKEN_PATTERN.test(presented) || !/^[0-9a-f]{64}$/i.test(stored.hash)) return 'unknown';
  const presentedDigest = createHash('sha256').update(presented, 'utf8').digest();
  if (!timingSafeEqual(presentedDigest, Buffer.from(stored.hash, 'hex'))) return 'unknown';
  if (stored.usedAt !== null) return 'used';
  if (now.getTime() >= stored.expiresAt.getTime()) return 'expired';
  return 'ok';
}
