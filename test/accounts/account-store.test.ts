/**
 * The account store contract, one body run against SQLite and against a
 * real PostgreSQL (test/support/postgres.ts): e-mail uniqueness, plans,
 * disabling and deleting with the keys of the account, single-use links,
 * and migrations over a keys database of the previous schema.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetintelError } from '../../src/errors.js';
import type { AccountStore } from '../../src/store/account-store.js';
import type { KeyStore } from '../../src/store/key-store.js';
import { loadPlanTable } from '../../src/keys/plans.js';
import type { MailOutboxStore } from '../../src/store/mail-outbox-store.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { spawnCli, tempDir } from '../support/cli.js';
import { findPostgres, startPostgresServer, type PostgresTestServer } from '../support/postgres.js';
import { accountStoreAt, keyStoreAt, openStore } from '../support/stores.js';

interface Stores {
  accounts: AccountStore;
  keys: KeyStore;
  outbox: MailOutboxStore;
  /** A second server on the same database: its own connections (PostgreSQL) or handle (SQLite). */
  other: { accounts: AccountStore; keys: KeyStore; outbox: MailOutboxStore };
  /** The SQLite file or PostgreSQL URL the stores are on. */
  target: string;
  /** Runs SQL on the database behind the stores' backs (a trigger standing in for a failing disk). */
  exec(sql: { sqlite: string; postgres: string }): Promise<void>;
  close(): Promise<void>;
}

/** The stores' clock: tests move it to expire links and sessions. */
let clockMs = Date.UTC(2030, 0, 1, 10, 0, 0);
const now = () => new Date(clockMs);

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

async function bothOn(target: string): Promise<Stores> {
  const store = await openStore(target, { recheckMs: 0, now });
  const other = await openStore(target, { recheckMs: 0, now });
  return {
    keys: store.keys,
    accounts: store.accounts,
    outbox: store.outbox,
    other: { accounts: other.accounts, keys: other.keys, outbox: other.outbox },
    target,
    async exec(sql) {
      if (!target.startsWith('postgres')) {
        const raw = new Database(target);
        raw.exec(sql.sqlite);
        raw.close();
        return;
      }
      const raw = new pg.Client({ connectionString: target });
      await raw.connect();
      try {
        await raw.query(sql.postgres);
      } finally {
        await raw.end();
      }
    },
    close: async () => void (await Promise.all([store.close(), other.close()])),
  };
}

const backends: Array<{ name: string; skip: boolean; open(): Promise<Stores> }> = [
  { name: 'SQLite', skip: false, open: () => bothOn(sqlitePath()) },
  { name: 'PostgreSQL', skip: programs === null, open: async () => bothOn(await postgres!.createDatabase(`accounts_${++databases}`)) },
];

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

    it('keeps one account per e-mail address, whatever the spelling of its domain', async () => {
      const made = await stores.accounts.create({ email: ' ada@Example.ORG ', passwordHash: 'scrypt$x' });
      expect(made).toMatchObject({ kind: 'account', email: 'ada@example.org', plan: 'free', has_password: true, email_verified_at: null, disabled_at: null });
      expect(made.id).toMatch(/^[a-z2-7]{12}$/);
      await expect(stores.accounts.create({ email: 'ada@EXAMPLE.org', passwordHash: null })).rejects.toMatchObject({ code: 'usage' });
      // The local part keeps its case: another mailbox.
      const other = await stores.accounts.create({ email: 'Ada@example.org', passwordHash: null });
      expect(other.has_password).toBe(false);
      expect(await stores.accounts.byEmail('ada@EXAMPLE.ORG')).toEqual(made);
      // One mailbox, one account: an IDN domain in U-label or A-label, any case, NFC or NFD local part.
      const idn = await stores.accounts.create({ email: 'jos\u00e9@M\u00fcnchen.DE', passwordHash: null });
      expect(idn.email).toBe('jos\u00e9@xn--mnchen-3ya.de');
      for (const spelling of ['jose\u0301@xn--mnchen-3ya.de', 'jos\u00e9@M\u00dcNCHEN.de', 'jos\u00e9@m\u00fcnchen.de.']) {
        await expect(stores.accounts.create({ email: spelling, passwordHash: null })).rejects.toMatchObject({ code: 'usage' });
        expect(await stores.accounts.byEmail(spelling)).toEqual(idn);
      }
      await expect(stores.accounts.create({ email: 'ada@example.org\u0000', passwordHash: null })).rejects.toMatchObject({ code: 'usage' });
      await expect(stores.accounts.create({ email: 'ad\u202ea@example.org', passwordHash: null })).rejects.toMatchObject({ code: 'usage' });
      expect(await stores.accounts.find(made.id)).toEqual(made);
      expect(await stores.accounts.find('ada@example.ORG')).toEqual(made);
      await expect(stores.accounts.find('nobody@example.org')).rejects.toMatchObject({ code: 'not_found' });
      await expect(stores.accounts.find('nosuchid')).rejects.toMatchObject({ code: 'not_found' });
      expect((await stores.accounts.list()).map((account) => account.id)).toEqual(expect.arrayContaining([made.id, other.id]));
      expect(await stores.accounts.passwordHash(made.id)).toBe('scrypt$x');
      expect((await stores.accounts.setPasswordHash(other.id, 'scrypt$y')).has_password).toBe(true);
      const verified = await stores.accounts.markVerified(made.id);
      expect(verified.email_verified_at).not.toBeNull();
      expect((await stores.accounts.markVerified(made.id)).email_verified_at).toBe(verified.email_verified_at);
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
      expect(await stores.keys.check(own.key)).toEqual({ ok: true, record: own.record, accountId: account.id });
      expect(await stores.accounts.keysOf(account.id)).toEqual([own.record]);
      await expect(stores.keys.create({ plan: 'free', accountId: 'nosuchaccnt2' })).rejects.toMatchObject({ code: 'not_found' });
      const disabled = await stores.accounts.disable(account.id);
      expect(disabled.disabled_at).not.toBeNull();
      expect((await stores.accounts.disable(account.id)).disabled_at).toBe(disabled.disabled_at);
      expect(await stores.keys.check(own.key)).toEqual({ ok: false, reason: 'revoked', id: own.record.id });
      expect(await stores.keys.check(operators.key)).toMatchObject({ ok: true });
    });

    it('deletes an account with its keys, links, sessions and queued mail', async () => {
      const account = await stores.accounts.create({ email: 'delete@example.org', passwordHash: null });
      const own = await stores.keys.create({ plan: 'free', accountId: account.id });
      const link = await stores.accounts.issueLink(account.id, 'verify-email');
      const session = await stores.accounts.startSession(account.id, 60_000);
      await stores.accounts.queueMail('verify-email', account.id, account.email);
      const pendingBefore = await stores.outbox.pending();
      expect(await stores.accounts.delete(account.id)).toEqual(account);
      expect(await stores.accounts.byId(account.id)).toBeNull();
      expect((await stores.keys.list()).map((key) => key.id)).not.toContain(own.record.id);
      expect(await stores.keys.check(own.key)).toMatchObject({ ok: false, reason: 'unknown' });
      expect(await stores.accounts.consumeLink(link.token, 'verify-email')).toBeNull();
      expect(await stores.accounts.sessionAccount(session)).toBeNull();
      expect(await stores.outbox.pending()).toBe(pendingBefore - 1);
      await expect(stores.accounts.delete(account.id)).rejects.toMatchObject({ code: 'not_found' });
      // The address is free again.
      expect((await stores.accounts.create({ email: 'delete@example.org', passwordHash: null })).id).not.toBe(account.id);
    });

    it('refuses the keys of an account deleted, disabled or moved to another plan at once in this process, though checked keys are kept', async () => {
      // The stores as a server opens them: checked keys kept in memory (SQLite looks for changes once a second).
      const served = await openStore(stores.target, { now });
      try {
        const plans = loadPlanTable();
        const [gone, off, moved] = await Promise.all(['kept-gone', 'kept-off', 'kept-moved'].map((name) => served.accounts.create({ email: `${name}@example.org`, passwordHash: null })));
        const [goneKey, offKey, movedKey] = await Promise.all([gone!, off!, moved!].map((account) => served.keys.create({ plan: 'free', accountId: account.id })));
        for (const key of [goneKey!, offKey!, movedKey!]) expect(await served.keys.check(key.key)).toMatchObject({ ok: true });
        await served.accounts.delete(gone!.id);
        expect(await served.keys.check(goneKey!.key)).toMatchObject({ ok: false, reason: 'unknown' });
        await served.accounts.disable(off!.id);
        expect(await served.keys.check(offKey!.key)).toMatchObject({ ok: false, reason: 'revoked' });
        await served.accounts.setPlan(moved!.id, 'pro', plans);
        expect(await served.keys.check(movedKey!.key)).toMatchObject({ ok: true, record: { plan: 'pro' } });
      } finally {
        await served.close();
      }
    });

    it('deletes an account whole or not at all: a failure at its last step leaves its keys, sessions and links', async () => {
      const account = await stores.accounts.create({ email: 'atomic@example.org', passwordHash: null });
      const own = await stores.keys.create({ plan: 'free', accountId: account.id });
      const session = (await stores.accounts.startSession(account.id, 60_000))!;
      const link = await stores.accounts.issueLink(account.id, 'verify-email');
      await stores.exec({
        sqlite: "CREATE TRIGGER full_disk BEFORE DELETE ON accounts WHEN OLD.email = 'atomic@example.org' BEGIN SELECT RAISE(ABORT, 'the disk is full'); END",
        postgres: `CREATE FUNCTION full_disk() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF OLD.email = 'atomic@example.org' THEN RAISE EXCEPTION 'the disk is full'; END IF; RETURN OLD; END $$;
                   CREATE TRIGGER full_disk BEFORE DELETE ON accounts FOR EACH ROW EXECUTE FUNCTION full_disk()`,
      });
      try {
        await expect(stores.accounts.delete(account.id)).rejects.toThrow(/the disk is full/);
        expect(await stores.accounts.byId(account.id)).toEqual(account);
        expect(await stores.keys.check(own.key)).toMatchObject({ ok: true });
        expect(await stores.accounts.sessionAccount(session)).toEqual(account);
        expect(await stores.accounts.linkHolder(link.token, 'verify-email')).toEqual(account);
      } finally {
        await stores.exec({ sqlite: 'DROP TRIGGER full_disk', postgres: 'DROP TRIGGER full_disk ON accounts; DROP FUNCTION full_disk()' });
      }
      expect(await stores.accounts.delete(account.id)).toEqual(account);
    });

    it('lets exactly one of two consumers at once use a link, and none use an expired one or another purpose; shows its holder until then', async () => {
      const account = await stores.accounts.create({ email: 'links@example.org', passwordHash: null });
      const link = await stores.accounts.issueLink(account.id, 'reset-password');
      expect(await stores.accounts.consumeLink(link.token, 'verify-email')).toBeNull();
      // Looking at a link does not use it.
      expect(await stores.accounts.linkHolder(link.token, 'reset-password')).toEqual(account);
      expect(await stores.accounts.linkHolder(link.token, 'reset-password')).toEqual(account);
      expect(await stores.accounts.linkHolder(link.token, 'verify-email')).toBeNull();
      const results = await Promise.all([stores.accounts.consumeLink(link.token, 'reset-password'), stores.other.accounts.consumeLink(link.token, 'reset-password')]);
      expect(results.filter((result) => result === account.id)).toHaveLength(1);
      expect(results.filter((result) => result === null)).toHaveLength(1);
      expect(await stores.accounts.consumeLink(link.token, 'reset-password')).toBeNull();
      expect(await stores.accounts.linkHolder(link.token, 'reset-password')).toBeNull();

      const verify = await stores.accounts.issueLink(account.id, 'verify-email');
      clockMs = verify.expiresAt.getTime();
      expect(await stores.accounts.linkHolder(verify.token, 'verify-email')).toBeNull();
      expect(await stores.accounts.consumeLink(verify.token, 'verify-email')).toBeNull();
      clockMs -= 1;
      expect(await stores.accounts.consumeLink(verify.token, 'verify-email')).toBe(account.id);
      expect(await stores.accounts.consumeLink('not-a-token', 'verify-email')).toBeNull();
    });

    it('keeps only the newest link of each purpose, and none once the password changes', async () => {
      const account = await stores.accounts.create({ email: 'newest@example.org', passwordHash: null });
      const first = await stores.accounts.issueLink(account.id, 'reset-password');
      const verify = await stores.accounts.issueLink(account.id, 'verify-email');
      const second = await stores.accounts.issueLink(account.id, 'reset-password');
      expect(await stores.accounts.linkHolder(first.token, 'reset-password')).toBeNull();
      expect(await stores.accounts.linkHolder(second.token, 'reset-password')).toEqual(account);
      expect(await stores.accounts.linkHolder(verify.token, 'verify-email')).toEqual(account);
      await stores.accounts.setPasswordHash(account.id, 'scrypt$changed');
      expect(await stores.accounts.consumeLink(second.token, 'reset-password')).toBeNull();
      expect(await stores.accounts.consumeLink(verify.token, 'verify-email')).toBeNull();
    });

    it('keeps sessions on the server: ended one by one, all at once, or all but one; gone when expired or disabled', async () => {
      const account = await stores.accounts.create({ email: 'sessions@example.org', passwordHash: null });
      const [a, b, c] = await Promise.all([1, 2, 3].map(() => stores.accounts.startSession(account.id, 3_600_000)));
      expect(await stores.accounts.sessionCount(account.id)).toBe(3);
      expect(await stores.other.accounts.sessionAccount(a!)).toEqual(account);
      await stores.accounts.endSession(a!);
      expect(await stores.other.accounts.sessionAccount(a!)).toBeNull();
      expect(await stores.accounts.endSessions(account.id, b!)).toBe(1);
      expect(await stores.accounts.sessionAccount(c!)).toBeNull();
      expect(await stores.accounts.sessionAccount(b!)).toEqual(account);
      clockMs += 3_600_000;
      expect(await stores.accounts.sessionAccount(b!)).toBeNull();
      expect(await stores.accounts.sessionCount(account.id)).toBe(0);
      const d = await stores.accounts.startSession(account.id, 3_600_000);
      await stores.accounts.disable(account.id);
      expect(await stores.accounts.sessionAccount(d)).toBeNull();
      expect(await stores.accounts.sessionAccount('no such session')).toBeNull();
    });

    it('starts a session checked against a password only while that is still the password', async () => {
      const account = await stores.accounts.create({ email: 'while-password@example.org', passwordHash: 'scrypt$old' });
      const kept = await stores.accounts.startSession(account.id, 3_600_000, 'scrypt$old');
      expect(await stores.other.accounts.sessionAccount(kept!)).toEqual(account);
      await stores.accounts.setPasswordHash(account.id, 'scrypt$new');
      expect(await stores.accounts.startSession(account.id, 3_600_000, 'scrypt$old')).toBeNull();
      expect(await stores.accounts.sessionCount(account.id)).toBe(1);
      expect(await stores.accounts.startSession(account.id, 3_600_000, 'scrypt$new')).toEqual(expect.any(String));
    });

    it('leaves no session checked against the old password once a change that ends sessions has run, however the two interleave', async () => {
      for (let round = 0; round < 50; round++) {
        const account = await stores.accounts.create({ email: `race-${round}@example.org`, passwordHash: 'scrypt$old' });
        const owner = (await stores.accounts.startSession(account.id, 3_600_000, 'scrypt$old'))!;
        // Sign-ins from a second server, checked against the old password, racing the owner's change on the first.
        const signIns = Array.from({ length: 6 }, () => stores.other.accounts.startSession(account.id, 3_600_000, 'scrypt$old'));
        const change = stores.accounts.atomically(async (tx) => {
          await tx.setPasswordHash(account.id, 'scrypt$new');
          return tx.endSessions(account.id, owner);
        });
        const started = await Promise.all(signIns);
        await change;
        for (const session of started) if (session !== null) expect(await stores.accounts.sessionAccount(session)).toBeNull();
        expect(await stores.accounts.sessionCount(account.id)).toBe(1);
      }
    });

    it("changes the holder's password only while it is still the one checked and the holder's session lives", async () => {
      const account = await stores.accounts.create({ email: 'holder-change@example.org', passwordHash: 'scrypt$old' });
      const holder = (await stores.accounts.startSession(account.id, 3_600_000))!;
      const other = (await stores.accounts.startSession(account.id, 3_600_000))!;
      const { token } = await stores.accounts.issueLink(account.id, 'reset-password');
      // Checked against a password that is not the stored one: nothing changes.
      expect(await stores.accounts.changePassword(account.id, { keep: holder, whilePasswordIs: 'scrypt$stale', hash: 'scrypt$mine' })).toBeNull();
      expect(await stores.accounts.passwordHash(account.id)).toBe('scrypt$old');
      expect(await stores.accounts.sessionCount(account.id)).toBe(2);
      expect(await stores.accounts.linkHolder(token, 'reset-password')).not.toBeNull();
      // From a session that has ended: nothing changes.
      await stores.accounts.endSession(other);
      expect(await stores.accounts.changePassword(account.id, { keep: other, whilePasswordIs: 'scrypt$old', hash: 'scrypt$mine' })).toBeNull();
      expect(await stores.accounts.passwordHash(account.id)).toBe('scrypt$old');
      // The holder's change: the other sessions and the unused links end, the holder's session stays.
      const third = (await stores.accounts.startSession(account.id, 3_600_000))!;
      expect(await stores.accounts.changePassword(account.id, { keep: holder, whilePasswordIs: 'scrypt$old', hash: 'scrypt$mine' })).toBe(1);
      expect(await stores.accounts.passwordHash(account.id)).toBe('scrypt$mine');
      expect(await stores.accounts.sessionAccount(third)).toBeNull();
      expect(await stores.accounts.sessionAccount(holder)).toMatchObject({ id: account.id });
      expect(await stores.accounts.linkHolder(token, 'reset-password')).toBeNull();
    });

    it("never lets a holder's change checked against the old password undo a reset or another change, however they interleave", async () => {
      for (let round = 0; round < 30; round++) {
        const account = await stores.accounts.create({ email: `change-race-${round}@example.org`, passwordHash: 'scrypt$old' });
        const thief = (await stores.accounts.startSession(account.id, 3_600_000))!;
        const holder = (await stores.accounts.startSession(account.id, 3_600_000))!;
        // The owner's reset on one server, a stolen session's change and the holder's change on the other, all checked against the old password.
        const reset = stores.accounts.atomically(async (tx) => {
          await tx.setPasswordHash(account.id, 'scrypt$reset');
          return tx.endSessions(account.id);
        });
        const changes = [
          stores.other.accounts.changePassword(account.id, { keep: thief, whilePasswordIs: 'scrypt$old', hash: 'scrypt$thief' }),
          stores.other.accounts.changePassword(account.id, { keep: holder, whilePasswordIs: 'scrypt$old', hash: 'scrypt$holder' }),
        ];
        const [, thiefs, holders] = await Promise.all([reset, ...changes]);
        // At most one change went through, and only before the reset, which then replaced it and ended every session.
        expect([thiefs, holders].filter((ended) => ended !== null).length).toBeLessThanOrEqual(1);
        expect(await stores.accounts.passwordHash(account.id)).toBe('scrypt$reset');
        expect(await stores.accounts.sessionCount(account.id)).toBe(0);
      }
    });

    it("makes no holder's change whose account was disabled (its sessions ended) while the change waited", async () => {
      const account = await stores.accounts.create({ email: 'disabled-race@example.org', passwordHash: 'scrypt$old' });
      const holder = (await stores.accounts.startSession(account.id, 3_600_000))!;
      if (!stores.target.startsWith('postgres')) {
        // SQLite writes one transaction at a time: disabled first, the change finds no session.
        await stores.accounts.disable(account.id);
        expect(await stores.accounts.changePassword(account.id, { keep: holder, whilePasswordIs: 'scrypt$old', hash: 'scrypt$new' })).toBeNull();
        return;
      }
      // PostgreSQL: a disabling in flight (account row written, sessions deleted, not committed) while the change is asked.
      const raw = new pg.Client({ connectionString: stores.target });
      await raw.connect();
      try {
        await raw.query('BEGIN');
        await raw.query('UPDATE accounts SET disabled_at = now() WHERE id = $1', [account.id]);
        await raw.query('DELETE FROM sessions WHERE account_id = $1', [account.id]);
        const change = stores.other.accounts.changePassword(account.id, { keep: holder, whilePasswordIs: 'scrypt$old', hash: 'scrypt$new' });
        await new Promise((resolve) => setTimeout(resolve, 200));
        await raw.query('COMMIT');
        expect(await change).toBeNull();
        expect(await stores.accounts.passwordHash(account.id)).toBe('scrypt$old');
      } finally {
        await raw.end();
      }
    });

    it("never fails a reset and a holder's change at the same moment (no deadlock): the reset's link or the change loses cleanly", async () => {
      for (let round = 0; round < 20; round++) {
        const account = await stores.accounts.create({ email: `reset-change-${round}@example.org`, passwordHash: 'scrypt$old' });
        const holder = (await stores.accounts.startSession(account.id, 3_600_000))!;
        const { token } = await stores.accounts.issueLink(account.id, 'reset-password');
        const reset = stores.accounts.atomically(async (tx) => {
          const id = await tx.consumeLink(token, 'reset-password');
          if (id === null) return false;
          await tx.setPasswordHash(id, 'scrypt$reset');
          await tx.endSessions(id);
          return true;
        });
        const change = stores.other.accounts.changePassword(account.id, { keep: holder, whilePasswordIs: 'scrypt$old', hash: 'scrypt$changed' });
        const [resetDone, changed] = await Promise.all([reset, change]);
        // Exactly one of them took effect last, and neither failed.
        const stored = await stores.accounts.passwordHash(account.id);
        expect(stored).toBe(resetDone ? 'scrypt$reset' : 'scrypt$changed');
        if (resetDone) expect(await stores.accounts.sessionCount(account.id)).toBe(0);
        else expect(changed).toBe(0);
      }
    });

    it('makes no more keys of an account than it may hold, however many requests on two servers ask at once', async () => {
      const account = await stores.accounts.create({ email: 'key-burst@example.org', passwordHash: null });
      const attempts = Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? stores.keys : stores.other.keys).create({ plan: 'free', accountId: account.id, maxActiveOfAccount: 20 }).then(
          () => 'made',
          (error: unknown) => (error instanceof NetintelError ? error.code : 'other'),
        ),
      );
      const outcomes = await Promise.all(attempts);
      expect(outcomes.filter((outcome) => outcome === 'made')).toHaveLength(20);
      expect(outcomes.filter((outcome) => outcome === 'forbidden')).toHaveLength(20);
      expect((await stores.accounts.keysOf(account.id)).filter((key) => key.revoked_at === null)).toHaveLength(20);
    });

    it('writes an account and its message together or not at all', async () => {
      const pending = await stores.outbox.pending();
      await expect(
        stores.accounts.atomically(async (tx) => {
          const account = await tx.create({ email: 'rollback@example.org', passwordHash: null });
          await tx.queueMail('verify-email', account.id, account.email);
          throw new Error('the request failed half way');
        }),
      ).rejects.toThrow('half way');
      expect(await stores.accounts.byEmail('rollback@example.org')).toBeNull();
      expect(await stores.outbox.pending()).toBe(pending);
    });

    it('hands each queued message to exactly one of two senders at once, and again only after its lease', async () => {
      const account = await stores.accounts.create({ email: 'outbox@example.org', passwordHash: null });
      const before = await stores.outbox.pending();
      const ids: string[] = [];
      for (let index = 0; index < 30; index++) ids.push(await stores.accounts.queueMail('verify-email', account.id, account.email));
      expect(await stores.outbox.pending()).toBe(before + 30);
      const [mine, theirs] = await Promise.all([stores.outbox.claimDue(20, 60_000), stores.other.outbox.claimDue(20, 60_000)]);
      const claimed = [...mine, ...theirs].map((mail) => mail.id);
      expect(new Set(claimed).size).toBe(claimed.length);
      expect(claimed.filter((id) => ids.includes(id)).sort()).toEqual([...ids].sort());
      // Claimed in the order they were queued.
      expect(mine.map((mail) => mail.id)).toEqual([...mine.map((mail) => mail.id)].sort());
      expect(await stores.outbox.claimDue(20, 60_000)).toEqual([]);
      await stores.outbox.markSent(ids[0]!);
      await stores.outbox.markFailed(ids[1]!, 'relay down', new Date(clockMs + 10_000));
      await stores.outbox.markFailed(ids[2]!, 'gave up', null);
      expect(await stores.outbox.pending()).toBe(before + 28);
      // A sender that died holding rows: they are due again once the lease is over.
      clockMs += 60_000;
      const again = await stores.other.outbox.claimDue(100, 60_000);
      expect(again.map((mail) => mail.id).sort()).toEqual(ids.slice(1).filter((id) => id !== ids[2]).sort());
      expect(again.find((mail) => mail.id === ids[1])!.attempts).toBe(2);
      for (const mail of again) await stores.other.outbox.markSent(mail.id);
      expect(await stores.outbox.pending()).toBe(before);
    });
  });
}

describe('a keys database of the previous schema', () => {
  const oldApiKeys = `CREATE TABLE api_keys (id TEXT PRIMARY KEY, key_hash BLOB NOT NULL, plan TEXT NOT NULL, label TEXT, limits TEXT, created_at TEXT NOT NULL, revoked_at TEXT) STRICT;`;

  it('SQLite: an old keys.db opens, migrates once, and its keys still work', async () => {
    const path = sqlitePath();
    // What netintel made before versioning: the table alone, user_version 0.
    const before = await keyStoreAt(path);
    const { key, record } = await before.create({ plan: 'pro', label: 'old' });
    await before.close();
    const raw = new Database(path);
    raw.exec('DROP TABLE IF EXISTS mail_outbox; DROP TABLE IF EXISTS sessions; DROP TABLE IF EXISTS key_usage; DROP TABLE IF EXISTS settings; DROP TABLE IF EXISTS accounts; DROP TABLE IF EXISTS account_links; DROP INDEX IF EXISTS api_keys_account;');
    raw.exec(`CREATE TABLE old_keys AS SELECT id, key_hash, plan, label, limits, created_at, revoked_at FROM api_keys; DROP TABLE api_keys; ${oldApiKeys} INSERT INTO api_keys SELECT * FROM old_keys; DROP TABLE old_keys;`);
    raw.pragma('user_version = 0');
    raw.close();

    const keys = await keyStoreAt(path, { recheckMs: 0 });
    const accounts = await accountStoreAt(path);
    try {
      expect(await keys.check(key)).toEqual({ ok: true, record, accountId: null });
      expect(await keys.list()).toEqual([record]);
      const check = new Database(path, { readonly: true });
      expect(check.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
      expect((check.prepare("SELECT count(*) AS n FROM pragma_table_info('api_keys') WHERE name = 'account_id'").get() as { n: number }).n).toBe(1);
      check.close();
      const account = await accounts.create({ email: 'new@example.org', passwordHash: null });
      expect((await keys.create({ plan: 'free', accountId: account.id })).record.plan).toBe('free');
    } finally {
      await keys.close();
      await accounts.close();
    }
    // Opening again applies nothing (an ALTER TABLE run twice would fail).
    const again = await accountStoreAt(path);
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
    const first = await keyStoreAt(url);
    const made = await first.create({ plan: 'starter' });
    await first.close();
    const keys = await keyStoreAt(url);
    const accounts = await accountStoreAt(url);
    try {
      expect(await keys.check(made.key)).toEqual({ ok: true, record: made.record, accountId: null });
      const account = await accounts.create({ email: 'pg@example.org', passwordHash: null });
      const own = await keys.create({ plan: 'free', accountId: account.id });
      expect(await accounts.keysOf(account.id)).toEqual([own.record]);
      const raw = new pg.Client({ connectionString: url });
      await raw.connect();
      expect((await raw.query('SELECT version FROM schema_migrations ORDER BY version')).rows.map((row) => row.version)).toEqual(MIGRATIONS.map((migration) => migration.version));
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
    const accounts = await accountStoreAt(url);
    const keys = await keyStoreAt(url);
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
