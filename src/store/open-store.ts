import { createAccountStore, type AccountStore } from './account-store.js';
import type { Database } from './database.js';
import { keyDbPath } from './database-location.js';
import { createKeyStore, type KeyStore } from './key-store.js';
import { createMailOutboxStore, type MailOutboxStore } from './mail-outbox-store.js';
import { isPostgresUrl } from './postgres-url.js';

/** Keys, accounts (with their links and sessions) and the mail outbox, in one database. */
export interface Store {
  db: Database;
  keys: KeyStore;
  accounts: AccountStore;
  outbox: MailOutboxStore;
  readonly location: string;
  close(): Promise<void>;
}

export interface OpenStoreOptions {
  /** PostgreSQL connections held at once (a server wants several, a command one; default 10). */
  connections?: number;
  /** Clock for the dates the stores write. */
  now?: () => Date;
  /** KeyStoreOptions.recheckMs. */
  recheckMs?: number;
}

/**
 * The store `target` names: a `postgres://` or `postgresql://` URL opens
 * PostgreSQL, shared by every server given it (node-postgres is loaded only
 * then); anything else is the path of a SQLite file (or `:memory:`).
 *
 * @throws NetintelError as openSqliteDatabase or openPostgresDatabase.
 */
export async function openStore(target: string, options: OpenStoreOptions = {}): Promise<Store> {
  const db = isPostgresUrl(target)
    ? await (await import('./postgres-database.js')).openPostgresDatabase(target, { maxConnections: options.connections ?? 10 })
    : await (await import('./sqlite-database.js')).openSqliteDatabase(target);
  const clock = options.now === undefined ? {} : { now: options.now };
  const keys = createKeyStore(db, { ...clock, ...(options.recheckMs === undefined ? {} : { recheckMs: options.recheckMs }) });
  return {
    db,
    keys,
    // What an account change does to its keys holds at once in this process, as a revoked key does.
    accounts: createAccountStore(db, { ...clock, keysChanged: () => keys.forgetChecked() }),
    outbox: createMailOutboxStore(db, clock),
    location: db.location,
    close: () => db.close(),
  };
}

/** The store `--db` names, else NETINTEL_DB, else the default file (database-location.ts). */
export function openConfiguredStore(flag: string | undefined, env: Readonly<Record<string, string | undefined>>, options: OpenStoreOptions = {}): Promise<Store> {
  return openStore(keyDbPath(flag, env), options);
}
