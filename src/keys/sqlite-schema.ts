import type Database from 'better-sqlite3';

/**
 * The schema of the SQLite store, as an ordered list of migrations whose
 * count is kept in `PRAGMA user_version`. A migration, once released, never
 * changes: a change to the schema is a new entry at the end. The first one
 * is what every keys.db made before versioning already has, so it is
 * written to leave such a file as it is.
 */
export const SQLITE_MIGRATIONS: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS api_keys (
     id         TEXT PRIMARY KEY,
     key_hash   BLOB NOT NULL,
     plan       TEXT NOT NULL,
     label      TEXT,
     limits     TEXT,
     created_at TEXT NOT NULL,
     revoked_at TEXT
   ) STRICT;`,
  // Accounts: keys made by `netintel keys create` keep a null account_id.
  `CREATE TABLE accounts (
     id                TEXT PRIMARY KEY,
     email             TEXT NOT NULL UNIQUE,
     email_verified_at TEXT,
     password_hash     TEXT,
     plan              TEXT NOT NULL DEFAULT 'free',
     created_at        TEXT NOT NULL,
     disabled_at       TEXT
   ) STRICT;
   ALTER TABLE api_keys ADD COLUMN account_id TEXT;
   CREATE INDEX api_keys_account ON api_keys (account_id);
   CREATE TABLE account_links (
     token_hash TEXT PRIMARY KEY,
     account_id TEXT NOT NULL,
     purpose    TEXT NOT NULL,
     expires_at TEXT NOT NULL,
     used_at    TEXT
   ) STRICT;
   CREATE INDEX account_links_account ON account_links (account_id);`,
  // The account pages: the key their session cookies are sealed with, made
  // once and shared by every server on the database; and a counter per
  // account that ends its sessions when raised (password reset, sign out everywhere).
  `CREATE TABLE settings (
     name  TEXT PRIMARY KEY,
     value TEXT NOT NULL
   ) STRICT;
   ALTER TABLE accounts ADD COLUMN session_epoch INTEGER NOT NULL DEFAULT 0;`,
  // Usage: items charged per key and UTC day, written in batches by the
  // server; a key's rows go with it (openKeyDatabase turns foreign keys on).
  `ALTER TABLE api_keys ADD COLUMN last_used_at TEXT;
   CREATE TABLE key_usage (
     key_id TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
     day    TEXT NOT NULL,
     count  INTEGER NOT NULL,
     PRIMARY KEY (key_id, day)
   ) STRICT, WITHOUT ROWID;`,
];

/**
 * Applies the migrations the file lacks in one write transaction (BEGIN
 * IMMEDIATE), so processes opening the same file at once take turns and the
 * later ones find the work done. A file from a newer netintel is left alone.
 *
 * @returns the versions applied (1-based).
 */
export function migrateSqlite(db: Database.Database, migrations: readonly string[] = SQLITE_MIGRATIONS): number[] {
  const applied: number[] = [];
  db.transaction(() => {
    const current = db.pragma('user_version', { simple: true }) as number;
    for (let version = current + 1; version <= migrations.length; version++) {
      db.exec(migrations[version - 1]!);
      applied.push(version);
    }
    if (applied.length > 0) db.pragma(`user_version = ${migrations.length}`);
  }).immediate();
  return applied;
}
