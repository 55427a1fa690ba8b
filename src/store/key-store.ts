import { NetintelError } from '../errors.js';
import { apiKeyId, generateApiKey, hashApiKey, hashesMatch } from '../keys/api-key.js';
import type { PlanLimits } from '../keys/plans.js';
import { placeholders, type Database } from './database.js';

/** A stored API key as `keys list` shows it: never the key, never its hash. */
export interface ApiKeyRecord {
  kind: 'api-key';
  id: string;
  plan: string;
  label: string | null;
  /** An enterprise key's own limits over its plan's, or null. */
  limits: Partial<PlanLimits> | null;
  created_at: string;
  revoked_at: string | null;
  /** When a request last used the key (as far as the server has written its usage), or null. */
  last_used_at: string | null;
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
  /**
   * The most active keys the account may hold: the key is made only while it
   * holds fewer, counted in the transaction that adds it (with the account's
   * row locked on PostgreSQL), so a burst of requests on several servers
   * makes no more. Refused with NetintelError `forbidden` (details.limit).
   */
  maxActiveOfAccount?: number;
}

export type KeyCheck =
  /** `accountId`: the account the key belongs to, whose plan's allowance its requests share; null for an operator's key. */
  | { ok: true; record: ApiKeyRecord; accountId: string | null }
  | { ok: false; reason: 'malformed' | 'unknown' | 'revoked'; id: string | null };

/**
 * Where API keys live (the store's database: SQLite on one machine,
 * PostgreSQL shared by several servers); the server only needs `check`.
 * Every operation may wait on a database, so each returns a promise.
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
  /**
   * Checks a presented key: hashed, then compared in constant time with the
   * stored hash. Answers at once when the key's record is in memory (every
   * request of a key after its first, on SQLite), so that the server does
   * not wait a turn of the event loop for it; otherwise once the database has.
   */
  check(key: string): KeyCheck | Promise<KeyCheck>;
  /**
   * Adds counted usage in one transaction: each (key, day) count is added to
   * the stored one, and a key's last use becomes the later of the stored and
   * the given. Entries of keys that no longer exist (deleted since their
   * requests) are skipped.
   */
  recordUsage(entries: readonly KeyUsageEntry[]): Promise<void>;
  /** Drops the keys kept in memory, after this process changed keys through another store (an account deleted, disabled or given another plan). */
  forgetChecked(): void;
  /** Usage of each key on the UTC day of `now` and in its UTC month; 0 and 0 for a key without any. */
  usage(keyIds: readonly string[], now: Date): Promise<Map<string, KeyUsage>>;
  /** Every key used on the UTC day of `now` (as written so far), with its account and its count that day. */
  usedOn(now: Date): Promise<Array<{ keyId: string; accountId: string | null; count: number }>>;
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
      throw new NetintelError('internal', `a usage entry cannot be stored: ${JSON.stringify(entry)}`, { details: { key_id: entry.keyId, day: entry.day } });
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

export interface KeyRow {
  id: string;
  key_hash: Buffer;
  plan: string;
  label: string | null;
  limits: string | null;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
  account_id: string | null;
}

export interface KeyStoreOptions {
  /** Clock for created/revoked dates. */
  now?: () => Date;
  /**
   * How long a checked key is served from memory before the store looks
   * whether the database changed (`netintel keys revoke` while the server
   * runs), in milliseconds of real time; 0 looks every time. Changes made
   * through this process take effect at once. Default: the database's
   * changeMarkMaxAgeMs (1 s on SQLite; 0 on PostgreSQL, which hears changes).
   */
  recheckMs?: number;
}

/** A row of api_keys with whether its account is disabled. */
type KeyRowWithAccount = KeyRow & { account_disabled_at: string | null };

interface CheckedKey {
  hash: Buffer;
  record: ApiKeyRecord;
  accountId: string | null;
  accountDisabled: boolean;
}

/** Usage rows added by one statement (three parameters each; SQLite allows 32,766). */
const USAGE_ROWS_PER_STATEMENT = 500;

/** Keys checked and kept in memory at most. */
const CACHED_KEYS = 10_000;

/**
 * The key store over the store's database. Holds only SHA-256 hashes of
 * keys. A key revoked through any process is refused from the next check
 * that looks at the database (at most `recheckMs` later on SQLite; on
 * PostgreSQL as soon as the change's notification arrives).
 */
export function createKeyStore(db: Database, options: KeyStoreOptions = {}): KeyStore {
  const now = options.now ?? (() => new Date());
  const recheckMs = options.recheckMs ?? db.changeMarkMaxAgeMs;
  const byId = (id: string) =>
    db.one<KeyRowWithAccount>(
      'SELECT k.*, a.disabled_at AS account_disabled_at FROM api_keys k LEFT JOIN accounts a ON a.id = k.account_id WHERE k.id = $1',
      [id],
    );
  // A stand-in hash compared when the id is unknown, so that an unknown key costs what a wrong one does.
  const decoy = hashApiKey('ni_aaaaaaaaaaaa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');

  const cache = checkedKeys(db, recheckMs, byId);

  /** The answer about a presented key, from its id's stored entry (null: no such id). */
  const verdict = (key: string, id: string, entry: CheckedKey | null): KeyCheck => {
    const matches = hashesMatch(entry ? entry.hash : decoy, hashApiKey(key));
    if (!entry || !matches) return { ok: false, reason: 'unknown', id };
    // A disabled account's keys are refused as revoked ones are.
    if (entry.record.revoked_at !== null || entry.accountDisabled) return { ok: false, reason: 'revoked', id };
    return { ok: true, record: entry.record, accountId: entry.accountId };
  };

  return {
    location: db.location,
    async create(input: CreateKeyInput): Promise<CreatedApiKey> {
      const created = generateApiKey();
      const row: KeyRow = {
        id: created.id,
        key_hash: created.hash,
        plan: input.plan,
        label: input.label ?? null,
        limits: storedLimits(input.limits),
        created_at: now().toISOString(),
        revoked_at: null,
        last_used_at: null,
        account_id: input.accountId ?? null,
      };
      await db.transaction(async (tx) => {
        // In the transaction that adds the key, so that a key cannot outlive an account deleted at the same moment,
        // and on PostgreSQL holding the account's row until it commits: another key of the account waits to be counted.
        const lock = db.dialect === 'postgres' ? ' FOR UPDATE' : '';
        if (row.account_id !== null && !(await tx.one(`SELECT id FROM accounts WHERE id = $1${lock}`, [row.account_id]))) throw unknownAccount(row.account_id);
        if (row.account_id !== null && input.maxActiveOfAccount !== undefined) {
          const held = await tx.one<{ keys: number | string }>('SELECT count(*) AS keys FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL', [row.account_id]);
          if (Number(held?.keys ?? 0) >= input.maxActiveOfAccount) {
            throw new NetintelError('forbidden', `the account holds ${input.maxActiveOfAccount} active keys, the most it may`, { details: { account: row.account_id, limit: input.maxActiveOfAccount } });
          }
        }
        await tx.run('INSERT INTO api_keys (id, key_hash, plan, label, limits, created_at, account_id) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
          row.id,
          row.key_hash,
          row.plan,
          row.label,
          row.limits,
          new Date(row.created_at),
          row.account_id,
        ]);
      });
      cache.delete(row.id);
      return { record: keyRecordOf(row), key: created.key };
    },
    list: async () => (await db.all<KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id')).map(keyRecordOf),
    async revoke(id: string): Promise<ApiKeyRecord> {
      await db.run('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [now(), id]);
      cache.delete(id);
      const row = await byId(id);
      if (!row) throw new NetintelError('not_found', `no API key has the id ${JSON.stringify(id)}`, { details: { id } });
      return keyRecordOf(row);
    },
    check(key: string): KeyCheck | Promise<KeyCheck> {
      const id = apiKeyId(key);
      if (id === null) return { ok: false, reason: 'malformed', id: null };
      const entry = cache.cached(id);
      if (entry !== undefined) return verdict(key, id, entry);
      return cache.load(id).then((loaded) => verdict(key, id, loaded));
    },
    async recordUsage(entries: readonly KeyUsageEntry[]): Promise<void> {
      if (entries.length === 0) return;
      const known = await writeUsage(db, entries);
      // Checked records carry last_used_at: those of the keys written are read afresh.
      for (const id of known) cache.delete(id);
    },
    usage: (keyIds: readonly string[], at: Date) => readUsage(db, keyIds, at),
    async usedOn(at) {
      const rows = await db.all<{ key_id: string; account_id: string | null; count: number | string }>(
        'SELECT u.key_id, k.account_id, u.count FROM key_usage u JOIN api_keys k ON k.id = u.key_id WHERE u.day = $1',
        [utcDay(at)],
      );
      return rows.map((row) => ({ keyId: row.key_id, accountId: row.account_id, count: Number(row.count) }));
    },
    forgetChecked: () => cache.clear(),
  };
}

/**
 * Checked keys by id, until the database changes: its change mark is
 * looked at every `recheckMs` at most, and while it has none (PostgreSQL
 * not yet, or no longer, hearing changes) nothing is kept.
 */
function checkedKeys(db: Database, recheckMs: number, byId: (id: string) => Promise<KeyRowWithAccount | undefined>) {
  const cache = new Map<string, CheckedKey | null>();
  /** Reads under way since the mark last moved: the checks of a burst share one. */
  const reading = new Map<string, Promise<CheckedKey | null>>();
  let seenMark: string | null = null;
  let lastLook = 0;

  /** Whether what is kept may be served; drops it when the database changed. */
  const current = (): boolean => {
    const clock = performance.now();
    if (seenMark !== null && clock - lastLook < recheckMs) return true;
    lastLook = clock;
    const mark = db.changeMark();
    if (mark !== seenMark) {
      seenMark = mark;
      cache.clear();
      reading.clear();
    }
    return mark !== null;
  };

  const read = async (id: string): Promise<CheckedKey | null> => {
    const before = db.changeMark();
    const row = await byId(id);
    const entry = row ? { hash: row.key_hash, record: keyRecordOf(row), accountId: row.account_id, accountDisabled: row.account_disabled_at !== null } : null;
    // Kept only when no change was announced while it was read: the row may be older than that change.
    // (A change before the read, not yet looked at, is in the row; the next look drops the row anyway.)
    if (before !== null && db.changeMark() === before) {
      if (cache.size >= CACHED_KEYS) cache.delete(cache.keys().next().value!);
      cache.set(id, entry);
    }
    return entry;
  };

  return {
    /** The entry of an id kept in memory (null: known not to exist), or undefined when the database must be asked. */
    cached(id: string): CheckedKey | null | undefined {
      return current() ? cache.get(id) : undefined;
    },
    /**
     * The entry of an id read from the database, kept for the next checks.
     * While changes are heard, checks that miss at once share one read; one
     * that starts after a change never joins a read from before it. Without a
     * mark every check reads for itself.
     */
    load(id: string): Promise<CheckedKey | null> {
      if (!current()) return read(id);
      let pending = reading.get(id);
      if (pending === undefined) {
        pending = read(id).finally(() => {
          if (reading.get(id) === pending) reading.delete(id);
        });
        reading.set(id, pending);
      }
      return pending;
    },
    delete(id: string): void {
      cache.delete(id);
    },
    clear(): void {
      cache.clear();
      reading.clear();
    },
  };
}

/** Adds usage entries to key_usage and moves last_used_at on; the ids of the keys that still exist. */
async function writeUsage(db: Database, entries: readonly KeyUsageEntry[]): Promise<Set<string>> {
  const { counts, lastUsed } = mergeUsage(entries);
  return db.transaction(async (tx) => {
    // The keys' rows locked first, in id order (mergeUsage sorts), so that
    // servers writing at once wait for each other instead of deadlocking,
    // and a key being deleted is either waited for or skipped.
    const ids = [...lastUsed.keys()];
    const lock = db.dialect === 'postgres' ? ' ORDER BY id FOR NO KEY UPDATE' : '';
    const present = new Set<string>();
    for (let start = 0; start < ids.length; start += USAGE_ROWS_PER_STATEMENT) {
      const batch = ids.slice(start, start + USAGE_ROWS_PER_STATEMENT);
      for (const row of await tx.all<{ id: string }>(`SELECT id FROM api_keys WHERE id IN (${placeholders(batch.length)})${lock}`, batch)) present.add(row.id);
    }
    for (const [id, at] of lastUsed) {
      if (!present.has(id)) continue;
      await tx.run('UPDATE api_keys SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $1)', [at, id]);
    }
    const added = counts.filter((entry) => present.has(entry.keyId));
    for (let start = 0; start < added.length; start += USAGE_ROWS_PER_STATEMENT) {
      const batch = added.slice(start, start + USAGE_ROWS_PER_STATEMENT);
      await tx.run(
        `INSERT INTO key_usage (key_id, day, count) VALUES ${batch.map((_, index) => `(${placeholders(3, index * 3 + 1)})`).join(', ')}
               ON CONFLICT (key_id, day) DO UPDATE SET count = key_usage.count + excluded.count`,
        batch.flatMap((entry) => [entry.keyId, entry.day, entry.count]),
      );
    }
    return present;
  });
}

/** Today's and this month's counts of each key (UTC days), 0 for a key without usage. */
async function readUsage(db: Database, keyIds: readonly string[], at: Date): Promise<Map<string, KeyUsage>> {
  const today = utcDay(at);
  const monthStart = `${today.slice(0, 7)}-01`;
  const nextMonth = utcDay(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
  const result = new Map<string, KeyUsage>(keyIds.map((id) => [id, { today: 0, month: 0 }]));
  if (keyIds.length === 0) return result;
  // Sums of PostgreSQL's bigint are numeric, which node-postgres hands over as text.
  const rows = await db.all<{ key_id: string; today: number | string; month: number | string }>(
    `SELECT key_id, sum(CASE WHEN day = $1 THEN count ELSE 0 END) AS today, sum(count) AS month
           FROM key_usage WHERE day >= $2 AND day < $3 AND key_id IN (${placeholders(keyIds.length, 4)})
          GROUP BY key_id`,
    [today, monthStart, nextMonth, ...keyIds],
  );
  for (const row of rows) result.set(row.key_id, { today: Number(row.today), month: Number(row.month) });
  return result;
}

/** The record of a row of api_keys. */
export function keyRecordOf(row: KeyRow): ApiKeyRecord {
  return {
    kind: 'api-key',
    id: row.id,
    plan: row.plan,
    label: row.label,
    limits: row.limits === null ? null : (JSON.parse(row.limits) as Partial<PlanLimits>),
    created_at: row.created_at,
    revoked_at: row.revoked_at,
    last_used_at: row.last_used_at,
  };
}
