import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../support/cli.js';
import { keyStoreAt } from '../support/stores.js';

describe('netintel keys', () => {
  const dir = tempDir('netintel-keys-cmd-');
  afterAll(() => dir.remove());
  const db = join(dir.path, 'keys.db');

  it('creates a key, prints it once with a warning on stderr, and stores only its hash', async () => {
    const result = await runCli(['keys', 'create', '--plan', 'pro', '--label', 'billing', '--db', db, '-f', 'json']);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/only time the key is shown/);
    const created = JSON.parse(result.stdout);
    expect(created).toMatchObject({ kind: 'api-key', plan: 'pro', label: 'billing', limits: null, revoked_at: null });
    expect(created.key).toMatch(/^ni_[a-z2-7]{12}_[A-Za-z0-9_-]{43}$/);
    expect(created.key.slice(3, 15)).toBe(created.id);
    const store = await keyStoreAt(db);
    expect(await store.check(created.key)).toMatchObject({ ok: true, record: { id: created.id, plan: 'pro' } });
    await store.close();
  });

  it('lists keys without the keys themselves, and revokes by id', async () => {
    const made = JSON.parse((await runCli(['keys', 'create', '--plan', 'starter', '--db', db, '-f', 'json'])).stdout);
    const list = await runCli(['keys', 'list', '--db', db, '-f', 'json']);
    const records = JSON.parse(list.stdout);
    expect(records.map((record: { plan: string }) => record.plan)).toEqual(['pro', 'starter']);
    expect(list.stdout).not.toContain(made.key.slice(16));
    expect(records[1]).not.toHaveProperty('key');
    const revoked = await runCli(['keys', 'revoke', made.id, '--db', db, '-f', 'json']);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ id: made.id, revoked_at: expect.any(String) });
    const table = await runCli(['keys', 'list', '--db', db]);
    expect(table.stdout).toContain(made.id);
    const store = await keyStoreAt(db);
    expect(await store.check(made.key)).toMatchObject({ ok: false, reason: 'revoked' });
    await store.close();
  });

  it('refuses an unknown plan, an unknown id, and custom limits on a non-enterprise plan', async () => {
    const plan = await runCli(['keys', 'create', '--plan', 'gold', '--db', db]);
    expect(plan.code).toBe(2);
    expect(plan.stderr).toMatch(/plan "gold" is not in the plans file .* \(known: free, free-account, starter, pro, enterprise\)/);
    const missing = await runCli(['keys', 'revoke', 'aaaaaaaaaaaa', '--db', db]);
    expect(missing.code).toBe(3);
    const custom = await runCli(['keys', 'create', '--plan', 'pro', '--daily', '5', '--db', db]);
    expect(custom.code).toBe(2);
  });

  it('makes a key of the plan of new accounts without --plan, and refuses the plan of requests without a key', async () => {
    const made = await runCli(['keys', 'create', '--label', 'laptop', '--db', db, '-f', 'json']);
    expect(made.code).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({ plan: 'free-account', label: 'laptop' });
    const keyless = await runCli(['keys', 'create', '--plan', 'free', '--db', db, '-f', 'json']);
    expect(keyless).toMatchObject({ code: 2, stderr: 'netintel: plan "free" is the plan of requests without a key and cannot be given to a key: use one of free-account, starter, pro, enterprise\n' });
  });

  it('gives an enterprise key its own limits, checked against the plans', async () => {
    const ok = await runCli(['keys', 'create', '--plan', 'enterprise', '--daily', '5000000', '--per-minute', '20000', '--burst', '40000', '--db', db, '-f', 'json']);
    expect(JSON.parse(ok.stdout).limits).toEqual({ daily: 5_000_000, per_minute: 20_000, burst: 40_000 });
    const unfit = await runCli(['keys', 'create', '--plan', 'enterprise', '--burst', '10', '--db', db]);
    expect(unfit.code).toBe(2);
    expect(unfit.stderr).toMatch(/"batch" \(50\) must not exceed "burst" \(10\)/);
  });

  it('finds the database through NETINTEL_DB, else in the XDG data dir', async () => {
    const viaEnv = join(dir.path, 'env.db');
    expect((await runCli(['keys', 'create'], { env: { NETINTEL_DB: viaEnv } })).code).toBe(0);
    expect(await (await keyStoreAt(viaEnv)).list()).toHaveLength(1);
    const xdg = join(dir.path, 'xdg');
    expect((await runCli(['keys', 'create'], { env: { XDG_DATA_HOME: xdg } })).code).toBe(0);
    expect(await (await keyStoreAt(join(xdg, 'netintel', 'keys.db'))).list()).toHaveLength(1);
  });
});
