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
}

export type KeyCheck =
  | { ok: true; record: ApiKeyRecord }
  | { ok: false; reason: 'malformed' | 'unknown' | 'revoked'; id: string | null };

/**
 * Where API keys live. The SQLite store (sqlite-key-store.ts) is the one
 * netintel ships; the server only needs `check` and `generation`.
 */
export interface KeyStore {
  create(input: CreateKeyInput): CreatedApiKey;
  list(): ApiKeyRecord[];
  /**
   * Revokes a key by id; revoking a revoked key keeps its first date.
   *
   * @throws NetintelError `not_found` for an unknown id.
   */
  revoke(id: string): ApiKeyRecord;
  /** Checks a presented key: hashed, then compared in constant time with the stored hash. */
  check(key: string): KeyCheck;
  /**
   * A number that changes whenever an answer of `check` may have changed:
   * a key created or revoked through this store, or the store written by
   * another process (seen as soon as `check` would see it). A caller may
   * reuse an answer of `check` for the same key while this stays the same.
   */
  generation(): number;
  close(): void;
}
