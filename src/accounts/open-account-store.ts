import { keyDbPath } from '../keys/key-db-path.js';
import { isPostgresUrl } from '../keys/postgres-url.js';
import type { AccountStore } from './account-store.js';

/**
 * The account store in the database of the keys: the same `--db` (else
 * NETINTEL_DB, else the default file) as openKeyStore, so accounts and
 * their keys are in one place.
 */
export async function openAccountStore(flag: string | undefined, env: Readonly<Record<string, string | undefined>>, connections: number): Promise<AccountStore> {
  const target = keyDbPath(flag, env);
  if (isPostgresUrl(target)) return (await import('./postgres-account-store.js')).openPostgresAccountStore(target, { maxConnections: connections });
  return (await import('./sqlite-account-store.js')).openSqliteAccountStore(target);
}
