/**
 * The stores of one database opened for a test, each with a close() of its
 * own: every call opens a handle of its own on the process's one connection
 * to the file (src/store/sqlite-database.ts), so a test can hold a "server"
 * and an "admin" store on one file as two processes would.
 */
import type { AccountStore } from '../../src/store/account-store.js';
import type { KeyStore } from '../../src/store/key-store.js';
import { openStore, type OpenStoreOptions, type Store } from '../../src/store/open-store.js';

export type Closable<T> = T & { close(): Promise<void> };

export async function keyStoreAt(target: string, options: OpenStoreOptions = {}): Promise<Closable<KeyStore>> {
  const store = await openStore(target, options);
  return { ...store.keys, close: store.close };
}

export async function accountStoreAt(target: string, options: OpenStoreOptions = {}): Promise<Closable<AccountStore>> {
  const store = await openStore(target, options);
  return { ...store.accounts, close: store.close };
}

export { openStore, type Store };
