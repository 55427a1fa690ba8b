/**
 * Checked keys kept in memory on PostgreSQL, against a real PostgreSQL
 * started for this file: the triggers that announce changes (migration 7),
 * the listening connection that hears them (src/store/postgres-changes.ts)
 * and the key store that drops what it kept when it hears one, or when it
 * can no longer be sure to hear.
 */
import net from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresDatabase } from '../../src/store/postgres-database.js';
import { followKeyChanges, type ChangeFollower } from '../../src/store/postgres-changes.js';
import { createKeyStore } from '../../src/store/key-store.js';
import type { Database } from '../../src/store/database.js';
import { findPostgres, startPostgresServer, type PostgresTestServer } from '../support/postgres.js';

const programs = findPostgres();
if (programs === null) console.warn('SKIPPING the PostgreSQL tests of test/store/postgres-changes.test.ts: initdb/postgres not found on PATH or in /usr/lib/postgresql/*/bin (Debian package postgresql)');

/** Resolves when `test` holds, polling every 10 ms; rejects after `ms`. */
async function until(test: () => boolean, ms = 5000, what = 'the condition'): Promise<number> {
  const start = performance.now();
  while (!test()) {
    if (performance.now() - start > ms) throw new Error(`${what} did not hold within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return performance.now() - start;
}

/**
 * A TCP relay to PostgreSQL that can go quiet: `mute()` keeps both sockets
 * open and drops what the server sends, as a connection cut without a word
 * (or a pooler that accepts LISTEN and never delivers) looks to a client.
 */
async function startRelay(port: number): Promise<{ port: number; mute(): void; close(): void }> {
  let muted = false;
  const sockets = new Set<net.Socket>();
  const relay = net.createServer((inbound) => {
    const outbound = net.connect(port, '127.0.0.1');
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    inbound.on('data', (chunk) => outbound.write(chunk));
    outbound.on('data', (chunk) => muted || inbound.write(chunk));
    inbound.on('close', () => outbound.destroy());
    outbound.on('close', () => inbound.destroy());
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  return {
    port: (relay.address() as net.AddressInfo).port,
    mute: () => {
      muted = true;
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      relay.close();
    },
  };
}

describe.skipIf(programs === null)('key changes heard from PostgreSQL', () => {
  let server: PostgresTestServer;
  let url: string;
  let admin: pg.Client;
  let keyId = 0;

  beforeAll(async () => {
    server = await startPostgresServer(programs!);
    url = await server.createDatabase('changes');
    // The schema, with its triggers, as a server makes it.
    await (await openPostgresDatabase(url)).close();
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
  }, 60_000);
  afterAll(async () => {
    await admin?.end();
    await server?.stop();
  });

  /** A key row written by hand, as an operator's SQL would; its id. */
  const insertKey = async (hash = Buffer.alloc(32)): Promise<string> => {
    const id = `k${String(++keyId).padStart(11, '0')}`;
    await admin.query("INSERT INTO api_keys (id, key_hash, plan, created_at) VALUES ($1, $2, 'pro', now())", [id, hash]);
    return id;
  };

  it('announce every change that can alter a key check, and only those, at commit', async () => {
    const listener = new pg.Client({ connectionString: url });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (message) => heard.push(message.payload ?? ''));
    await listener.query('LISTEN netintel_keys');
    /** The announcements a statement made: those heard before a marker sent after it (one session's notifications arrive in commit order). */
    const announced = async (sql: string, params: unknown[] = []): Promise<string[]> => {
      heard.length = 0;
      await admin.query(sql, params);
      await admin.query("SELECT pg_notify('netintel_keys', 'marker')");
      await until(() => heard.includes('marker'), 2000, 'the marker');
      return heard.slice(0, heard.indexOf('marker'));
    };
    try {
      const id = `k${String(++keyId).padStart(11, '0')}`;
      expect(await announced("INSERT INTO api_keys (id, key_hash, plan, created_at) VALUES ($1, $2, 'pro', now())", [id, Buffer.alloc(32)])).toEqual(['api_keys']);
      expect(await announced('UPDATE api_keys SET last_used_at = now() WHERE id = $1', [id])).toEqual([]);
      expect(await announced("UPDATE api_keys SET label = 'billing' WHERE id = $1", [id])).toEqual([]);
      expect(await announced('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [id])).toEqual(['api_keys']);
      expect(await announced("UPDATE api_keys SET plan = 'starter' WHERE id = $1", [id])).toEqual(['api_keys']);
      expect(await announced("UPDATE api_keys SET limits = '{}' WHERE id = $1", [id])).toEqual(['api_keys']);
      expect(await announced("INSERT INTO accounts (id, email, created_at) VALUES ('acct1', 'a@example.com', now())")).toEqual([]);
      expect(await announced("UPDATE api_keys SET account_id = 'acct1' WHERE id = $1", [id])).toEqual(['api_keys']);
      expect(await announced("UPDATE accounts SET email = 'b@example.com' WHERE id = 'acct1'")).toEqual([]);
      expect(await announced("UPDATE accounts SET disabled_at = now() WHERE id = 'acct1'")).toEqual(['accounts']);
      // Deleting the account deletes its keys (ON DELETE CASCADE): one announcement per table, at commit.
      expect((await announced("DELETE FROM accounts WHERE id = 'acct1'")).sort()).toEqual(['accounts', 'api_keys']);
      // A change rolled back is never announced.
      await admin.query('BEGIN');
      await admin.query('UPDATE api_keys SET revoked_at = now()');
      await admin.query('ROLLBACK');
      expect(await announced('SELECT 1')).toEqual([]);
    } finally {
      await listener.end();
    }
  });

  describe('the follower', () => {
    let pool: pg.Pool;
    const followers: ChangeFollower[] = [];
    const follow = (options = {}, at = url): ChangeFollower => {
      const follower = followKeyChanges(pg, at, pool, options);
      followers.push(follower);
      return follower;
    };
    beforeAll(() => {
      pool = new pg.Pool({ connectionString: url, max: 2 });
    });
    afterAll(async () => {
      for (const follower of followers) await follower.close();
      await pool.end();
    });

    it('has no mark until its probe came back, then moves at a change', async () => {
      const follower = follow();
      expect(follower.mark()).toBeNull();
      await until(() => follower.mark() !== null, 5000, 'listening');
      const mark = follower.mark();
      const id = await insertKey();
      await until(() => follower.mark() !== mark, 2000, 'the new key heard');
      const next = follower.mark();
      await admin.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [id]);
      await until(() => follower.mark() !== next, 2000, 'the revocation heard');
    });

    it('loses its mark when its connection is ended, and listens again with a new one', async () => {
      const follower = follow({ retryMs: 50 });
      await until(() => follower.mark() !== null, 5000, 'listening');
      const before = follower.mark();
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'netintel (key changes)'");
      await until(() => follower.mark() === null, 2000, 'the loss noticed');
      await until(() => follower.mark() !== null, 5000, 'listening again');
      expect(follower.mark()).not.toBe(before);
    });

    it('loses its mark when its probe does not come back: a connection that went quiet without a word', async () => {
      const relay = await startRelay(server.port);
      try {
        const quiet = follow({ probeEveryMs: 50, patienceMs: 300, retryMs: 60_000 }, url.replace(`:${server.port}/`, `:${relay.port}/`));
        await until(() => quiet.mark() !== null, 5000, 'listening through the relay');
        relay.mute();
        const noticed = await until(() => quiet.mark() === null, 3000, 'the silence noticed');
        expect(noticed).toBeLessThan(1500);
      } finally {
        relay.close();
      }
    });

    it('never has a mark where notifications do not arrive', async () => {
      // The probes go to another database, as through a pooler that hands LISTEN and NOTIFY different sessions.
      const elsewhere = new pg.Pool({ connectionString: await server.createDatabase('elsewhere'), max: 1 });
      try {
        const deaf = followKeyChanges(pg, url, elsewhere, { probeEveryMs: 50, patienceMs: 200, retryMs: 50 });
        followers.push(deaf);
        const seen: Array<string | null> = [];
        const start = performance.now();
        while (performance.now() - start < 1500) {
          seen.push(deaf.mark());
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(new Set(seen)).toEqual(new Set([null]));
        await deaf.close();
      } finally {
        await elsewhere.end();
      }
    });
  });

  describe('the key store', () => {
    let db: Database;
    let queries = 0;
    /** The database, counting the queries that read a key, and running `during` (once) while one is read. */
    let during: (() => Promise<void>) | null = null;
    let store: ReturnType<typeof createKeyStore>;

    beforeAll(async () => {
      db = await openPostgresDatabase(url);
      const counted: Database = {
        ...db,
        one: async (sql, params) => {
          queries += 1;
          const row = await db.one(sql, params);
          const work = during;
          during = null;
          if (work) await work();
          return row as never;
        },
      };
      store = createKeyStore(counted);
      // The first check starts following; keys are kept once the probe came back.
      store.check('ni_aaaaaaaaaaaa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
      await until(() => db.changeMark() !== null, 5000, 'listening');
    });
    afterAll(async () => {
      await db?.close();
    });

    it('reads a key once while nothing changes, for a burst of checks too, and refuses it once revoked by hand elsewhere', async () => {
      const made = db.changeMark();
      const { record, key } = await store.create({ plan: 'pro' });
      await until(() => db.changeMark() !== made, 2000, 'the new key heard');
      queries = 0;
      const burst = () => Promise.all(Array.from({ length: 200 }, () => store.check(key)));
      // The first burst reads the key once, and the next ones not at all.
      for (let round = 0; round < 3; round += 1) {
        expect((await burst()).every((check) => check.ok)).toBe(true);
        expect(queries).toBe(1);
      }

      const mark = db.changeMark();
      await admin.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [record.id]);
      const heard = await until(() => db.changeMark() !== mark, 2000, 'the revocation heard');
      expect(heard).toBeLessThan(1000);
      queries = 0;
      expect(await store.check(key)).toEqual({ ok: false, reason: 'revoked', id: record.id });
      expect(queries).toBe(1);
    });

    it('does not keep a row read while a change was announced: the next check reads again', async () => {
      const { record, key } = await store.create({ plan: 'pro' });
      // The row is read before the revocation commits and handed back after it is heard.
      during = async () => {
        const mark = db.changeMark();
        await admin.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [record.id]);
        await until(() => db.changeMark() !== mark, 2000, 'the revocation heard');
      };
      expect(await store.check(key)).toMatchObject({ ok: true });
      expect(await store.check(key)).toEqual({ ok: false, reason: 'revoked', id: record.id });
    });

    it('reads at every check while the listening connection is down, so a revocation is never missed', async () => {
      const { record, key } = await store.create({ plan: 'pro' });
      expect(await store.check(key)).toMatchObject({ ok: true });
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'netintel (key changes)'");
      await until(() => db.changeMark() === null, 2000, 'the loss noticed');
      // Revoked while nobody listens: no notification will ever say so.
      await admin.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [record.id]);
      queries = 0;
      expect(await store.check(key)).toEqual({ ok: false, reason: 'revoked', id: record.id });
      expect(queries).toBe(1);
      await until(() => db.changeMark() !== null, 5000, 'listening again');
    });
  });
});
