import { createHash } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { createLinkToken, hashLinkToken, LINK_LIFETIME_MS } from '../../src/accounts/link-tokens.js';

const HOUR = 3_600_000;
const T0 = new Date('2026-11-27T09:00:00Z');

describe('link tokens', () => {
  it('makes 32 random bytes in base64url and stores only their SHA-256', () => {
    const made = createLinkToken('verify-email', T0);
    expect(made.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(made.token, 'base64url')).toHaveLength(32);
    expect(made.hash).toBe(createHash('sha256').update(made.token).digest('hex'));
    expect(made.hash).toBe(hashLinkToken(made.token));
    expect(made.hash).not.toContain(made.token);
    expect(createLinkToken('verify-email', T0).token).not.toBe(made.token);
  });

  it('lets a verification link live 24 hours and a reset link 1 hour', () => {
    expect(LINK_LIFETIME_MS['verify-email']).toBe(24 * HOUR);
    expect(LINK_LIFETIME_MS['reset-password']).toBe(HOUR);
    expect(createLinkToken('verify-email', T0).expiresAt.getTime()).toBe(T0.getTime() + 24 * HOUR);
    expect(createLinkToken('reset-password', T0).expiresAt.getTime()).toBe(T0.getTime() + HOUR);
  });
});
