import { keyDbPath } from './key-db-path.js';
import type { KeyStore } from './key-store.js';
import { isPostgresUrl } from './postgres-url.js';

/**
 * The key store `--db` (else NETINTEL_DB, else the default file) names: a
 * `postgres://` or `postgresql://` URL opens PostgreSQL, shared by every
 * server given it (node-postgres is loaded only then); anything else is
 * the path of a SQLite file.
 *
 * @param connections the PostgreSQL connections to hold at once (a server wants several, a command one).
 */
export async function openKeyStore(flag: string | undefined, env: Readonly<Record<string, string | undefined>>, connections: number): Promise<KeyStore> {
  const target = keyDbPath(flag, env);
  if (isPostgresUrl(target)) return (await import('./postgres-key-store.js')).openPostgresKeyStore(target, { maxConnections: connections });
  return (await import('./sqlite-key-store.js')).openSqliteKeyStore(target);
}
