import { NetintelError } from '../errors.js';
import type { PlanLimits } from './plans.js';

/** A stored API key as `keys list` shows it: never the key, never its hash. */
export interface ApiKeyRecord {
  kind: 'api-key';
  id: string;
  plan: string;
  label: string | null;
  /** An enterprise key's own limits over its plan's, or null. */
  limits: Partial<PlanLimits> | null;
  createdAt: string;
  revokedAt: string | null;
  /** When a request last used the key (as far as the server has written its usage), or null. */
  lastUsedAt: string | null;
}

/** Requests' items charged to one key on one UTC day, as a server adds them up between writes. */
export interface KeyUsageEntry {
  keyId: string;
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
  /** Items charged (a bulk request counts each of its items). */
  count: number;
  /** The latest of the requests counted. */
  lastUsedAt: Date;
}

/** A key's items charged today and this month, in UTC days. */
export interface KeyUsage {
  today: number;
  month: number;
}

/** What `keys create` returns: the record and the key, shown this once. */
export interface CreatedApiKey {
  record: ApiKeyRecord;
  key: string;
}

export interface CreateKeyInput {
  plan: string;
  label?: string | null;
  limits?: Partial<PlanLimits> | null;
  /** The account the key belongs to (made in the dashboard); none for `keys create`. */
  accountId?: string | null;
}

export type KeyCheck =
  | { ok: true; record: ApiKeyRecord }
  | { ok: false; reason: 'malformed' | 'unknown' | 'revoked'; id: string | null };

/**
 * Where API keys live: SQLite (sqlite-key-store.ts, one machine) or
 * PostgreSQL (postgres-key-store.ts, shared by several servers); the
 * server only needs `check`. Every operation may wait on a database, so
 * each returns a promise.
 */
export interface KeyStore {
  /** Where the keys are, for logs: the file, or the URL with its password hidden. */
  readonly location: string;
  create(input: CreateKeyInput): Promise<CreatedApiKey>;
  list(): Promise<ApiKeyRecord[]>;
  /**
   * Revokes a key by id; revoking a revoked key keeps its first date.
   *
   * @throws NetintelError `not_found` for an unknown id.
   */
  revoke(id: string): Promise<ApiKeyRecord>;
  /** Checks a presented key: hashed, then compared in constant time with the stored hash. */
  check(key: string): Promise<KeyCheck>;
  /**
   * Adds counted usage in one transaction: each (key, day) count is added to
   * the stored one, and a key's last use becomes the later of the stored and
   * the given. Entries of keys that no longer exist (deleted since their
   * requests) are skipped.
   */
  recordUsage(entries: readonly KeyUsageEntry[]): Promise<void>;
  /** Usage of each key on the UTC day of `now` and in its UTC month; 0 and 0 for a key without any. */
  usage(keyIds: readonly string[], now: Date): Promise<Map<string, KeyUsage>>;
  close(): Promise<void>;
}

/** An enterprise key's own limits as a store keeps them: JSON text, or null when there are none. */
export function storedLimits(limits: CreateKeyInput['limits']): string | null {
  return limits && Object.keys(limits).length > 0 ? JSON.stringify(limits) : null;
}

/** The error of a key made for an account the database does not hold. */
export function unknownAccount(id: string): NetintelError {
  return new NetintelError('not_found', `no account has the id ${JSON.stringify(id)}`, { details: { account: id } });
}

/** Usage entries summed per (key, day), sorted, with each key's latest use: what a store writes. */
export interface MergedUsage {
  counts: Array<{ keyId: string; day: string; count: number }>;
  lastUsed: Map<string, Date>;
}

const DAY = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

/**
 * Checks and merges usage entries. Sorted so that servers writing the same
 * keys at once lock their rows in one order.
 *
 * @throws NetintelError `internal` for an entry no server makes (a bad day, count or date).
 */
export function mergeUsage(entries: readonly KeyUsageEntry[]): MergedUsage {
  const counts = new Map<string, { keyId: string; day: string; count: number }>();
  const lastUsed = new Map<string, Date>();
  for (const entry of entries) {
    if (!DAY.test(entry.day) || !Number.isSafeInteger(entry.count) || entry.count < 0 || Number.isNaN(entry.lastUsedAt.getTime())) {
      throw new NetintelError('internal', `a usage entry cannot be stored: ${JSON.stringify(entry)}`, { details: { keyId: entry.keyId, day: entry.day } });
    }
    const slot = `${entry.keyId}\u0000${entry.day}`;
    const counted = counts.get(slot);
    if (counted) counted.count += entry.count;
    else counts.set(slot, { keyId: entry.keyId, day: entry.day, count: entry.count });
    const seen = lastUsed.get(entry.keyId);
    if (!seen || seen < entry.lastUsedAt) lastUsed.set(entry.keyId, entry.lastUsedAt);
  }
  const sorted = [...counts.values()].sort((a, b) => (a.keyId < b.keyId ? -1 : a.keyId > b.keyId ? 1 : a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
  return { counts: sorted, lastUsed: new Map([...lastUsed].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) };
}

/** The UTC day (`YYYY-MM-DD`) of a moment. */
export function utcDay(at: Date | number): string {
  return new Date(at).toISOString().slice(0, 10);
}
