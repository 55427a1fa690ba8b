import type { Pool, PoolClient } from 'pg';
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
import { migrate } from './postgres-migrations.js';
import { parsePostgresUrl, postgresEndpoint, postgresPassword, redactPostgresUrl } from './postgres-url.js';

export interface KeyRow {
  id: string;
  key_hash: Buffer;
  plan: string;
  label: string | null;
  limits: string | null;
  created_at: Date;
  revoked_at: Date | null;
  /** Absent from the row `create` builds: a new key has no use yet. */
  last_used_at?: Date | null;
  account_id?: string | null;
  /** When the key's account was disabled, from the join in `check`. */
  account_disabled_at?: Date | null;
}

export interface PostgresKeyStoreOptions {
  /** Clock for created/revoked dates. */
  now?: () => Date;
  /** Connections held at once (default 10; the CLI's commands use 1). */
  maxConnections?: number;
  /** Time to connect before giving up, in ms (default 10 s). */
  connectTimeoutMs?: number;
  /** Time a query may take, in ms (default 10 s): a database that stops answering fails requests rather than holding them. */
  queryTimeoutMs?: number;
}

export interface PostgresConnection {
  pool: Pool;
  /** Runs one statement; a failure is a `data_unavailable` error without the password. */
  query<Row extends object>(text: string, values?: unknown[]): Promise<Row[]>;
  /** Runs `work` in one transaction on one connection, failures as `query`'s. */
  transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T>;
  location: string;
}

/**
 * A pool on the database `url` names, with the migrations it lacks applied
 * (postgres-migrations.ts): what the key store and the account store share.
 *
 * @throws NetintelError `usage` for a URL that cannot be read;
 *   `data_unavailable` when the database cannot be reached or migrated.
 */
export async function connectPostgres(url: string, options: PostgresKeyStoreOptions = {}): Promise<PostgresConnection> {
  parsePostgresUrl(url);
  const endpoint = postgresEndpoint(url);
  const password = postgresPassword(url);
  const hide = (text: string): string => (password === null ? text : text.split(password).join('***'));
  const unavailable = (error: unknown, what: string): NetintelError =>
    new NetintelError('data_unavailable', hide(`${what} PostgreSQL at ${endpoint}: ${reasonOf(error)} (check --db)`), {
      details: { db: redactPostgresUrl(url), ...((error as { code?: unknown }).code === undefined ? {} : { reason: String((error as { code?: unknown }).code) }) },
    });

  const { default: pg } = await import('pg');
  const pool: Pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    query_timeout: options.queryTimeoutMs ?? 10_000,
    application_name: 'netintel',
  });
  // A connection the server drops while idle is replaced at the next query; its error must not end the process.
  pool.on('error', () => {});

  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    await pool.end().catch(() => {});
    throw unavailable(error, 'cannot connect to');
  }
  try {
    await migrate(client);
  } catch (error) {
    client.release(true);
    await pool.end().catch(() => {});
    throw unavailable(error, 'cannot apply the schema migrations of');
  }
  client.release();

  const query = async <Row extends object>(text: string, values: unknown[] = []): Promise<Row[]> => {
    try {
      return (await pool.query<Row>(text, values)).rows;
    } catch (error) {
      throw unavailable(error, 'cannot query');
    }
  };
  const transaction = async <T>(work: (client: PoolClient) => Promise<T>): Promise<T> => {
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw unavailable(error, 'cannot connect to');
    }
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      client.release();
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      client.release();
      if (error instanceof NetintelError) throw error;
      throw unavailable(error, 'cannot query');
    }
  };
  return { pool, query, transaction, location: redactPostgresUrl(url) };
}

/**
 * API keys in PostgreSQL (node-postgres), shared by every server given the
 * same URL. Opening it applies the migrations the database lacks
 * (postgres-migrations.ts). Nothing is cached: every `check` asks the
 * database, so a key revoked through any server or `netintel keys revoke`
 * is refused by every server from its next request on.
 *
 * @throws NetintelError `usage` for a URL that cannot be read;
 *   `data_unavailable` when the database cannot be reached or migrated.
 *   No message holds the URL's password.
 */
export async function openPostgresKeyStore(url: string, options: PostgresKeyStoreOptions = {}): Promise<KeyStore> {
  const now = options.now ?? (() => new Date());
  const { pool, query, transaction, location } = await connectPostgres(url, options);
  const byId = async (id: string): Promise<KeyRow | undefined> => (await query<KeyRow>('SELECT * FROM api_keys WHERE id = $1', [id]))[0];
  // A stand-in hash compared when the id is unknown, so that an unknown key costs what a wrong one does.
  const decoy = hashApiKey('ni_aaaaaaaaaaaa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');

  return {
    location,
    async create(input: CreateKeyInput): Promise<CreatedApiKey> {
      if (input.accountId != null && (await query('SELECT id FROM accounts WHERE id = $1', [input.accountId])).length === 0) throw unknownAccount(input.accountId);
      const created = generateApiKey();
      const row: KeyRow = {
        id: created.id,
        key_hash: created.hash,
        plan: input.plan,
        label: input.label ?? null,
        limits: storedLimits(input.limits),
        created_at: now(),
        revoked_at: null,
      };
      await query('INSERT INTO api_keys (id, key_hash, plan, label, limits, created_at, account_id) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
        row.id,
        row.key_hash,
        row.plan,
        row.label,
        row.limits,
        row.created_at,
        input.accountId ?? null,
      ]);
      return { record: keyRecordOf(row), key: created.key };
    },
    list: async () => (await query<KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id')).map(keyRecordOf),
    async revoke(id: string): Promise<ApiKeyRecord> {
      await query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [now(), id]);
      const row = await byId(id);
      if (!row) throw new NetintelError('not_found', `no API key has the id ${JSON.stringify(id)}`, { details: { id } });
      return keyRecordOf(row);
    },
    async check(key: string): Promise<KeyCheck> {
      const id = apiKeyId(key);
      if (id === null) return { ok: false, reason: 'malformed', id: null };
      const row = (
        await query<KeyRow>('SELECT k.*, a.disabled_at AS account_disabled_at FROM api_keys k LEFT JOIN accounts a ON a.id = k.account_id WHERE k.id = $1', [id])
      )[0];
      const matches = hashesMatch(row ? row.key_hash : decoy, hashApiKey(key));
      if (!row || !matches) return { ok: false, reason: 'unknown', id };
      // A disabled account's keys are refused as revoked ones are.
      if (row.revoked_at !== null || (row.account_disabled_at ?? null) !== null) return { ok: false, reason: 'revoked', id };
      return { ok: true, record: keyRecordOf(row) };
    },
    async recordUsage(entries: readonly KeyUsageEntry[]): Promise<void> {
      if (entries.length === 0) return;
      const { counts, lastUsed } = mergeUsage(entries);
      await transaction(async (client) => {
        // The keys' rows locked first, in id order, so that servers writing at
        // once wait for each other instead of deadlocking, and a key being
        // deleted is either waited for or skipped.
        const known = new Set(
          (await client.query<{ id: string }>('SELECT id FROM api_keys WHERE id = ANY($1::text[]) ORDER BY id FOR NO KEY UPDATE', [[...lastUsed.keys()]])).rows.map(
            (row) => row.id,
          ),
        );
        if (known.size === 0) return;
        const touched = [...lastUsed].filter(([id]) => known.has(id));
        await client.query(
          'UPDATE api_keys k SET last_used_at = GREATEST(k.last_used_at, u.at) FROM unnest($1::text[], $2::timestamptz[]) AS u(id, at) WHERE k.id = u.id',
          [touched.map(([id]) => id), touched.map(([, at]) => at)],
        );
        const added = counts.filter((entry) => known.has(entry.keyId));
        await client.query(
          `INSERT INTO key_usage (key_id, day, count)
             SELECT * FROM unnest($1::text[], $2::date[], $3::bigint[])
           ON CONFLICT (key_id, day) DO UPDATE SET count = key_usage.count + excluded.count`,
          [added.map((entry) => entry.keyId), added.map((entry) => entry.day), added.map((entry) => entry.count)],
        );
      });
    },
    async usage(keyIds: readonly string[], at: Date): Promise<Map<string, KeyUsage>> {
      const today = utcDay(at);
      const monthStart = `${today.slice(0, 7)}-01`;
      const nextMonth = utcDay(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
      const result = new Map<string, KeyUsage>(keyIds.map((id) => [id, { today: 0, month: 0 }]));
      if (keyIds.length === 0) return result;
      // Sums of bigint are numeric, which node-postgres hands over as text.
      const rows = await query<{ key_id: string; today: string; month: string }>(
        `SELECT key_id, coalesce(sum(count) FILTER (WHERE day = $2::date), 0)::text AS today, sum(count)::text AS month
           FROM key_usage WHERE key_id = ANY($1::text[]) AND day >= $3::date AND day < $4::date
          GROUP BY key_id`,
        [[...keyIds], today, monthStart, nextMonth],
      );
      for (const row of rows) result.set(row.key_id, { today: Number(row.today), month: Number(row.month) });
      return result;
    },
    close: () => pool.end(),
  };
}

/**
 * What went wrong, on one line: a connection tried on several addresses
 * fails with an AggregateError whose own message is empty.
 */
function reasonOf(error: unknown): string {
  const errors = error instanceof AggregateError ? error.errors : [error];
  const reasons = errors.map((each) => (each instanceof Error ? each.message || String((each as { code?: unknown }).code ?? each.name) : String(each)));
  return reasons.join('; ').replace(/\s*\n\s*/g, ' ');
}

/** The record of a row of api_keys. */
export function keyRecordOf(row: KeyRow): ApiKeyRecord {
  return {
    kind: 'api-key',
    id: row.id,
    plan: row.plan,
    label: row.label,
    limits: row.limits === null ? null : (JSON.parse(row.limits) as Partial<PlanLimits>),
    createdAt: row.created_at.toISOString(),
    revokedAt: row.revoked_at === null ? null : row.revoked_at.toISOString(),
    lastUsedAt: row.last_used_at == null ? null : row.last_used_at.toISOString(),
  };
}
