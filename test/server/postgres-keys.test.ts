/**
 * Keys in PostgreSQL, against a real PostgreSQL started for this file
 * (test/support/postgres.ts): migrations, the store, `netintel keys` and
 * two `netintel serve` processes sharing one database.
 */
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { migratePostgres as migrate } from '../../src/store/postgres-database.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { isPostgresUrl, postgresEndpoint, redactPostgresUrl } from '../../src/store/postgres-url.js';
import { runCli, spawnCli } from '../support/cli.js';
import { freePort } from '../support/peers.js';
import { findPostgres, startPostgresServer, type PostgresTestServer } from '../support/postgres.js';
import { serve, type Served } from '../support/served.js';
import { startTestServer } from './harness.js';
import { keyStoreAt } from '../support/stores.js';

const crypto = vi.hoisted(() => ({ compared: 0 }));
vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>();
  return {
    ...real,
    timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      crypto.compared += 1;
      return real.timingSafeEqual(a, b);
    },
  };
});

const programs = findPostgres();
if (programs === null) console.warn('SKIPPING the PostgreSQL tests of test/server/postgres-keys.test.ts: initdb/postgres not found on PATH or in /usr/lib/postgresql/*/bin (Debian package postgresql)');

describe('PostgreSQL URLs (--db)', () => {
  it('are told from SQLite paths by their scheme', () => {
    for (const url of ['postgres://u:p@h:5432/db', 'postgresql://h/db', 'POSTGRES://h/db']) expect(isPostgresUrl(url)).toBe(true);
    for (const path of ['keys.db', '/var/lib/netintel/keys.db', 'postgres', './postgres://x', 'file:keys.db', ':memory:']) expect(isPostgresUrl(path)).toBe(false);
  });

  it('never show the password: not in the redacted form, not in host:port', () => {
    const part = fc.stringMatching(/^[A-Za-z0-9._~-]{1,12}$/);
    fc.assert(
      fc.property(part, fc.stringMatching(/^[A-Za-z0-9]{6,20}$/), part, fc.integer({ min: 1, max: 65535 }), part, fc.boolean(), (user, secret, host, port, db, asParameter) => {
        const password = `PW${secret}`;
        const url = asParameter ? `postgresql://${user}@${host}:${port}/${db}?password=${password}&sslmode=disable` : `postgres://${user}:${password}@${host}:${port}/${db}`;
        expect(redactPostgresUrl(url)).not.toContain(password);
        expect(postgresEndpoint(url)).toBe(`${host}:${port}`);
      }),
    );
    expect(redactPostgresUrl('postgres://app:s3cret@db.internal:6432/netintel')).toBe('postgres://app:***@db.internal:6432/netintel');
    expect(redactPostgresUrl('postgresql://app@db.internal/netintel?sslmode=require&password=s3cret')).toBe('postgresql://app@db.internal/netintel?sslmode=require&password=***');
    expect(postgresEndpoint('postgres:///netintel?host=/run/postgresql')).toBe('/run/postgresql:5432');
  });

  it('refuse a URL that cannot be read with exit 2, in one line without the password', async () => {
    const result = await runCli(['keys', 'list', '--db', 'postgres://app:Secr3t-pw@db.internal:99999/netintel']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('netintel: postgres://app:***@db.internal:99999/netintel is not a valid PostgreSQL URL (check --db: postgres://user:password@host:port/database)\n');
  });
});

describe.skipIf(programs === null)('keys in PostgreSQL', () => {
  let server: PostgresTestServer;

  beforeAll(async () => {
    server = await startPostgresServer(programs!);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('applies each migration once, also when two servers start at once', async () => {
    const url = await server.createDatabase('migrations_race');
    const pools = [new pg.Pool({ connectionString: url }), new pg.Pool({ connectionString: url })];
    try {
      const clients = await Promise.all(pools.map((pool) => pool.connect()));
      const applied = await Promise.all(clients.map((client) => migrate(client)));
      const versions = MIGRATIONS.map((migration) => migration.version);
      // One of them applied every migration, the other found them applied.
      expect(applied.flat().sort()).toEqual(versions);
      expect(applied.some((list) => list.length === 0)).toBe(true);
      expect(await migrate(clients[0]!)).toEqual([]);
      const rows = (await clients[0]!.query('SELECT version, applied_at FROM schema_migrations ORDER BY version')).rows;
      expect(rows.map((row) => row.version)).toEqual(versions);
      expect(rows[0].applied_at).toBeInstanceOf(Date);
      const columns = (await clients[0]!.query("SELECT column_name FROM information_schema.columns WHERE table_name = 'api_keys' ORDER BY ordinal_position")).rows;
      expect(columns.map((row) => row.column_name)).toEqual(['id', 'key_hash', 'plan', 'label', 'limits', 'created_at', 'revoked_at', 'account_id', 'last_used_at']);
      for (const client of clients) client.release();
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });

  it('makes, lists, checks (in constant time) and revokes keys as the SQLite store does, storing only the hash', async () => {
    const url = await server.createDatabase('store');
    const store = await keyStoreAt(url, { now: () => new Date('2030-01-01T10:00:00.123Z') });
    try {
      const { key, record } = await store.create({ plan: 'enterprise', label: 'ops', limits: { daily: 5_000_000, burst: 20_000 } });
      expect(record).toEqual({
        kind: 'api-key',
        id: key.slice(3, 15),
        plan: 'enterprise',
        label: 'ops',
        limits: { daily: 5_000_000, burst: 20_000 },
        created_at: '2030-01-01T10:00:00.123Z',
        revoked_at: null,
        last_used_at: null,
      });
      expect(await store.list()).toEqual([record]);
      crypto.compared = 0;
      expect(await store.check(key)).toEqual({ ok: true, record, accountId: null });
      expect(await store.check(`${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`)).toEqual({ ok: false, reason: 'unknown', id: record.id });
      expect(await store.check(`ni_zzzzzzzzzzzz_${key.slice(16)}`)).toEqual({ ok: false, reason: 'unknown', id: 'zzzzzzzzzzzz' });
      expect(crypto.compared).toBe(3);
      expect(await store.check('Bearer abc')).toEqual({ ok: false, reason: 'malformed', id: null });
      await expect(store.revoke('nosuchid')).rejects.toMatchObject({ code: 'not_found' });
      const first = (await store.revoke(record.id)).revoked_at;
      expect(first).toBe('2030-01-01T10:00:00.123Z');
      expect((await store.revoke(record.id)).revoked_at).toBe(first);
      expect(await store.check(key)).toEqual({ ok: false, reason: 'revoked', id: record.id });

      const raw = new pg.Client({ connectionString: url });
      await raw.connect();
      const dump = JSON.stringify((await raw.query('SELECT * FROM api_keys')).rows);
      await raw.end();
      expect(dump).not.toContain(key.slice(16));
      expect(store.location).toBe(url.replace(`:${server.password}@`, ':***@'));
    } finally {
      await store.close();
    }
  });

  describe('through the built CLI', () => {
    let url: string;
    let servers: Served[] = [];

    beforeAll(async () => {
      url = await server.createDatabase('cli');
      servers = await Promise.all([serve(['--db', url]), serve([], { NETINTEL_DB: url })]);
    }, 60_000);
    afterAll(() => {
      for (const served of servers) if (served.child.exitCode === null) served.child.kill('SIGKILL');
    });

    it('creates, lists and revokes keys with `netintel keys --db postgres://...`', async () => {
      const created = await spawnCli(['keys', 'create', '--plan', 'pro', '--label', 'billing', '--db', url, '-f', 'json']);
      expect(created.code).toBe(0);
      expect(created.stderr).toMatch(/only time the key is shown/);
      const made = JSON.parse(created.stdout);
      expect(made).toMatchObject({ kind: 'api-key', plan: 'pro', label: 'billing', limits: null, revoked_at: null });
      const list = await spawnCli(['keys', 'list', '-f', 'json'], { env: { NETINTEL_DB: url } });
      expect(list.code).toBe(0);
      expect(JSON.parse(list.stdout)).toContainEqual({ kind: 'api-key', id: made.id, plan: 'pro', label: 'billing', limits: null, created_at: made.created_at, revoked_at: null, last_used_at: null });
      expect(list.stdout).not.toContain(made.key.slice(16));
      const revoked = await spawnCli(['keys', 'revoke', made.id, '--db', url, '-f', 'json']);
      expect(revoked.code).toBe(0);
      expect(JSON.parse(revoked.stdout)).toMatchObject({ id: made.id, revoked_at: expect.any(String) });
      const missing = await spawnCli(['keys', 'revoke', 'aaaaaaaaaaaa', '--db', url]);
      expect(missing.code).toBe(3);
      expect(missing.stderr).toBe('netintel: no API key has the id "aaaaaaaaaaaa"\n');
    });

    it('shares keys between two servers: a key made by `keys create` works on both, and is refused by both at once after `keys revoke`', async () => {
      const made = JSON.parse((await spawnCli(['keys', 'create', '--plan', 'pro', '--db', url, '-f', 'json'])).stdout);
      const ask = (served: Served) => fetch(`${served.url}/api/ipinfo?ip=8.8.8.8`, { headers: { 'x-api-key': made.key } });
      for (const served of servers) {
        const response = await ask(served);
        expect(response.status).toBe(200);
        expect((await response.json()).network.asn).toBe(15169);
      }
      expect((await spawnCli(['keys', 'revoke', made.id, '--db', url])).code).toBe(0);
      const revokedAt = Date.now();
      for (const served of servers) {
        const response = await ask(served);
        expect(response.status).toBe(401);
        expect((await response.json()).details).toEqual({ reason: 'revoked', key_id: made.id });
      }
      expect(Date.now() - revokedAt).toBeLessThan(1000);
      // The log names the key database without its password.
      for (const served of servers) {
        const listening = served.stderr().split('\n').find((line) => line.includes('"msg":"listening"'))!;
        expect(JSON.parse(listening).keys).toBe(url.replace(`:${server.password}@`, ':***@'));
        expect(served.stderr()).not.toContain(server.password);
      }
    });

    it('refuses on both servers, within a second, a key they had checked and that SQL typed by hand revoked', async () => {
      const made = JSON.parse((await spawnCli(['keys', 'create', '--plan', 'pro', '--db', url, '-f', 'json'])).stdout);
      const ask = (served: Served) => fetch(`${served.url}/api/ipinfo?ip=8.8.8.8`, { headers: { 'x-api-key': made.key } });
      // Checked a few times on each: kept in memory from then on.
      for (const served of servers) for (let round = 0; round < 3; round += 1) expect((await ask(served)).status).toBe(200);
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        await admin.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [made.id]);
      } finally {
        await admin.end();
      }
      const revokedAt = Date.now();
      for (const served of servers) {
        let status = 200;
        while (status === 200 && Date.now() - revokedAt < 1000) status = (await ask(served)).status;
        expect(status).toBe(401);
      }
    });

    it('says in one line, with exit 6 and no password, that a wrong password or a closed port cannot be connected to', async () => {
      const wrong = server.url('cli', 'Wr0ng-Passw0rd');
      for (const argv of [['keys', 'list', '--db', wrong], ['serve', '--port', '0', '--db', wrong]]) {
        const result = await spawnCli(argv);
        expect(result.code, result.stderr).toBe(6);
        expect(result.stderr).toBe(`netintel: cannot connect to PostgreSQL at 127.0.0.1:${server.port}: password authentication failed for user "postgres" (check --db)\n`);
        expect(result.stdout).toBe('');
      }
      const closed = `postgresql://netintel:Cl0sed-Passw0rd@127.0.0.1:${await freePort()}/netintel`;
      for (const argv of [['keys', 'create', '--plan', 'pro', '--db', closed, '-f', 'json'], ['serve', '--port', '0']]) {
        const result = await spawnCli(argv, { env: { NETINTEL_DB: closed } });
        expect(result.code, result.stderr).toBe(6);
        expect(result.stderr).toMatch(/^netintel: cannot connect to PostgreSQL at 127\.0\.0\.1:\d+: connect ECONNREFUSED 127\.0\.0\.1:\d+ \(check --db\)\n$/);
        expect(result.stdout + result.stderr).not.toContain('Cl0sed-Passw0rd');
      }
      const json = await spawnCli(['keys', 'list', '--db', closed, '-f', 'json']);
      expect(JSON.parse(json.stdout).error).toMatchObject({ code: 'data_unavailable', details: { db: closed.replace(':Cl0sed-Passw0rd@', ':***@') } });
    });
  });

  // Last: it stops PostgreSQL.
  it('answers a keyed request 503 (data_unavailable) while PostgreSQL is down, and keeps serving callers without a key', async () => {
    const url = await server.createDatabase('outage');
    const keys = await keyStoreAt(url);
    const lines: string[] = [];
    const api = await startTestServer({ keys, logger: { level: 'error', stream: { write: (line: string) => lines.push(line) } } });
    try {
      const key = await api.key('pro');
      const ask = (headers: Record<string, string>) => api.app.inject({ url: '/api/ipinfo?ip=8.8.8.8', headers });
      expect((await ask({ 'x-api-key': key })).statusCode).toBe(200);
      await server.stop();
      const down = await ask({ 'x-api-key': key });
      expect(down.statusCode).toBe(503);
      expect(down.json()).toMatchObject({ code: 'data_unavailable', detail: 'the API key could not be checked: the key database is unavailable; retry later' });
      expect(down.body).not.toContain('127.0.0.1');
      expect(lines.join('\n')).toMatch(/"msg":"the API key could not be checked"/);
      expect(lines.join('\n')).toMatch(/cannot query PostgreSQL at 127\.0\.0\.1:\d+: .* \(check --db\)/);
      expect(lines.join('\n')).not.toContain(server.password);
      expect((await ask({})).statusCode).toBe(200);
    } finally {
      await api.close();
    }
  });
});
