import { createHash } from 'node:crypto';

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { checkLinkToken, createLinkToken, hashLinkToken, LINK_LIFETIME_MS, type StoredLinkToken } from '../../src/accounts/link-tokens.js';

const HOUR = 3_600_000;
const T0 = new Date('2026-11-27T09:00:00Z');

function stored(hash: string, expiresAt: Date, usedAt: Date | null = null): StoredLinkToken {
  return { hash, expiresAt, usedAt };
}

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

  it('answers ok, expired, used and unknown', () => {
    const { token, hash, expiresAt } = createLinkToken('reset-password', T0);
    const fresh = stored(hash, expiresAt);
    expect(checkLinkToken(token, fresh, T0)).toBe('ok');
    expect(checkLinkToken(token, fresh, new Date(expiresAt.getTime() - 1))).toBe('ok');
    expect(checkLinkToken(token, fresh, expiresAt)).toBe('expired');
    expect(checkLinkToken(token, fresh, new Date(T0.getTime() + 2 * HOUR))).toBe('expired');
    expect(checkLinkToken(token, stored(hash, expiresAt, new Date(T0.getTime() + 60_000)), T0)).toBe('used');
    // A used link stays used after it would have expired.
    expect(checkLinkToken(token, stored(hash, expiresAt, T0), new Date(T0.getTime() + 2 * HOUR))).toBe('used');
    expect(checkLinkToken(token, undefined, T0)).toBe('unknown');
    expect(checkLinkToken(createLinkToken('reset-password', T0).token, fresh, T0)).toBe('unknown');
    expect(checkLinkToken(`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, fresh, T0)).toBe('unknown');
    expect(checkLinkToken('', fresh, T0)).toBe('unknown');
    expect(checkLinkToken(`${token} `, fresh, T0)).toBe('unknown');
    expect(checkLinkToken(token, stored('not hex', expiresAt), T0)).toBe('unknown');
    expect(checkLinkToken(token, stored(hash.slice(2), expiresAt), T0)).toBe('unknown');
  });

  it('never accepts a token against another token\'s hash (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ minLength: 32, maxLength: 32 }), (a, b) => {
        fc.pre(!Buffer.from(a).equals(Buffer.from(b)));
        const tokenA = Buffer.from(a).toString('base64url');
        const tokenB = Buffer.from(b).toString('base64url');
        const expiresAt = new Date(T0.getTime() + HOUR);
        expect(checkLinkToken(tokenA, stored(hashLinkToken(tokenB), expiresAt), T0)).toBe('unknown');
        expect(checkLinkToken(tokenB, stored(hashLinkToken(tokenB), expiresAt), T0)).toBe('ok');
      }),
      { numRuns: 500 },
    );
  });

  it('answers unknown for anything presented that is not the token (property)', () => {
    const { token, hash, expiresAt } = createLinkToken('verify-email', T0);
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (presented) => {
        fc.pre(presented !== token);
        expect(checkLinkToken(presented, stored(hash, expiresAt), T0)).toBe('unknown');
      }),
      { numRuns: 500 },
    );
  });
});
