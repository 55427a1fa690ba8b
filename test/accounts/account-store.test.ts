/**
 * The account store contract, one body run against SQLite and against a
 * real PostgreSQL (test/support/postgres.ts): e-mail uniqueness, plans,
 * disabling and deleting with the keys of the account, single-use links,
 * and migrations over a keys database of the previous schema.
 */
import Database from 'better-sqlite3';
import fc from 'fast-check';
import pg from 'pg';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { normaliseEmail, type AccountStore } from '../../src/accounts/account-store.js';
import { createLinkToken } from '../../src/accounts/link-tokens.js';
import { openPostgresAccountStore } from '../../src/accounts/postgres-account-store.js';
import { openSqliteAccountStore } from '../../src/accounts/sqlite-account-store.js';
import type { KeyStore } from '../../src/keys/key-store.js';
import { loadPlanTable } from '../../src/keys/plans.js';
import { openPostgresKeyStore } from '../../src/keys/postgres-key-store.js';
import { POSTGRES_MIGRATIONS } from '../../src/keys/postgres-migrations.js';
import { openSqliteKeyStore } from '../../src/keys/sqlite-key-store.js';
import { SQLITE_MIGRATIONS } from '../../src/keys/sqlite-schema.js';
import { spawnCli, tempDir } from '../support/cli.js';
import { findPostgres, startPostgresServer, type PostgresTestServer } from '../support/postgres.js';

interface Stores {
  accounts: AccountStore;
  keys: KeyStore;
  close(): Promise<void>;
}

const programs = findPostgres();
if (programs === null) console.warn('SKIPPING the PostgreSQL half of test/accounts/account-store.test.ts: initdb/postgres not found');

const dirs: Array<{ remove(): void }> = [];
afterAll(() => dirs.splice(0).forEach((dir) => dir.remove()));
const sqlitePath = (): string => {
  const dir = tempDir('netintel-accounts-');
  dirs.push(dir);
  return join(dir.path, 'keys.db');
};

let postgres: PostgresTestServer | undefined;
let databases = 0;
beforeAll(async () => {
  if (programs !== null) postgres = await startPostgresServer(programs);
}, 60_000);
afterAll(async () => {
  await postgres?.stop();
});

const backends: Array<{ name: string; skip: boolean; open(): Promise<Stores> }> = [
  {
    name: 'SQLite',
    skip: false,
    async open() {
      const path = sqlitePath();
      const keys = openSqliteKeyStore(path, { recheckMs: 0 });
      const accounts = openSqliteAccountStore(path);
      return { keys, accounts, close: async () => void (await Promise.all([keys.close(), accounts.close()])) };
    },
  },
  {
    name: 'PostgreSQL',
    skip: programs === null,
    async open() {
      const url = await postgres!.createDatabase(`accounts_${++databases}`);
      const keys = await openPostgresKeyStore(url);
      const accounts = await openPostgresAccountStore(url);
      return { keys, accounts, close: async () => void (await Promise.all([keys.close(), accounts.close()])) };
    },
  },
];

describe('normaliseEmail', () => {
  it('trims and lower-cases the domain only, and is idempotent', () => {
    expect(normaliseEmail('  Ada.L@Example.COM \n')).toBe('Ada.L@example.com');
    const part = fc.stringMatching(/^[A-Za-z0-9._+-]{1,20}$/);
    fc.assert(
      fc.property(part, part, fc.constantFrom('', ' ', '\t'), (local, domain, pad) => {
        const once = normaliseEmail(`${pad}${local}@${domain}${pad}`);
        expect(once).toBe(`${local}@${domain.toLowerCase()}`);
        expect(normaliseEmail(once)).toBe(once);
      }),
    );
  });

  it('refuses anything that is not local@domain with a usage error', () => {
    for (const bad of ['', 'ada', '@example.com', 'ada@', 'a b@example.com']) expect(() => normaliseEmail(bad)).toThrow(expect.objectContaining({ code: 'usage' }));
    fc.assert(
      fc.property(fc.string(), (text) => {
        try {
          expect(normaliseEmail(text)).toContain('@');
        } catch (error) {
          expect((error as { code?: string }).code).toBe('usage');
        }
      }),
    );
  });
});

for (const backend of backends) {
  describe.skipIf(backend.skip)(`the ${backend.name} account store`, () => {
    let stores: Stores;
    beforeAll(async () => {
      stores = await backend.open();
    }, 30_000);
    afterAll(async () => {
      await stores?.close();
    });
    const plans = loadPlanTable();

    it('keeps one account per e-mail address, whatever the case of its domain', async () => {
      const made = await stores.accounts.create({ email: ' ada@Example.ORG ', passwordHash: 'scrypt$x' });
      expect(made).toMatchObject({ kind: 'account', email: 'ada@example.org', plan: 'free', hasPassword: true, emailVerifiedAt: null, disabledAt: null });
      expect(made.id).toMatch(/^[a-z2-7]{12}$/);
      await expect(stores.accounts.create({ email: 'ada@EXAMPLE.org', passwordHash: null })).rejects.toMatchObject({ code: 'usage' });
      // The local part keeps its case: another mailbox.
      const other = await stores.accounts.create({ email: 'Ada@example.org', passwordHash: null });
      expect(other.hasPassword).toBe(false);
      expect(await stores.accounts.byEmail('ada@EXAMPLE.ORG')).toEqual(made);
      expect(await stores.accounts.find(made.id)).toEqual(made);
      expect(await stores.accounts.find('ada@example.ORG')).toEqual(made);
      await expect(stores.accounts.find('nobody@example.org')).rejects.toMatchObject({ code: 'not_found' });
      await expect(stores.accounts.find('nosuchid')).rejects.toMatchObject({ code: 'not_found' });
      expect((await stores.accounts.list()).map((account) => account.id)).toEqual(expect.arrayContaining([made.id, other.id]));
      expect(await stores.accounts.passwordHash(made.id)).toBe('scrypt$x');
      expect((await stores.accounts.setPasswordHash(other.id, 'scrypt$y')).hasPassword).toBe(true);
      const verified = await stores.accounts.markVerified(made.id);
      expect(verified.emailVerifiedAt).not.toBeNull();
      expect((await stores.accounts.markVerified(made.id)).emailVerifiedAt).toBe(verified.emailVerifiedAt);
    });

    it('changes plans only to plans of the plans table', async () => {
      const account = await stores.accounts.create({ email: 'plans@example.org', passwordHash: null });
      expect((await stores.accounts.setPlan(account.id, 'pro', plans)).plan).toBe('pro');
      for (const bad of ['platinum', 'toString', '__proto__', 'constructor']) {
        await expect(stores.accounts.setPlan(account.id, bad, plans)).rejects.toMatchObject({ code: 'usage' });
      }
      expect((await stores.accounts.byId(account.id))!.plan).toBe('pro');
      await expect(stores.accounts.setPlan('nosuchid', 'pro', plans)).rejects.toMatchObject({ code: 'not_found' });
    });

    it('refuses the keys of a disabled account at check, and leaves other keys alone', async () => {
      const account = await stores.accounts.create({ email: 'disable@example.org', passwordHash: null });
      const own = await stores.keys.create({ plan: 'free', accountId: account.id });
      const operators = await stores.keys.create({ plan: 'pro' });
      expect(await stores.keys.check(own.key)).toEqual({ ok: true, record: own.record });
      expect(await stores.accounts.keysOf(account.id)).toEqual([own.record]);
      await expect(stores.keys.create({ plan: 'free', accountId: 'nosuchaccnt2' })).rejects.toMatchObject({ code: 'not_found' });
      const disabled = await stores.accounts.disable(account.id);
      expect(disabled.disabledAt).not.toBeNull();
      expect((await stores.accounts.disable(account.id)).disabledAt).toBe(disabled.disabledAt);
      expect(await stores.keys.check(own.key)).toEqual({ ok: false, reason: 'revoked', id: own.record.id });
      expect(await stores.keys.check(operators.key)).toMatchObject({ ok: true });
    });

    it('deletes an account with its keys and links', async () => {
      const account = await stores.accounts.create({ email: 'delete@example.org', passwordHash: null });
      const own = await stores.keys.create({ plan: 'free', accountId: account.id });
      const link = createLinkToken('verify-email');
      await stores.accounts.storeLink({ accountId: account.id, purpose: 'verify-email', tokenHash: link.hash, expiresAt: link.expiresAt });
      expect(await stores.accounts.delete(account.id)).toEqual(account);
      expect(await stores.accounts.byId(account.id)).toBeNull();
      expect((await stores.keys.list()).map((key) => key.id)).not.toContain(own.record.id);
      expect(await stores.keys.check(own.key)).toMatchObject({ ok: false, reason: 'unknown' });
      expect(await stores.accounts.consumeLink(link.token, 'verify-email')).toBeNull();
      await expect(stores.accounts.delete(account.id)).rejects.toMatchObject({ code: 'not_found' });
      // The address is free again.
      expect((await stores.accounts.create({ email: 'delete@example.org', passwordHash: null })).id).not.toBe(account.id);
    });

    it('lets exactly one of two consumers at once use a link, and none use an expired one or another purpose; shows its holder until then', async () => {
      const account = await stores.accounts.create({ email: 'links@example.org', passwordHash: null });
      const link = createLinkToken('reset-password');
      await stores.accounts.storeLink({ accountId: account.id, purpose: 'reset-password', tokenHash: link.hash, expiresAt: link.expiresAt });
      expect(await stores.accounts.consumeLink(link.token, 'verify-email')).toBeNull();
      // Looking at a link does not use it.
      expect(await stores.accounts.linkHolder(link.token, 'reset-password')).toEqual(account);
      expect(await stores.accounts.linkHolder(link.token, 'reset-password')).toEqual(account);
      expect(await stores.accounts.linkHolder(link.token, 'verify-email')).toBeNull();
      const results = await Promise.all([stores.accounts.consumeLink(link.token, 'reset-password'), stores.accounts.consumeLink(link.token, 'reset-password')]);
      expect(results.filter((result) => result === account.id)).toHaveLength(1);
      expect(results.filter((result) => result === null)).toHaveLength(1);
      expect(await stores.accounts.consumeLink(link.token, 'reset-password')).toBeNull();
      expect(await stores.accounts.linkHolder(link.token, 'reset-password')).toBeNull();

      const old = createLinkToken('verify-email', new Date('2030-01-01T00:00:00Z'));
      await stores.accounts.storeLink({ accountId: account.id, purpose: 'verify-email', tokenHash: old.hash, expiresAt: old.expiresAt });
      expect(await stores.accounts.linkHolder(old.token, 'verify-email', old.expiresAt)).toBeNull();
      expect(await stores.accounts.consumeLink(old.token, 'verify-email', old.expiresAt)).toBeNull();
      expect(await stores.accounts.consumeLink(old.token, 'verify-email', new Date(old.expiresAt.getTime() - 1))).toBe(account.id);
      expect(await stores.accounts.consumeLink('not-a-token', 'verify-email')).toBeNull();
    });
  });
}

describe('a keys database of the previous schema', () => {
  const oldApiKeys = `CREATE TABLE api_keys (id TEXT PRIMARY KEY, key_hash BLOB NOT NULL, plan TEXT NOT NULL, label TEXT, limits TEXT, created_at TEXT NOT NULL, revoked_at TEXT) STRICT;`;

  it('SQLite: an old keys.db opens, migrates once, and its keys still work', async () => {
    const path = sqlitePath();
    // What netintel made before versioning: the table alone, user_version 0.
    const before = openSqliteKeyStore(path);
    const { key, record } = await before.create({ plan: 'pro', label: 'old' });
    await before.close();
    const raw = new Database(path);
    raw.exec('DROP TABLE IF EXISTS key_usage; DROP TABLE IF EXISTS settings; DROP TABLE IF EXISTS accounts; DROP TABLE IF EXISTS account_links; DROP INDEX IF EXISTS api_keys_account;');
    raw.exec(`CREATE TABLE old_keys AS SELECT id, key_hash, plan, label, limits, created_at, revoked_at FROM api_keys; DROP TABLE api_keys; ${oldApiKeys} INSERT INTO api_keys SELECT * FROM old_keys; DROP TABLE old_keys;`);
    raw.pragma('user_version = 0');
    raw.close();

    const keys = openSqliteKeyStore(path, { recheckMs: 0 });
    const accounts = openSqliteAccountStore(path);
    try {
      expect(await keys.check(key)).toEqual({ ok: true, record });
      expect(await keys.list()).toEqual([record]);
      const check = new Database(path, { readonly: true });
      expect(check.pragma('user_version', { simple: true })).toBe(SQLITE_MIGRATIONS.length);
      expect((check.prepare("SELECT count(*) AS n FROM pragma_table_info('api_keys') WHERE name = 'account_id'").get() as { n: number }).n).toBe(1);
      check.close();
      const account = await accounts.create({ email: 'new@example.org', passwordHash: null });
      expect((await keys.create({ plan: 'free', accountId: account.id })).record.plan).toBe('free');
    } finally {
      await keys.close();
      await accounts.close();
    }
    // Opening again applies nothing (an ALTER TABLE run twice would fail).
    const again = openSqliteAccountStore(path);
    expect((await again.list()).map((account) => account.email)).toEqual(['new@example.org']);
    await again.close();
  });

  it.skipIf(programs === null)('PostgreSQL: a database at migration 1 opens, gets migration 2 once, and its keys still work', async () => {
    const url = await postgres!.createDatabase('accounts_old_schema');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      // Migration 1 as released, recorded as netintel recorded it.
      await client.query('CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
      await client.query('CREATE TABLE api_keys (id text PRIMARY KEY, key_hash bytea NOT NULL, plan text NOT NULL, label text, limits text, created_at timestamptz NOT NULL, revoked_at timestamptz)');
      await client.query('INSERT INTO schema_migrations (version) VALUES (1)');
    } finally {
      await client.end();
    }
    const first = await openPostgresKeyStore(url);
    const made = await first.create({ plan: 'starter' });
    await first.close();
    const keys = await openPostgresKeyStore(url);
    const accounts = await openPostgresAccountStore(url);
    try {
      expect(await keys.check(made.key)).toEqual({ ok: true, record: made.record });
      const account = await accounts.create({ email: 'pg@example.org', passwordHash: null });
      const own = await keys.create({ plan: 'free', accountId: account.id });
      expect(await accounts.keysOf(account.id)).toEqual([own.record]);
      const raw = new pg.Client({ connectionString: url });
      await raw.connect();
      expect((await raw.query('SELECT version FROM schema_migrations ORDER BY version')).rows.map((row) => row.version)).toEqual(POSTGRES_MIGRATIONS.map((migration) => migration.version));
      await raw.end();
    } finally {
      await keys.close();
      await accounts.close();
    }
  });
});

describe.skipIf(programs === null)('netintel accounts --db postgres://...', () => {
  it('lists, changes the plan of and disables accounts of a PostgreSQL database (built CLI)', async () => {
    const url = await postgres!.createDatabase('accounts_cli');
    const accounts = await openPostgresAccountStore(url);
    const keys = await openPostgresKeyStore(url);
    const account = await accounts.create({ email: 'ops@Example.net', passwordHash: null });
    const own = await keys.create({ plan: 'free', accountId: account.id });
    try {
      const list = await spawnCli(['accounts', 'list', '--db', url, '-f', 'json']);
      expect(list.code).toBe(0);
      expect(JSON.parse(list.stdout)).toEqual([account]);
      const set = await spawnCli(['accounts', 'set-plan', 'ops@example.NET', 'starter', '-f', 'json'], { env: { NETINTEL_DB: url } });
      expect(JSON.parse(set.stdout)).toMatchObject({ id: account.id, plan: 'starter' });
      expect((await spawnCli(['accounts', 'set-plan', account.id, 'gold', '--db', url])).code).toBe(2);
      expect((await spawnCli(['accounts', 'show', 'nobody@example.net', '--db', url])).code).toBe(3);
      expect((await spawnCli(['accounts', 'disable', account.id, '--db', url])).code).toBe(0);
      expect(await keys.check(own.key)).toEqual({ ok: false, reason: 'revoked', id: own.record.id });
    } finally {
      await Promise.all([accounts.close(), keys.close()]);
    }
  }, 60_000);
});
