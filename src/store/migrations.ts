import { canonicalEmailOrNull } from '../accounts/email-address.js';
import type { Queryable } from './database.js';

/**
 * The schema, as one ordered list of migrations with the SQL of each
 * dialect side by side. A migration, once released, never changes: a change
 * to the schema is a new entry at the end. SQLite counts what it has in
 * `PRAGMA user_version`, PostgreSQL in `schema_migrations`.
 *
 * Versions 3 and 4 came to the two databases in a different order (SQLite
 * had sessions first, PostgreSQL usage first); each entry holds what each
 * database already has at that version.
 */
export interface Migration {
  version: number;
  name: string;
  sqlite: string;
  postgres: string;
  /** Work that SQL alone cannot do, in the same transaction, after the SQL. */
  after?: (tx: Queryable, dialect: 'sqlite' | 'postgres') => Promise<void>;
}

const SESSION_EPOCH_SQLITE = `
  CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) STRICT;
  ALTER TABLE accounts ADD COLUMN session_epoch INTEGER NOT NULL DEFAULT 0;`;

const USAGE_SQLITE = `
  ALTER TABLE api_keys ADD COLUMN last_used_at TEXT;
  CREATE TABLE key_usage (
    key_id TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    day    TEXT NOT NULL,
    count  INTEGER NOT NULL,
    PRIMARY KEY (key_id, day)
  ) STRICT, WITHOUT ROWID;`;

const USAGE_POSTGRES = `
  ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;
  CREATE TABLE key_usage (
    key_id text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    day    date NOT NULL,
    count  bigint NOT NULL,
    PRIMARY KEY (key_id, day)
  )`;

const SESSION_EPOCH_POSTGRES = `
  CREATE TABLE settings (
    name  text PRIMARY KEY,
    value text NOT NULL
  );
  ALTER TABLE accounts ADD COLUMN session_epoch integer NOT NULL DEFAULT 0`;

/** The PostgreSQL channel (LISTEN/NOTIFY) on which changes to keys and accounts are announced. */
export const KEY_CHANGES_CHANNEL = 'netintel_keys';

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'api keys',
    // limits stays text so that an enterprise key's limits keep the order they were given in.
    sqlite: `
      CREATE TABLE IF NOT EXISTS api_keys (
        id         TEXT PRIMARY KEY,
        key_hash   BLOB NOT NULL,
        plan       TEXT NOT NULL,
        label      TEXT,
        limits     TEXT,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      ) STRICT;`,
    postgres: `
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
    // Keys made by `netintel keys create` keep a null account_id.
    sqlite: `
      CREATE TABLE accounts (
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
    postgres: `
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
  // The key session cookies are sealed with, and a per-account session counter (no longer read: sessions are rows since version 5).
  { version: 3, name: 'sessions (SQLite); key usage (PostgreSQL)', sqlite: SESSION_EPOCH_SQLITE, postgres: USAGE_POSTGRES },
  // Items charged per key and UTC day, written in batches by every server.
  { version: 4, name: 'key usage (SQLite); sessions (PostgreSQL)', sqlite: USAGE_SQLITE, postgres: SESSION_EPOCH_POSTGRES },
  {
    version: 5,
    name: 'server-side sessions and the mail outbox',
    // A session is a row, so that logging out ends it for every copy of the
    // cookie; the cookie holds a random id whose SHA-256 is the key here.
    // A message to send is a row written in the transaction of what it
    // belongs to (a new account, a request for a link), so that a crash
    // loses none. The row says what to send; the message, and the link in it,
    // are made when it is sent, so no working link is ever kept in clear.
    sqlite: `
      CREATE TABLE sessions (
        id_hash    TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX sessions_account ON sessions (account_id);
      CREATE INDEX sessions_expiry ON sessions (expires_at);
      CREATE TABLE mail_outbox (
        id              TEXT PRIMARY KEY,
        kind            TEXT NOT NULL,
        account_id      TEXT REFERENCES accounts (id) ON DELETE CASCADE,
        recipient       TEXT NOT NULL,
        created_at      TEXT NOT NULL,
        attempts        INTEGER NOT NULL DEFAULT 0,
        next_attempt_at TEXT NOT NULL,
        claimed_until   TEXT,
        sent_at         TEXT,
        gave_up_at      TEXT,
        last_error      TEXT
      ) STRICT;
      CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL AND gave_up_at IS NULL;
      CREATE INDEX mail_outbox_account ON mail_outbox (account_id);`,
    postgres: `
      CREATE TABLE sessions (
        id_hash    text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX sessions_account ON sessions (account_id);
      CREATE INDEX sessions_expiry ON sessions (expires_at);
      CREATE TABLE mail_outbox (
        id              text PRIMARY KEY,
        kind            text NOT NULL,
        account_id      text REFERENCES accounts (id) ON DELETE CASCADE,
        recipient       text NOT NULL,
        created_at      timestamptz NOT NULL,
        attempts        integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL,
        claimed_until   timestamptz,
        sent_at         timestamptz,
        gave_up_at      timestamptz,
        last_error      text
      );
      CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL AND gave_up_at IS NULL;
      CREATE INDEX mail_outbox_account ON mail_outbox (account_id)`,
  },
  {
    version: 6,
    name: 'one spelling per e-mail address',
    sqlite: 'SELECT 1',
    postgres: 'SELECT 1',
    after: canonicalAddresses,
  },
  {
    version: 7,
    name: 'key changes announced (PostgreSQL)',
    // Every change that can alter a key check (a key made, revoked, deleted or
    // given other limits; an account disabled or deleted) announces itself on
    // the channel servers listen on (postgres-changes.ts), whichever process or
    // hand made it, in the transaction that made it: PostgreSQL delivers the
    // notification at commit (NOTIFY). Usage (last_used_at) is not announced:
    // no check reads it. SQLite needs none: its servers ask PRAGMA data_version.
    sqlite: 'SELECT 1',
    postgres: `
      CREATE FUNCTION netintel_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('${KEY_CHANGES_CHANNEL}', TG_TABLE_NAME);
        RETURN NULL;
      END
      $$;
      CREATE TRIGGER api_keys_changed
        AFTER INSERT OR DELETE OR TRUNCATE OR UPDATE OF key_hash, plan, limits, revoked_at, account_id ON api_keys
        FOR EACH STATEMENT EXECUTE FUNCTION netintel_keys_changed();
      CREATE TRIGGER accounts_changed
        AFTER DELETE OR TRUNCATE OR UPDATE OF disabled_at ON accounts
        FOR EACH STATEMENT EXECUTE FUNCTION netintel_keys_changed()`,
  },
];

/**
 * Rewrites every stored address in the one form accounts/email-address.ts
 * gives (NFC local part, A-label domain), so that an account made before
 * is found by the spelling its holder types now. Where two accounts are
 * spellings of one address, the first to hold the canonical spelling keeps
 * it and the other keeps its old one (found by id, as `netintel accounts
 * list` shows, for the operator to settle); an address that has no
 * canonical form (a control or direction character in it) is left as well.
 */
async function canonicalAddresses(tx: Queryable): Promise<void> {
  const rows = await tx.all<{ id: string; email: string }>('SELECT id, email FROM accounts ORDER BY created_at, id');
  const taken = new Set(rows.map((row) => row.email));
  for (const row of rows) {
    const canonical = canonicalEmailOrNull(row.email);
    if (canonical === null || canonical === row.email || taken.has(canonical)) continue;
    await tx.run('UPDATE accounts SET email = $1 WHERE id = $2', [canonical, row.id]);
    taken.delete(row.email);
    taken.add(canonical);
  }
}
