import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * API keys: `ni_<id>_<secret>`.
 *
 * - `id`: 12 characters of base32 (60 random bits), the key's public name
 *   (`keys list`, `keys revoke ID`, logs); it lets the server find the stored
 *   hash without scanning.
 * - `secret`: 32 random bytes (256 bits) in base64url, 43 characters.
 *
 * Only the SHA-256 of the whole key is stored. A slow password hash would
 * add nothing: 256 random bits cannot be guessed, so the hash only has to be
 * one-way. Presented keys are compared by their hashes with
 * `crypto.timingSafeEqual`, so the time taken does not depend on how many
 * leading bytes match.
 */
export const API_KEY_PATTERN = /^ni_([a-z2-7]{12})_([A-Za-z0-9_-]{43})$/;

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

export interface NewApiKey {
  id: string;
  /** The key itself: shown once, never stored. */
  key: string;
  /** SHA-256 of the key (32 bytes), what the store keeps. */
  hash: Buffer;
}

/** 12 random base32 characters (60 bits): the id of a key, and of an account. */
export function randomId(): string {
  let id = '';
  for (const byte of randomBytes(12)) id += BASE32[byte & 31];
  return id;
}

export function generateApiKey(): NewApiKey {
  const id = randomId();
  const key = `ni_${id}_${randomBytes(32).toString('base64url')}`;
  return { id, key, hash: hashApiKey(key) };
}

/** The id of a well-formed key, or null for anything else (the key is then "malformed"). */
export function apiKeyId(key: string): string | null {
  if (key.length !== 59) return null;
  const match = API_KEY_PATTERN.exec(key);
  return match ? match[1]! : null;
}

/** SHA-256 of a key; the one-shot `crypto.hash` costs half of a Hash object on every request. */
export function hashApiKey(key: string): Buffer {
  return hash('sha256', key, 'buffer');
}

/** Compares two key hashes in constant time (both are 32 bytes). */
export function hashesMatch(stored: Uint8Array, presented: Uint8Array): boolean {
  return stored.length === presented.length && timingSafeEqual(stored, presented);
}

/** Shows a key id with the key's shape, for messages and logs (`ni_abcdefghijkl_…`). */
export function maskedKey(id: string): string {
  return `ni_${id}_…`;
}
