import { randomBytes } from 'node:crypto';
import { randomId } from '../keys/api-key.js';
import type { ApiKeyRecord } from '../keys/key-store.js';
import { effectivePlan, type PlanTable } from '../keys/plans.js';
import { keyRecordOf, openKeyDatabase, type KeyRow } from '../keys/sqlite-key-store.js';
import { accountNotFound, emailTaken, normaliseEmail, type AccountRecord, type AccountStore, type CreateAccountInput, type NewLinkRow } from './account-store.js';
import { hashLinkToken, type LinkPurpose } from './link-tokens.js';

interface AccountRow {
  id: string;
  email: string;
  email_verified_at: string | null;
  password_hash: string | null;
  plan: string;
  created_at: string;
  disabled_at: string | null;
  session_epoch: number;
}

/**
 * Accounts in the SQLite file of the keys (sqlite-key-store.ts opens the
 * same file, the schema is shared: sqlite-schema.ts). Its own connection:
 * a server's key store sees changes made here as it sees those of
 * `netintel keys`.
 *
 * @throws NetintelError `usage` when the database cannot be opened.
 */
export function openSqliteAccountStore(path: string, options: { now?: () => Date } = {}): AccountStore {
  const now = options.now ?? (() => new Date());
  const db = openKeyDatabase(path);
  const byId = db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE id = ?');
  const byEmail = db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE email = ?');
  const update = (column: 'email_verified_at' | 'disabled_at') => db.prepare(`UPDATE accounts SET ${column} = ? WHERE id = ? AND ${column} IS NULL`);
  const verify = update('email_verified_at');
  const disable = update('disabled_at');

  const row = (id: string): AccountRow => {
    const found = byId.get(id);
    if (!found) throw accountNotFound(id);
    return found;
  };
  const setPlan = db.transaction((id: string, plan: string) => {
    db.prepare('UPDATE accounts SET plan = ? WHERE id = ?').run(plan, id);
    db.prepare('UPDATE api_keys SET plan = ? WHERE account_id = ?').run(plan, id);
  });
  const sessionKey = db.transaction((): string => {
    db.prepare("INSERT INTO settings (name, value) VALUES ('session_key', ?) ON CONFLICT (name) DO NOTHING").run(randomBytes(32).toString('base64'));
    return db.prepare<[], { value: string }>("SELECT value FROM settings WHERE name = 'session_key'").get()!.value;
  });
  const removeAll = db.transaction((id: string) => {
    db.prepare('DELETE FROM api_keys WHERE account_id = ?').run(id);
    db.prepare('DELETE FROM account_links WHERE account_id = ?').run(id);
    db.prepare('DELETE FROM accounts WHERE id = ?').run(id);
  });

  const store: AccountStore = {
    location: path,
    async create(input: CreateAccountInput): Promise<AccountRecord> {
      const created: AccountRow = {
        id: randomId(),
        email: normaliseEmail(input.email),
        email_verified_at: null,
        password_hash: input.passwordHash,
        plan: input.plan ?? 'free',
        created_at: now().toISOString(),
        disabled_at: null,
        session_epoch: 0,
      };
      try {
        db.prepare(
          'INSERT INTO accounts (id, email, email_verified_at, password_hash, plan, created_at, disabled_at) VALUES (@id, @email, @email_verified_at, @password_hash, @plan, @created_at, @disabled_at)',
        ).run(created);
      } catch (error) {
        if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw emailTaken(created.email);
        throw error;
      }
      return accountRecordOf(created);
    },
    byId: async (id) => {
      const found = byId.get(id);
      return found ? accountRecordOf(found) : null;
    },
    byEmail: async (email) => {
      const found = byEmail.get(normaliseEmail(email));
      return found ? accountRecordOf(found) : null;
    },
    async find(idOrEmail) {
      const found = idOrEmail.includes('@') ? await store.byEmail(idOrEmail) : await store.byId(idOrEmail);
      if (!found) throw accountNotFound(idOrEmail);
      return found;
    },
    list: async () => db.prepare<[], AccountRow>('SELECT * FROM accounts ORDER BY created_at, id').all().map(accountRecordOf),
    passwordHash: async (id) => row(id).password_hash,
    async markVerified(id) {
      verify.run(now().toISOString(), id);
      return accountRecordOf(row(id));
    },
    async setPasswordHash(id, hash) {
      db.prepare('UPDATE accounts SET password_hash = ? WHERE id = ?').run(hash, id);
      return accountRecordOf(row(id));
    },
    async setPlan(id, plan, plans: PlanTable) {
      effectivePlan(plans, plan, null);
      row(id);
      setPlan.immediate(id, plan);
      return accountRecordOf(row(id));
    },
    async disable(id) {
      disable.run(now().toISOString(), id);
      return accountRecordOf(row(id));
    },
    async delete(id) {
      const record = accountRecordOf(row(id));
      removeAll.immediate(id);
      return record;
    },
    async storeLink(link: NewLinkRow) {
      row(link.accountId);
      db.prepare('INSERT INTO account_links (token_hash, account_id, purpose, expires_at) VALUES (?, ?, ?, ?)').run(
        link.tokenHash,
        link.accountId,
        link.purpose,
        link.expiresAt.toISOString(),
      );
    },
    async consumeLink(token: string, purpose: LinkPurpose, at: Date = now()) {
      const used = db
        .prepare<[{ at: string; hash: string; purpose: string }], { account_id: string }>(
          'UPDATE account_links SET used_at = @at WHERE token_hash = @hash AND purpose = @purpose AND used_at IS NULL AND expires_at > @at RETURNING account_id',
        )
        .get({ at: at.toISOString(), hash: hashLinkToken(token), purpose });
      return used ? used.account_id : null;
    },
    async linkHolder(token: string, purpose: LinkPurpose, at: Date = now()) {
      const found = db
        .prepare<[{ at: string; hash: string; purpose: string }], AccountRow>(
          'SELECT a.* FROM account_links l JOIN accounts a ON a.id = l.account_id WHERE l.token_hash = @hash AND l.purpose = @purpose AND l.used_at IS NULL AND l.expires_at > @at',
        )
        .get({ at: at.toISOString(), hash: hashLinkToken(token), purpose });
      return found ? accountRecordOf(found) : null;
    },
    async keysOf(id): Promise<ApiKeyRecord[]> {
      row(id);
      return db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, id').all(id).map(keyRecordOf);
    },
    sessionEpoch: async (id) => row(id).session_epoch,
    async endSessions(id) {
      row(id);
      return db.prepare<[string], { session_epoch: number }>('UPDATE accounts SET session_epoch = session_epoch + 1 WHERE id = ? RETURNING session_epoch').get(id)!.session_epoch;
    },
    sessionKey: async () => Buffer.from(sessionKey.immediate(), 'base64'),
    close: async () => {
      db.close();
    },
  };
  return store;
}

function accountRecordOf(row: AccountRow): AccountRecord {
  return {
    kind: 'account',
    id: row.id,
    email: row.email,
    emailVerifiedAt: row.email_verified_at,
    plan: row.plan,
    hasPassword: row.password_hash !== null,
    createdAt: row.created_at,
    disabledAt: row.disabled_at,
  };
}
