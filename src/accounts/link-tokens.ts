import { createHash, randomBytes } from 'node:crypto';

/**
 * Single-use, expiring tokens for the links mailed to an account holder:
 * e-mail verification and password reset.
 *
 * - The token is 32 random bytes in base64url (43 characters), put in the
 *   link and never stored.
 * - The caller stores only its SHA-256 (hex), the expiry, and when it was
 *   used. 256 random bits cannot be guessed, so a fast one-way hash is
 *   enough; a leaked table does not give working links.
 * - A presented token is looked up by its hash (AccountStore.consumeLink):
 *   what a lookup's timing could tell is about a hash, not the token.
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

/** SHA-256 of a token as 64 hex digits, the key a store looks tokens up by. */
export function hashLinkToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function createLinkToken(purpose: LinkPurpose, now: Date = new Date()): NewLinkToken {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashLinkToken(token), expiresAt: new Date(now.getTime() + LINK_LIFETIME_MS[purpose]) };
}
