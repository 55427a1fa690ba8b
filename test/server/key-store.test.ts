import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import Database from 'better-sqlite3';
import { API_KEY_PATTERN, apiKeyId, hashApiKey } from '../../src/keys/api-key.js';
import { tempDir } from '../support/cli.js';
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

describe('the SQLite key store', () => {
  const dirs: Array<{ remove(): void }> = [];
  afterEach(() => dirs.splice(0).forEach((dir) => dir.remove()));
  const dbPath = () => {
    const dir = tempDir('netintel-keys-');
    dirs.push(dir);
    return join(dir.path, 'nested', 'keys.db');
  };

  it('makes random keys of 256 secret bits with a public id', async () => {
    const store = await keyStoreAt(':memory:');
    const keys = await Promise.all(Array.from({ length: 50 }, async () => (await store.create({ plan: 'pro' })).key));
    expect(new Set(keys).size).toBe(50);
    for (const key of keys) {
      expect(key).toMatch(API_KEY_PATTERN);
      expect(Buffer.from(key.slice(16), 'base64url')).toHaveLength(32);
    }
    expect(new Set(keys.map((key) => apiKeyId(key))).size).toBe(50);
    await store.close();
  });

  it('stores only the SHA-256 of a key, never the key or its secret', async () => {
    const path = dbPath();
    const store = await keyStoreAt(path);
    const { key, record } = await store.create({ plan: 'starter', label: 'ops' });
    await store.close();
    const db = new Database(path, { readonly: true });
    const row = db.prepare('SELECT * FROM api_keys').get() as Record<string, unknown>;
    db.close();
    expect(row).toMatchObject({ id: record.id, plan: 'starter', label: 'ops', revoked_at: null });
    expect(Buffer.compare(row.key_hash as Buffer, hashApiKey(key))).toBe(0);
    const secret = key.slice(16);
    for (const file of [path, `${path}-wal`]) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(file);
      } catch {
        continue;
      }
      expect(bytes.includes(Buffer.from(secret)), file).toBe(false);
    }
    const again = await keyStoreAt(path);
    expect(JSON.stringify(await again.list())).not.toContain(secret);
    await again.close();
  });

  it('checks a key by its hash in constant time, and tells malformed, unknown and revoked apart', async () => {
    const store = await keyStoreAt(':memory:');
    const { key, record } = await store.create({ plan: 'pro' });
    crypto.compared = 0;
    expect(await store.check(key)).toEqual({ ok: true, record, accountId: null });
    expect(crypto.compared).toBe(1);
    expect(await store.check(`${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`)).toEqual({ ok: false, reason: 'unknown', id: record.id });
    // An unknown id is compared too (against a stand-in), so it costs what a wrong secret does.
    expect(await store.check(`ni_zzzzzzzzzzzz_${key.slice(16)}`)).toEqual({ ok: false, reason: 'unknown', id: 'zzzzzzzzzzzz' });
    expect(crypto.compared).toBe(3);
    expect(await store.check('Bearer abc')).toEqual({ ok: false, reason: 'malformed', id: null });
    expect(await store.check(`${key}x`)).toMatchObject({ reason: 'malformed' });
    await store.revoke(record.id);
    expect(await store.check(key)).toEqual({ ok: false, reason: 'revoked', id: record.id });
    await store.close();
  });

  it('sees a revocation made by another process (connection) within its recheck interval', async () => {
    const path = dbPath();
    const server = await keyStoreAt(path, { recheckMs: 0 });
    const admin = await keyStoreAt(path);
    const { key, record } = await admin.create({ plan: 'pro' });
    expect((await server.check(key)).ok).toBe(true);
    await admin.revoke(record.id);
    expect(await server.check(key)).toMatchObject({ ok: false, reason: 'revoked' });
    await server.close();
    await admin.close();
  });

  it('reads a key once after a write between two looks at the database (usage is written every 2 s), not at every check', async () => {
    const { openSqliteDatabase } = await import('../../src/store/sqlite-database.js');
    const { createKeyStore } = await import('../../src/store/key-store.js');
    const db = await openSqliteDatabase(dbPath());
    let reads = 0;
    const store = createKeyStore({ ...db, one: (sql, params) => ((reads += 1), db.one(sql, params)) });
    const { key, record } = await store.create({ plan: 'pro' });
    expect((await store.check(key)).ok).toBe(true);
    await store.recordUsage([{ keyId: record.id, day: '2026-12-02', count: 1, lastUsedAt: new Date() }]);
    reads = 0;
    // All within the 1 s a look is trusted for: the write moved the mark, which the next look sees.
    for (let round = 0; round < 500; round += 1) {
      const check = store.check(key);
      expect((check instanceof Promise ? await check : check).ok).toBe(true);
    }
    expect(reads).toBe(1);
    await db.close();
  });

  it('keeps an enterprise key\'s own limits, and says not_found for an unknown id', async () => {
    const store = await keyStoreAt(':memory:');
    const { record } = await store.create({ plan: 'enterprise', limits: { daily: 5_000_000, burst: 20_000 } });
    expect(await store.list()).toEqual([record]);
    expect(record.limits).toEqual({ daily: 5_000_000, burst: 20_000 });
    await expect(store.revoke('nosuchid')).rejects.toThrow(expect.objectContaining({ code: 'not_found' }));
    const first = (await store.revoke(record.id)).revoked_at;
    expect((await store.revoke(record.id)).revoked_at).toBe(first);
    await store.close();
  });
});

describe('the key database on disk', () => {
  it('creates keys.db, its -wal and -shm files 0600 and the directories it makes 0700, whatever the umask', async () => {
    const { statSync } = await import('node:fs');
    const dir = tempDir('netintel-keys-mode-');
    const previous = process.umask(0o022);
    try {
      const path = join(dir.path, 'data', 'netintel', 'keys.db');
      const store = await keyStoreAt(path);
      await store.create({ plan: 'pro', label: 'mode' });
      const mode = (file: string) => statSync(file).mode & 0o777;
      expect(mode(path).toString(8)).toBe('600');
      expect(mode(`${path}-wal`).toString(8)).toBe('600');
      expect(mode(`${path}-shm`).toString(8)).toBe('600');
      expect(mode(join(dir.path, 'data', 'netintel')).toString(8)).toBe('700');
      expect(mode(join(dir.path, 'data')).toString(8)).toBe('700');
      await store.close();
      // Opening it again keeps it working and private.
      const again = await keyStoreAt(path);
      expect(await again.list()).toHaveLength(1);
      await again.close();
      expect(mode(path).toString(8)).toBe('600');
    } finally {
      process.umask(previous);
      dir.remove();
    }
  });
});
