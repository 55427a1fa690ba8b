import { randomBytes } from 'node:crypto';
import { randomId } from '../keys/api-key.js';
import type { ApiKeyRecord } from '../keys/key-store.js';
import { effectivePlan, type PlanTable } from '../keys/plans.js';
import { connectPostgres, keyRecordOf, type KeyRow, type PostgresKeyStoreOptions } from '../keys/postgres-key-store.js';
import { accountNotFound, emailTaken, normaliseEmail, type AccountRecord, type AccountStore, type CreateAccountInput, type NewLinkRow } from './account-store.js';
import { hashLinkToken, type LinkPurpose } from './link-tokens.js';

interface AccountRow {
  id: string;
  email: string;
  email_verified_at: Date | null;
  password_hash: string | null;
  plan: string;
  created_at: Date;
  disabled_at: Date | null;
  session_epoch: number;
}

/**
 * Accounts in the PostgreSQL database of the keys (the schema is migration
 * 2 of postgres-migrations.ts). Deleting an account deletes its keys and
 * links in one transaction.
 *
 * @throws NetintelError as openPostgresKeyStore.
 */
export async function openPostgresAccountStore(url: string, options: PostgresKeyStoreOptions = {}): Promise<AccountStore> {
  const now = options.now ?? (() => new Date());
  const { pool, query, transaction, location } = await connectPostgres(url, options);
  const byId = async (id: string): Promise<AccountRow | undefined> => (await query<AccountRow>('SELECT * FROM accounts WHERE id = $1', [id]))[0];
  const row = async (id: string): Promise<AccountRow> => {
    const found = await byId(id);
    if (!found) throw accountNotFound(id);
    return found;
  };
  /** Runs an UPDATE of one account and returns the account as it is after. */
  const updated = async (id: string, text: string, values: unknown[]): Promise<AccountRecord> => {
    const rows = await query<AccountRow>(`${text} RETURNING *`, values);
    return accountRecordOf(rows[0] ?? (await row(id)));
  };

  const store: AccountStore = {
    location,
    async create(input: CreateAccountInput): Promise<AccountRecord> {
      const email = normaliseEmail(input.email);
      const rows = await query<AccountRow>(
        'INSERT INTO accounts (id, email, password_hash, plan, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (email) DO NOTHING RETURNING *',
        [randomId(), email, input.passwordHash, input.plan ?? 'free', now()],
      );
      if (rows.length === 0) throw emailTaken(email);
      return accountRecordOf(rows[0]!);
    },
    byId: async (id) => {
      const found = await byId(id);
      return found ? accountRecordOf(found) : null;
    },
    byEmail: async (email) => {
      const found = (await query<AccountRow>('SELECT * FROM accounts WHERE email = $1', [normaliseEmail(email)]))[0];
      return found ? accountRecordOf(found) : null;
    },
    async find(idOrEmail) {
      const found = idOrEmail.includes('@') ? await store.byEmail(idOrEmail) : await store.byId(idOrEmail);
      if (!found) throw accountNotFound(idOrEmail);
      return found;
    },
    list: async () => (await query<AccountRow>('SELECT * FROM accounts ORDER BY created_at, id')).map(accountRecordOf),
    passwordHash: async (id) => (await row(id)).password_hash,
    markVerified: (id) => updated(id, 'UPDATE accounts SET email_verified_at = $1 WHERE id = $2 AND email_verified_at IS NULL', [now(), id]),
    setPasswordHash: (id, hash) => updated(id, 'UPDATE accounts SET password_hash = $1 WHERE id = $2', [hash, id]),
    async setPlan(id, plan, plans: PlanTable) {
      effectivePlan(plans, plan, null);
      return transaction(async (client) => {
        const changed = (await client.query<AccountRow>('UPDATE accounts SET plan = $1 WHERE id = $2 RETURNING *', [plan, id])).rows[0];
        if (!changed) throw accountNotFound(id);
        await client.query('UPDATE api_keys SET plan = $1 WHERE account_id = $2', [plan, id]);
        return accountRecordOf(changed);
      });
    },
    disable: (id) => updated(id, 'UPDATE accounts SET disabled_at = $1 WHERE id = $2 AND disabled_at IS NULL', [now(), id]),
    async delete(id) {
      return transaction(async (client) => {
        const gone = (await client.query<AccountRow>('DELETE FROM accounts WHERE id = $1 RETURNING *', [id])).rows[0];
        if (!gone) throw accountNotFound(id);
        // The foreign keys cascade; said here as well so the intent does not rest on the schema alone.
        await client.query('DELETE FROM api_keys WHERE account_id = $1', [id]);
        await client.query('DELETE FROM account_links WHERE account_id = $1', [id]);
        return accountRecordOf(gone);
      });
    },
    async storeLink(link: NewLinkRow) {
      await row(link.accountId);
      await query('INSERT INTO account_links (token_hash, account_id, purpose, expires_at) VALUES ($1, $2, $3, $4)', [
        link.tokenHash,
        link.accountId,
        link.purpose,
        link.expiresAt,
      ]);
    },
    async consumeLink(token: string, purpose: LinkPurpose, at: Date = now()) {
      const rows = await query<{ account_id: string }>(
        'UPDATE account_links SET used_at = $1 WHERE token_hash = $2 AND purpose = $3 AND used_at IS NULL AND expires_at > $1 RETURNING account_id',
        [at, hashLinkToken(token), purpose],
      );
      return rows[0]?.account_id ?? null;
    },
    async linkHolder(token: string, purpose: LinkPurpose, at: Date = now()) {
      const rows = await query<AccountRow>(
        'SELECT a.* FROM account_links l JOIN accounts a ON a.id = l.account_id WHERE l.token_hash = $1 AND l.purpose = $2 AND l.used_at IS NULL AND l.expires_at > $3',
        [hashLinkToken(token), purpose, at],
      );
      return rows[0] ? accountRecordOf(rows[0]) : null;
    },
    async keysOf(id): Promise<ApiKeyRecord[]> {
      await row(id);
      return (await query<KeyRow>('SELECT * FROM api_keys WHERE account_id = $1 ORDER BY created_at, id', [id])).map(keyRecordOf);
    },
    sessionEpoch: async (id) => (await row(id)).session_epoch,
    async endSessions(id) {
      const rows = await query<{ session_epoch: number }>('UPDATE accounts SET session_epoch = session_epoch + 1 WHERE id = $1 RETURNING session_epoch', [id]);
      if (rows.length === 0) throw accountNotFound(id);
      return rows[0]!.session_epoch;
    },
    async sessionKey() {
      await query("INSERT INTO settings (name, value) VALUES ('session_key', $1) ON CONFLICT (name) DO NOTHING", [randomBytes(32).toString('base64')]);
      const rows = await query<{ value: string }>("SELECT value FROM settings WHERE name = 'session_key'");
      return Buffer.from(rows[0]!.value, 'base64');
    },
    close: () => pool.end(),
  };
  return store;
}

function accountRecordOf(row: AccountRow): AccountRecord {
  return {
    kind: 'account',
    id: row.id,
    email: row.email,
    emailVerifiedAt: row.email_verified_at === null ? null : row.email_verified_at.toISOString(),
    plan: row.plan,
    hasPassword: row.password_hash !== null,
    createdAt: row.created_at.toISOString(),
    disabledAt: row.disabled_at === null ? null : row.disabled_at.toISOString(),
  };
}
