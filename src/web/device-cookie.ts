import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Device cookies (OWASP, "Slow Down Online Guessing Attacks with Device
 * Cookies"): after a successful sign-in the browser gets a cookie naming the
 * account and a random device id, signed by the server. Sign-in attempts and
 * mail requests from a browser that presents a valid one for the account
 * are counted per device instead of per address, so an attacker who fails
 * many times elsewhere cannot lock the owner out of their own account.
 *
 * The cookie is not a credential: it proves only that this browser signed
 * in to the account once. It is signed with a key derived from the session
 * key (kept in the database), so every server reads it.
 */
export const DEVICE_COOKIE_SECONDS = 365 * 24 * 3600;

export interface Device {
  accountId: string;
  /** Random, 22 characters: what the per-device throttles count. */
  id: string;
}

export class DeviceCookies {
  private readonly key: Buffer;

  constructor(sessionKey: Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', sessionKey, Buffer.alloc(0), 'netintel device cookie', 32));
  }

  /** A new cookie value for a browser that has just signed in to the account. */
  issue(accountId: string): string {
    const id = randomBytes(16).toString('base64url');
    return `${accountId}.${id}.${this.mac(accountId, id)}`;
  }

  /** The device a cookie value names, when its signature holds; else null. */
  read(value: string | undefined): Device | null {
    if (value === undefined) return null;
    const match = /^([a-z2-7]{12})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/.exec(value);
    if (!match) return null;
    const [, accountId, id, mac] = match as unknown as [string, string, string, string];
    const expected = Buffer.from(this.mac(accountId, id), 'base64url');
    const given = Buffer.from(mac, 'base64url');
    return given.length === expected.length && timingSafeEqual(given, expected) ? { accountId, id } : null;
  }

  private mac(accountId: string, id: string): string {
    return createHmac('sha256', this.key).update(`${accountId}.${id}`).digest('base64url');
  }
}
