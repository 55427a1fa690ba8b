import type { PoolClient } from 'pg';

/**
 * The schema of the PostgreSQL store, as an ordered list of migrations.
 * A migration, once released, never changes: a change to the schema is a
 * new migration at the end of the list. Accounts and usage add theirs here.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'api keys',
    // The columns of the SQLite store (sqlite-key-store.ts): limits stays
    // text so that an enterprise key's limits keep the order they were given in.
    sql: `
      CREATE TABLE api_keys (
        id         text PRIMARY KEY,
        key_hash   bytea NOT NULL,
        plan       text NOT NULL,
        label      text,
        limits     text,
        created_at timestamptz NOT NULL,
        revoked_at timestamptz
      )`,
  },
  {
    version: 2,
    name: 'accounts',
    // The tables of the SQLite store's second migration (sqlite-schema.ts);
    // keys made by `netintel keys create` keep a null account_id.
    sql: `
      CREATE TABLE accounts (
        id                text PRIMARY KEY,
        email             text NOT NULL UNIQUE,
        email_verified_at timestamptz,
        password_hash     text,
        plan              text NOT NULL DEFAULT 'free',
        created_at        timestamptz NOT NULL,
        disabled_at       timestamptz
      );
      ALTER TABLE api_keys ADD COLUMN account_id text REFERENCES accounts (id) ON DELETE CASCADE;
      CREATE INDEX api_keys_account ON api_keys (account_id);
      CREATE TABLE account_links (
        token_hash text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        purpose    text NOT NULL,
        expires_at timestamptz NOT NULL,
        used_at    timestamptz
      );
      CREATE INDEX account_links_account ON account_links (account_id)`,
  },
  {
    version: 3,
    name: 'key usage',
    // The SQLite store's fourth migration (sqlite-schema.ts): items charged
    // per key and UTC day, written in batches by every server.
    sql: `
      ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;
      CREATE TABLE key_usage (
        key_id text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
        day    date NOT NULL,
        count  bigint NOT NULL,
        PRIMARY KEY (key_id, day)
      )`,
  },
  {
    version: 4,
    name: 'sessions',
    // The third migration of the SQLite store (sqlite-schema.ts): the key
    // session cookies are sealed with, and the per-account session counter.
    sql: `
      CREATE TABLE settings (
        name  text PRIMARY KEY,
        value text NOT NULL
      );
      ALTER TABLE accounts ADD COLUMN session_epoch integer NOT NULL DEFAULT 0`,
  },
];

/**
 * The key of the advisory lock migrations run under ("netintel" in ASCII):
 * servers starting at once take turns, and the later ones find the work done.
 */
const MIGRATION_LOCK = '7954893355463943532';

/**
 * Applies the migrations the database lacks, in order, in one transaction
 * under a transaction-level advisory lock, each recorded in
 * `schema_migrations`. Versions the database has beyond this list (a newer
 * netintel migrated it) are left alone.
 *
 * @returns the versions applied by this call.
 */
export async function migrate(client: PoolClient, migrations: readonly Migration[] = POSTGRES_MIGRATIONS): Promise<number[]> {
  const applied: number[] = [];
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK]);
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const done = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((row) => row.version));
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(migration.version)) continue;
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [migration.version]);
      applied.push(migration.version);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
  return applied;
}
