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
  close(): Promise<void>;
}

/** The error of a key made for an account the database does not hold. */
/** An enterprise key's own limits as a store keeps them: JSON text, or null when there are none. */
export function storedLimits(limits: CreateKeyInput['limits']): string | null {
  return limits && Object.keys(limits).length > 0 ? JSON.stringify(limits) : null;
}

export function unknownAccount(id: string): NetintelError {
  return new NetintelError('not_found', `no account has the id ${JSON.stringify(id)}`, { details: { account: id } });
}
