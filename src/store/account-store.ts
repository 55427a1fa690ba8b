import { randomBytes } from 'node:crypto';
import { canonicalEmail, canonicalEmailOrNull } from '../accounts/email-address.js';
import { createLinkToken, hashLinkToken, type LinkPurpose } from '../accounts/link-tokens.js';
import { NetintelError } from '../errors.js';
import { randomId } from '../keys/api-key.js';
import { checkKeyedPlan, type PlanTable } from '../keys/plans.js';
import type { Database, Queryable } from './database.js';
import { keyRecordOf, type ApiKeyRecord, type KeyRow } from './key-store.js';
import type { MailKind } from './mail-outbox-store.js';

/** An account as `netintel accounts` shows it: never its password hash. */
export interface AccountRecord {
  kind: 'account';
  id: string;
  email: string;
  email_verified_at: string | null;
  plan: string;
  /** False for an account that signs in only through another provider. */
  has_password: boolean;
  created_at: string;
  disabled_at: string | null;
}

export interface CreateAccountInput {
  /** Any spelling: the store keeps the canonical one (canonicalEmail). */
  email: string;
  /** A hash from passwords.ts, or null for an account without a password. */
  passwordHash: string | null;
  /** Default 'free'. */
  plan?: string;
}

/** A link for a mail: the token goes only into the message, the store keeps its hash. */
export interface IssuedLink {
  token: string;
  expiresAt: Date;
}

/**
 * What can be done to accounts, their links, sessions and queued mail: on
 * the database directly, or inside `atomically`, where every call is part
 * of one transaction (an account, its link and the message carrying the
 * link are written together or not at all). Methods naming an account by id
 * throw NetintelError `not_found` when there is none.
 */
export interface AccountOperations {
  /** @throws NetintelError `usage` for text that is not an address (canonicalEmail), or one an account already has. */
  create(input: CreateAccountInput): Promise<AccountRecord>;
  /** As `create`, but null when the address has an account already. */
  createIfAbsent(input: CreateAccountInput): Promise<AccountRecord | null>;
  byId(id: string): Promise<AccountRecord | null>;
  /** Finds by the canonical address; null for text that is not an address. */
  byEmail(email: string): Promise<AccountRecord | null>;
  /** An id, else an e-mail address (anything with an @): what operators type. */
  find(idOrEmail: string): Promise<AccountRecord>;
  list(): Promise<AccountRecord[]>;
  /** The stored password hash, or null; for signing in. */
  passwordHash(id: string): Promise<string | null>;
  /** Marks the address verified; a second call keeps the first date. */
  markVerified(id: string): Promise<AccountRecord>;
  /**
   * Sets (or, with null, removes) the password. Every unused link of the
   * account stops working: a link is valid only while no password change
   * happened since it was sent. Sessions are the caller's to end.
   */
  setPasswordHash(id: string, hash: string | null): Promise<AccountRecord>;
  /**
   * Sets the plan of the account and of every key it has.
   *
   * @throws NetintelError `usage` for a plan not in `plans`, or the plan of
   *   requests without a key (checkKeyedPlan).
   */
  setPlan(id: string, plan: string, plans: PlanTable): Promise<AccountRecord>;
  /** Disables the account: its keys are refused and its sessions end. A second call keeps the first date. */
  disable(id: string): Promise<AccountRecord>;
  /** Deletes the account with its keys, links, sessions and unsent mail; returns what it was. */
  delete(id: string): Promise<AccountRecord>;
  /**
   * A new link of `purpose` for the account. Older unused links of that
   * purpose stop working: only the newest one mailed is valid.
   */
  issueLink(accountId: string, purpose: LinkPurpose): Promise<IssuedLink>;
  /**
   * Uses a mailed link's token once: marks it used if it is unused, of
   * `purpose` and not expired, in one statement, so of two requests at once
   * exactly one gets the account id; the other (and any later one) gets null.
   */
  consumeLink(token: string, purpose: LinkPurpose): Promise<string | null>;
  /** The account a link would act for, without using it: null when it is unknown, used, expired, replaced or of another purpose. */
  linkHolder(token: string, purpose: LinkPurpose): Promise<AccountRecord | null>;
  keysOf(id: string): Promise<ApiKeyRecord[]>;
  /**
   * Starts a session of the account, `lifetimeMs` long; returns its id (for
   * the cookie: the store keeps its SHA-256). With `whilePasswordIs`, the
   * session starts only if that is still the account's password hash, and
   * null is returned if it is not: a sign-in checked against a password
   * that a change or a reset replaced meanwhile starts no session that the
   * change's ending of sessions has already missed.
   */
  startSession(accountId: string, lifetimeMs: number, whilePasswordIs?: string): Promise<string | null>;
  /** The account a session id belongs to, while the session lasts and the account is enabled; else null. */
  sessionAccount(sessionId: string): Promise<AccountRecord | null>;
  /** Ends one session (logging out). */
  endSession(sessionId: string): Promise<void>;
  /** Ends every session of the account but `keep` (when given); returns how many ended. */
  endSessions(accountId: string, keep?: string): Promise<number>;
  /**
   * The holder's own change of password, from the session `keep`: sets
   * `hash` only while `whilePasswordIs` is still the stored hash and `keep`
   * is still a live session of the account, then ends every unused link and
   * every other session. Returns how many sessions ended, or null, changing
   * nothing, when a reset, another change or the end of `keep` came first:
   * a change checked against a password the account no longer has must not
   * undo the newer one (a stolen session racing the owner's reset).
   */
  changePassword(accountId: string, change: { keep: string; whilePasswordIs: string; hash: string }): Promise<number | null>;
  /** Sessions of the account that have not ended or expired. */
  sessionCount(accountId: string): Promise<number>;
  /** Queues a message in the outbox (the mail sender makes and sends it); returns its id, which is also its Message-ID's. */
  queueMail(kind: MailKind, accountId: string | null, recipient: string): Promise<string>;
}

export interface AccountStore extends AccountOperations {
  readonly location: string;
  /** Runs `work` in one transaction: everything it does through its argument is written together, or not at all. */
  atomically<T>(work: (accounts: AccountOperations) => Promise<T>): Promise<T>;
  /**
   * The key that seals the account pages' session cookies: 32 random bytes
   * made by the first server that asks and kept in the database, so every
   * server sharing it reads every session.
   */
  sessionKey(): Promise<Buffer>;
}

interface AccountRow {
  id: string;
  email: string;
  email_verified_at: string | null;
  password_hash: string | null;
  plan: string;
  created_at: string;
  disabled_at: string | null;
}

/** What the account store is given besides its database. */
export interface AccountStoreOptions {
  now?: () => Date;
  /** Called after a change to an account that changes what its keys allow (deleted, disabled, another plan): the key store's forgetChecked. */
  keysChanged?: () => void;
}

/** The account store over the store's database. */
export function createAccountStore(db: Database, options: AccountStoreOptions = {}): AccountStore {
  const now = options.now ?? (() => new Date());
  const keysChanged = options.keysChanged ?? (() => {});
  /** After a change of what an account's keys allow (committed or not), their next checks read them afresh. */
  const changingKeys = async <T>(work: Promise<T>): Promise<T> => {
    try {
      return await work;
    } finally {
      keysChanged();
    }
  };
  const atomically: AccountStore['atomically'] = (work) => db.transaction((tx) => work(accountOperations(tx, db.dialect, now)));
  return {
    location: db.location,
    ...accountOperations(db, db.dialect, now),
    // Each of these writes several tables: one transaction, so that a failure half way (a full disk,
    // a lost connection) leaves the account as it was, never its keys gone and the account still there.
    setPasswordHash: (id, hash) => atomically((tx) => tx.setPasswordHash(id, hash)),
    changePassword: (id, change) => atomically((tx) => tx.changePassword(id, change)),
    setPlan: (id, plan, plans) => changingKeys(atomically((tx) => tx.setPlan(id, plan, plans))),
    disable: (id) => changingKeys(atomically((tx) => tx.disable(id))),
    delete: (id) => changingKeys(atomically((tx) => tx.delete(id))),
    atomically,
    async sessionKey() {
      await db.run("INSERT INTO settings (name, value) VALUES ('session_key', $1) ON CONFLICT (name) DO NOTHING", [randomBytes(32).toString('base64')]);
      const row = await db.one<{ value: string }>("SELECT value FROM settings WHERE name = 'session_key'");
      return Buffer.from(row!.value, 'base64');
    },
  };
}

function accountOperations(q: Queryable, dialect: Database['dialect'], now: () => Date): AccountOperations {
  const rows = accountRows(q);
  const records = accountRecords(q, now, rows);
  const sessions = sessionOperations(q, dialect, now);
  return {
    ...records,
    ...linkOperations(q, dialect, now, rows),
    ...sessions,
    async changePassword(accountId, { keep, whilePasswordIs, hash }) {
      // The account's row first, held to the end (PostgreSQL): a reset, a change or a disabling that wrote it
      // before makes this re-read it; the password must still be the one checked. Then the session, read after
      // the lock: one that those ended is gone. (A later statement sees what committed before it, READ
      // COMMITTED; a condition inside the UPDATE would be read at the UPDATE's start only.)
      const lock = dialect === 'postgres' ? ' FOR UPDATE' : '';
      if (!(await q.one(`SELECT id FROM accounts WHERE id = $1 AND password_hash = $2${lock}`, [accountId, whilePasswordIs]))) return null;
      if ((await sessions.sessionAccount(keep))?.id !== accountId) return null;
      await records.setPasswordHash(accountId, hash);
      return sessions.endSessions(accountId, keep);
    },
    async keysOf(id) {
      await rows.row(id);
      return (await q.all<KeyRow>('SELECT * FROM api_keys WHERE account_id = $1 ORDER BY created_at, id', [id])).map(keyRecordOf);
    },
    async queueMail(kind, accountId, recipient) {
      const id = outboxId();
      const at = now();
      await q.run('INSERT INTO mail_outbox (id, kind, account_id, recipient, created_at, next_attempt_at) VALUES ($1, $2, $3, $4, $5, $5)', [id, kind, accountId, recipient, at]);
      return id;
    },
  };
}

/** Reading one account's row by id, for the operations that need it. */
interface AccountRows {
  byId(id: string): Promise<AccountRow | undefined>;
  /** @throws NetintelError `not_found` when no account has the id. */
  row(id: string): Promise<AccountRow>;
  /** @throws as `row`. */
  record(id: string): Promise<AccountRecord>;
}

function accountRows(q: Queryable): AccountRows {
  const byId = (id: string) => q.one<AccountRow>('SELECT * FROM accounts WHERE id = $1', [id]);
  const row = async (id: string): Promise<AccountRow> => {
    const found = await byId(id);
    if (!found) throw accountNotFound(id);
    return found;
  };
  return { byId, row, record: async (id) => accountRecordOf(await row(id)) };
}

type RecordOperations = Pick<
  AccountOperations,
  'create' | 'createIfAbsent' | 'byId' | 'byEmail' | 'find' | 'list' | 'passwordHash' | 'markVerified' | 'setPasswordHash' | 'setPlan' | 'disable' | 'delete'
>;

/** The accounts themselves: made, found, changed, disabled and deleted. */
function accountRecords(q: Queryable, now: () => Date, { byId, row, record }: AccountRows): RecordOperations {
  const records: RecordOperations = {
    async create(input) {
      const created = await records.createIfAbsent(input);
      if (created === null) throw emailTaken(canonicalEmail(input.email));
      return created;
    },
    async createIfAbsent(input) {
      const email = canonicalEmail(input.email);
      const created = await q.one<AccountRow>(
        'INSERT INTO accounts (id, email, password_hash, plan, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (email) DO NOTHING RETURNING *',
        [randomId(), email, input.passwordHash, input.plan ?? 'free', now()],
      );
      return created ? accountRecordOf(created) : null;
    },
    byId: async (id) => {
      const found = await byId(id);
      return found ? accountRecordOf(found) : null;
    },
    async byEmail(email) {
      const canonical = canonicalEmailOrNull(email);
      if (canonical === null) return null;
      const found = await q.one<AccountRow>('SELECT * FROM accounts WHERE email = $1', [canonical]);
      return found ? accountRecordOf(found) : null;
    },
    async find(idOrEmail) {
      const found = idOrEmail.includes('@') ? await records.byEmail(idOrEmail) : await records.byId(idOrEmail);
      if (!found) throw accountNotFound(idOrEmail);
      return found;
    },
    list: async () => (await q.all<AccountRow>('SELECT * FROM accounts ORDER BY created_at, id')).map(accountRecordOf),
    passwordHash: async (id) => (await row(id)).password_hash,
    async markVerified(id) {
      await q.run('UPDATE accounts SET email_verified_at = $1 WHERE id = $2 AND email_verified_at IS NULL', [now(), id]);
      return record(id);
    },
    async setPasswordHash(id, hash) {
      if ((await q.run('UPDATE accounts SET password_hash = $1 WHERE id = $2', [hash, id])) === 0) throw accountNotFound(id);
      await q.run('DELETE FROM account_links WHERE account_id = $1 AND used_at IS NULL', [id]);
      return record(id);
    },
    async setPlan(id, plan, plans) {
      checkKeyedPlan(plans, plan);
      if ((await q.run('UPDATE accounts SET plan = $1 WHERE id = $2', [plan, id])) === 0) throw accountNotFound(id);
      await q.run('UPDATE api_keys SET plan = $1 WHERE account_id = $2', [plan, id]);
      return record(id);
    },
    async disable(id) {
      await q.run('UPDATE accounts SET disabled_at = $1 WHERE id = $2 AND disabled_at IS NULL', [now(), id]);
      await q.run('DELETE FROM sessions WHERE account_id = $1', [id]);
      return record(id);
    },
    async delete(id) {
      const gone = await record(id);
      // PostgreSQL's foreign keys cascade, SQLite's older tables have none: said for both.
      for (const table of ['key_usage', 'api_keys', 'account_links', 'sessions', 'mail_outbox']) {
        const where = table === 'key_usage' ? 'key_id IN (SELECT id FROM api_keys WHERE account_id = $1)' : 'account_id = $1';
        await q.run(`DELETE FROM ${table} WHERE ${where}`, [id]);
      }
      await q.run('DELETE FROM accounts WHERE id = $1', [id]);
      return gone;
    },
  };
  return records;
}

/** The one-use links of e-mail verification and password reset. */
function linkOperations(q: Queryable, dialect: Database['dialect'], now: () => Date, { row }: AccountRows): Pick<AccountOperations, 'issueLink' | 'consumeLink' | 'linkHolder'> {
  return {
    async issueLink(accountId, purpose) {
      await row(accountId);
      const link = createLinkToken(purpose, now());
      await q.run('DELETE FROM account_links WHERE account_id = $1 AND purpose = $2 AND used_at IS NULL', [accountId, purpose]);
      await q.run('INSERT INTO account_links (token_hash, account_id, purpose, expires_at) VALUES ($1, $2, $3, $4)', [link.hash, accountId, purpose, link.expiresAt]);
      return { token: link.token, expiresAt: link.expiresAt };
    },
    async consumeLink(token, purpose) {
      const at = now();
      // On PostgreSQL the account's row is taken before the link's, as a password change takes it before it
      // deletes the links: two transactions taking the two rows in opposite orders would deadlock.
      if (dialect === 'postgres') await q.one('SELECT a.id FROM account_links l JOIN accounts a ON a.id = l.account_id WHERE l.token_hash = $1 FOR UPDATE OF a', [hashLinkToken(token)]);
      const used = await q.one<{ account_id: string }>(
        'UPDATE account_links SET used_at = $1 WHERE token_hash = $2 AND purpose = $3 AND used_at IS NULL AND expires_at > $1 RETURNING account_id',
        [at, hashLinkToken(token), purpose],
      );
      return used ? used.account_id : null;
    },
    async linkHolder(token, purpose) {
      const found = await q.one<AccountRow>(
        'SELECT a.* FROM account_links l JOIN accounts a ON a.id = l.account_id WHERE l.token_hash = $1 AND l.purpose = $2 AND l.used_at IS NULL AND l.expires_at > $3',
        [hashLinkToken(token), purpose, now()],
      );
      return found ? accountRecordOf(found) : null;
    },
  };
}

/** Log-in sessions, kept as hashes of their ids. */
function sessionOperations(
  q: Queryable,
  dialect: Database['dialect'],
  now: () => Date,
): Pick<AccountOperations, 'startSession' | 'sessionAccount' | 'endSession' | 'endSessions' | 'sessionCount'> {
  const sessionHash = (sessionId: string) => hashLinkToken(sessionId);
  // On PostgreSQL the account's row is held while the session is added: a
  // password change's UPDATE either waits for the new session (and its
  // DELETE of sessions, a later statement, sees it) or is waited for (and
  // the changed hash no longer matches). SQLite writes one at a time.
  const holdAccount = dialect === 'postgres' ? ' FOR SHARE' : '';
  return {
    async startSession(accountId, lifetimeMs, whilePasswordIs) {
      const at = now();
      const sessionId = randomBytes(32).toString('base64url');
      // Sessions past their end are dropped as new ones start, so the table holds only live ones and a few stale.
      await q.run('DELETE FROM sessions WHERE expires_at <= $1', [at]);
      const session = [sessionHash(sessionId), accountId, at, new Date(at.getTime() + lifetimeMs)];
      if (whilePasswordIs === undefined) {
        await q.run('INSERT INTO sessions (id_hash, account_id, created_at, expires_at) VALUES ($1, $2, $3, $4)', session);
        return sessionId;
      }
      const started = await q.run(
        `INSERT INTO sessions (id_hash, account_id, created_at, expires_at)
         SELECT $1, id, $3, $4 FROM accounts WHERE id = $2 AND password_hash = $5${holdAccount}`,
        [...session, whilePasswordIs],
      );
      return started === 1 ? sessionId : null;
    },
    async sessionAccount(sessionId) {
      const found = await q.one<AccountRow>(
        'SELECT a.* FROM sessions s JOIN accounts a ON a.id = s.account_id WHERE s.id_hash = $1 AND s.expires_at > $2 AND a.disabled_at IS NULL',
        [sessionHash(sessionId), now()],
      );
      return found ? accountRecordOf(found) : null;
    },
    async endSession(sessionId) {
      await q.run('DELETE FROM sessions WHERE id_hash = $1', [sessionHash(sessionId)]);
    },
    endSessions: (accountId, keep) =>
      keep === undefined
        ? q.run('DELETE FROM sessions WHERE account_id = $1', [accountId])
        : q.run('DELETE FROM sessions WHERE account_id = $1 AND id_hash <> $2', [accountId, sessionHash(keep)]),
    async sessionCount(accountId) {
      const counted = await q.one<{ sessions: number | string }>('SELECT count(*) AS sessions FROM sessions WHERE account_id = $1 AND expires_at > $2', [accountId, now()]);
      return Number(counted?.sessions ?? 0);
    },
  };
}

let sequence = 0;

/**
 * 32 hex digits that sort in the order the rows were made (wall-clock
 * milliseconds, then a counter of this process, then 64 random bits), so
 * the outbox sends first what was queued first, whatever clock the store
 * is given.
 */
function outboxId(): string {
  sequence = (sequence + 1) & 0xffff;
  return `${Date.now().toString(16).padStart(12, '0')}${sequence.toString(16).padStart(4, '0')}${randomBytes(8).toString('hex')}`;
}

function accountRecordOf(row: AccountRow): AccountRecord {
  return {
    kind: 'account',
    id: row.id,
    email: row.email,
    email_verified_at: row.email_verified_at,
    plan: row.plan,
    has_password: row.password_hash !== null,
    created_at: row.created_at,
    disabled_at: row.disabled_at,
  };
}

export function accountNotFound(idOrEmail: string): NetintelError {
  return new NetintelError('not_found', `no account has the ${idOrEmail.includes('@') ? 'e-mail address' : 'id'} ${JSON.stringify(idOrEmail)}`, {
    details: { account: idOrEmail },
  });
}

export function emailTaken(email: string): NetintelError {
  return new NetintelError('usage', `an account with the e-mail address ${JSON.stringify(email)} exists already (use another address)`, { details: { email } });
}
