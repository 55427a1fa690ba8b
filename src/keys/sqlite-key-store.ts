import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { NetintelError } from '../errors.js';
import { apiKeyId, generateApiKey, hashApiKey, hashesMatch } from './api-key.js';
import {
  mergeUsage,
  storedLimits,
  unknownAccount,
  utcDay,
  type ApiKeyRecord,
  type CreateKeyInput,
  type CreatedApiKey,
  type KeyCheck,
  type KeyStore,
  type KeyUsage,
  type KeyUsageEntry,
} from './key-store.js';
import type { PlanLimits } from './plans.js';
import { migrateSqlite } from './sqlite-schema.js';

export interface KeyRow {
  id: string;
  key_hash: Buffer;
  plan: string;
  label: string | null;
  limits: string | null;
  created_at: string;
  revoked_at: string | null;
  /** Absent from the row `create` builds: a new key has no use yet. */
  last_used_at?: string | null;
  account_id?: string | null;
  /** When the key's account was disabled, from the join in `check`. */
  account_disabled_at?: string | null;
}

export interface SqliteKeyStoreOptions {
  /** Clock for created/revoked dates. */
  now?: () => Date;
  /**
   * How long a checked key is served from memory before the store looks
   * for changes made by other processes (`netintel keys revoke` while the
   * server runs), in milliseconds of real time; 0 looks every time.
   * Changes made through this store take effect at once.
   */
  recheckMs?: number;
}

/**
 * API keys in SQLite (better-sqlite3), WAL mode so `netintel keys ...` can
 * write while a server reads. Holds only SHA-256 hashes of keys. A database
 * it creates is readable by its owner only (0600, in a 0700 directory if it
 * makes one); an existing file keeps its mode.
 *
 * @throws NetintelError `usage` when the database cannot be opened.
 */
export function openSqliteKeyStore(path: string, options: SqliteKeyStoreOptions = {}): KeyStore {
  const now = options.now ?? (() => new Date());
  const recheckMs = options.recheckMs ?? 1000;
  const db = openKeyDatabase(path);
  const insert = db.prepare(
    'INSERT INTO api_keys (id, key_hash, plan, label, limits, created_at, account_id) VALUES (@id, @key_hash, @plan, @label, @limits, @created_at, @account_id)',
  );
  const byId = db.prepare<[string], KeyRow>(
    'SELECT k.*, a.disabled_at AS account_disabled_at FROM api_keys k LEFT JOIN accounts a ON a.id = k.account_id WHERE k.id = ?',
  );
  const all = db.prepare<[], KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id');
  const revokeStatement = db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
  const accountExists = db.prepare<[string], { id: string }>('SELECT id FROM accounts WHERE id = ?');
  const dataVersion = db.prepare<[], { data_version: number }>('PRAGMA data_version');
  // A key that is gone changes no row, and its usage is skipped.
  const touch = db.prepare<[{ at: string; id: string }]>(
    'UPDATE api_keys SET last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < @at THEN @at ELSE last_used_at END WHERE id = @id',
  );
  const addUsage = db.prepare<[string, string, number]>(
    'INSERT INTO key_usage (key_id, day, count) VALUES (?, ?, ?) ON CONFLICT (key_id, day) DO UPDATE SET count = count + excluded.count',
  );
  const usageOf = db.prepare<[{ ids: string; today: string; first: string; last: string }], { key_id: string; today: number; month: number }>(
    `SELECT key_id, sum(CASE WHEN day = @today THEN count ELSE 0 END) AS today, sum(count) AS month
       FROM key_usage WHERE key_id IN (SELECT value FROM json_each(@ids)) AND day BETWEEN @first AND @last GROUP BY key_id`,
  );
  const writeUsage = db.transaction((entries: readonly KeyUsageEntry[]) => {
    const { counts, lastUsed } = mergeUsage(entries);
    const known = new Set<string>();
    for (const [id, at] of lastUsed) if (touch.run({ at: at.toISOString(), id }).changes > 0) known.add(id);
    for (const { keyId, day, count } of counts) if (known.has(keyId)) addUsage.run(keyId, day, count);
    return known;
  });

  // Checked keys by id: their hash and record, until another process writes.
  const cache = new Map<string, { hash: Buffer; record: ApiKeyRecord; accountDisabled: boolean } | null>();
  let seenVersion = dataVersion.get()!.data_version;
  let lastLook = performance.now();
  // A stand-in hash compared when the id is unknown, so that an unknown key costs what a wrong one does.
  const decoy = hashApiKey('ni_aaaaaaaaaaaa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');

  /** Forgets every checked key once another process has written the database (looked at every `recheckMs`). */
  const lookForChanges = (): void => {
    const clock = performance.now();
    if (clock - lastLook < recheckMs) return;
    lastLook = clock;
    const version = dataVersion.get()!.data_version;
    if (version !== seenVersion) {
      seenVersion = version;
      cache.clear();
    }
  };

  const cached = (id: string): { hash: Buffer; record: ApiKeyRecord; accountDisabled: boolean } | null => {
    lookForChanges();
    let entry = cache.get(id);
    if (entry === undefined) {
      const row = byId.get(id);
      entry = row ? { hash: row.key_hash, record: keyRecordOf(row), accountDisabled: (row.account_disabled_at ?? null) !== null } : null;
      if (cache.size >= 10_000) cache.delete(cache.keys().next().value!);
      cache.set(id, entry);
    }
    return entry;
  };

  return {
    location: path,
    async create(input: CreateKeyInput): Promise<CreatedApiKey> {
      if (input.accountId != null && !accountExists.get(input.accountId)) throw unknownAccount(input.accountId);
      const created = generateApiKey();
      const row: KeyRow = {
        id: created.id,
        key_hash: created.hash,
        plan: input.plan,
        label: input.label ?? null,
        limits: storedLimits(input.limits),
        created_at: now().toISOString(),
        revoked_at: null,
        account_id: input.accountId ?? null,
      };
      insert.run(row);
      cache.delete(row.id);
      return { record: keyRecordOf(row), key: created.key };
    },
    list: async () => all.all().map(keyRecordOf),
    async revoke(id: string): Promise<ApiKeyRecord> {
      revokeStatement.run(now().toISOString(), id);
      cache.delete(id);
      const row = byId.get(id);
      if (!row) throw new NetintelError('not_found', `no API key has the id ${JSON.stringify(id)}`, { details: { id } });
      return keyRecordOf(row);
    },
    async check(key: string): Promise<KeyCheck> {
      const id = apiKeyId(key);
      if (id === null) return { ok: false, reason: 'malformed', id: null };
      const entry = cached(id);
      const presented = hashApiKey(key);
      const matches = hashesMatch(entry ? entry.hash : decoy, presented);
      if (!entry || !matches) return { ok: false, reason: 'unknown', id };
      // A disabled account's keys are refused as revoked ones are.
      if (entry.record.revokedAt !== null || entry.accountDisabled) return { ok: false, reason: 'revoked', id };
      return { ok: true, record: entry.record };
    },
    async recordUsage(entries: readonly KeyUsageEntry[]): Promise<void> {
      if (entries.length === 0) return;
      // Checked records carry lastUsedAt: those of the keys written are read afresh.
      for (const id of writeUsage.immediate(entries)) cache.delete(id);
    },
    async usage(keyIds: readonly string[], at: Date): Promise<Map<string, KeyUsage>> {
      const today = utcDay(at);
      const month = today.slice(0, 7);
      const result = new Map<string, KeyUsage>(keyIds.map((id) => [id, { today: 0, month: 0 }]));
      if (keyIds.length === 0) return result;
      for (const row of usageOf.all({ ids: JSON.stringify(keyIds), today, first: `${month}-01`, last: `${month}-31` })) result.set(row.key_id, { today: row.today, month: row.month });
      return result;
    },
    close: async () => {
      db.close();
    },
  };
}

/**
 * The key database file, opened and migrated to the current schema: the
 * one database of keys and accounts (WAL, so servers and the CLI can use it
 * at once).
 */
export function openKeyDatabase(path: string): Database.Database {
  try {
    prepareKeyDbFile(path);
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 5000');
    // key_usage rows go with their key (ON DELETE CASCADE). better-sqlite3's build turns foreign keys on
    // by default where SQLite's own is off: said here so that the cascade does not rest on a build option.
    db.pragma('foreign_keys = ON');
    migrateSqlite(db);
    return db;
  } catch (error) {
    throw new NetintelError('usage', `cannot open the key database ${path}: ${(error as Error).message}`, {
      cause: error,
      details: { path },
    });
  }
}

/**
 * Makes the database file before SQLite opens it. Key hashes and plans are
 * the operator's alone: a directory made here is 0700, and the file is made
 * 0600, since SQLite gives the -wal and -shm files the database file's mode.
 */
export function prepareKeyDbFile(path: string): void {
  if (path === ':memory:' || path.startsWith('file:')) return;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  closeSync(openSync(path, 'a', 0o600));
}

/** The record of a row of api_keys. */
export function keyRecordOf(row: Omit<KeyRow, 'account_disabled_at'>): ApiKeyRecord {
  return {
    kind: 'api-key',
    id: row.id,
    plan: row.plan,
    label: row.label,
    limits: row.limits === null ? null : (JSON.parse(row.limits) as Partial<PlanLimits>),
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at ?? null,
  };
}
