/**
 * `netintel accounts` as built (dist/; `npm run build` first), against a
 * SQLite key database prepared through the stores.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnCli, tempDir } from '../support/cli.js';
import { serve } from '../support/served.js';
import { accountStoreAt, keyStoreAt } from '../support/stores.js';

describe('netintel accounts', { timeout: 30_000 }, () => {
  const dir = tempDir('netintel-accounts-cmd-');
  afterAll(() => dir.remove());
  const db = join(dir.path, 'keys.db');
  let ada: { id: string; key: string };

  beforeAll(async () => {
    // A clock a second apart per account, so that the list order (by creation) is known.
    let second = 0;
    const accounts = await accountStoreAt(db, { now: () => new Date(Date.UTC(2030, 0, 1, 0, 0, second++)) });
    const keys = await keyStoreAt(db);
    const account = await accounts.create({ email: 'ada@Example.org', passwordHash: 'scrypt$secret-hash' });
    await accounts.create({ email: 'bob@example.net', passwordHash: null });
    const { key } = await keys.create({ plan: 'free', accountId: account.id });
    ada = { id: account.id, key };
    await Promise.all([accounts.close(), keys.close()]);
  });

  it('lists accounts as JSON, CSV and a table, never with a password hash', async () => {
    const json = await spawnCli(['accounts', 'list', '--db', db, '-f', 'json']);
    expect(json.code).toBe(0);
    const records = JSON.parse(json.stdout);
    expect(records.map((record: { email: string }) => record.email)).toEqual(['ada@example.org', 'bob@example.net']);
    expect(records[0]).toMatchObject({ kind: 'account', id: ada.id, plan: 'free', has_password: true, email_verified_at: null, disabled_at: null });
    expect(json.stdout).not.toContain('secret-hash');
    const csv = await spawnCli(['accounts', 'list', '--db', db, '-f', 'csv']);
    expect(csv.stdout.split('\n')[0]).toBe('query,id,email,email_verified_at,plan,has_password,created_at,disabled_at,error.code,error.message');
    expect(csv.stdout).toContain(`${ada.id},${ada.id},ada@example.org,`);
    const table = await spawnCli(['accounts', 'list', '--db', db, '-f', 'table'], { env: { COLUMNS: '120' } });
    expect(table.code).toBe(0);
    expect(table.stdout).toContain('bob@example.net');
  });

  it('shows one account by id or by e-mail (domain in any case), and fails with exit 3 for an unknown one', async () => {
    for (const target of [ada.id, 'ada@EXAMPLE.ORG']) {
      const shown = await spawnCli(['accounts', 'show', target, '--db', db, '-f', 'json']);
      expect(shown.code).toBe(0);
      expect(JSON.parse(shown.stdout)).toMatchObject({ id: ada.id, email: 'ada@example.org' });
    }
    const unknown = await spawnCli(['accounts', 'show', 'nobody@example.org', '--db', db]);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toBe('netintel: no account has the e-mail address "nobody@example.org"\n');
    expect((await spawnCli(['accounts', 'disable', 'nosuchid1234', '--db', db])).code).toBe(3);
  });

  it('changes the plan to a known plan only (exit 2 for another)', async () => {
    const set = await spawnCli(['accounts', 'set-plan', 'ada@example.org', 'pro', '--db', db, '-f', 'json']);
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ id: ada.id, plan: 'pro' });
    const bad = await spawnCli(['accounts', 'set-plan', 'ada@example.org', 'platinum', '--db', db]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^netintel: plan "platinum" is not in the plans file .* \(known: free, free-account, starter, pro, enterprise\)\n$/);
    expect((await spawnCli(['accounts', 'set-plan', 'ada@example.org', 'toString', '--db', db])).code).toBe(2);
    // The plan of requests without a key would make the account's keys worth nothing.
    const keyless = await spawnCli(['accounts', 'set-plan', 'ada@example.org', 'free', '--db', db]);
    expect(keyless).toMatchObject({ code: 2, stderr: expect.stringContaining('plan "free" is the plan of requests without a key and cannot be given to a key: use one of free-account, starter, pro, enterprise') });
    expect((await spawnCli(['accounts', 'create', '--email', 'dee@example.org', '--plan', 'free', '--db', db])).code).toBe(2);
    const accounts = await accountStoreAt(db);
    expect((await accounts.byId(ada.id))!.plan).toBe('pro');
    await accounts.close();
  });

  it('disables an account so that its keys are refused', async () => {
    const keys = await keyStoreAt(db, { recheckMs: 0 });
    expect(await keys.check(ada.key)).toMatchObject({ ok: true });
    const disabled = await spawnCli(['accounts', 'disable', ada.id, '--db', db, '-f', 'json']);
    expect(disabled.code).toBe(0);
    expect(JSON.parse(disabled.stdout).disabled_at).toEqual(expect.any(String));
    expect(await keys.check(ada.key)).toMatchObject({ ok: false, reason: 'revoked' });
    await keys.close();
  });

  it('creates an account without a password and deletes one with its keys', async () => {
    const created = await spawnCli(['accounts', 'create', '--email', ' Cy@Example.COM', '--plan', 'starter', '--db', db, '-f', 'json']);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ email: 'Cy@example.com', plan: 'starter', has_password: false });
    expect((await spawnCli(['accounts', 'create', '--email', 'cy@example.com', '--db', db])).code).toBe(0);
    const again = await spawnCli(['accounts', 'create', '--email', 'Cy@EXAMPLE.com', '--db', db]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/^netintel: an account with the e-mail address "Cy@example.com" exists already/);
    expect((await spawnCli(['accounts', 'create', '--email', 'nobody', '--db', db])).code).toBe(2);

    const deleted = await spawnCli(['accounts', 'delete', 'ada@example.org', '--db', db, '-f', 'json']);
    expect(deleted.code).toBe(0);
    expect(JSON.parse(deleted.stdout).id).toBe(ada.id);
    const keys = await keyStoreAt(db);
    expect(await keys.list()).toEqual([]);
    await keys.close();
    expect((await spawnCli(['accounts', 'show', ada.id, '--db', db])).code).toBe(3);
  });

  it('makes a running server refuse the keys of an account disabled by `accounts disable` (401, revoked)', async () => {
    const path = join(dir.path, 'served.db');
    const accounts = await accountStoreAt(path);
    const keys = await keyStoreAt(path);
    const account = await accounts.create({ email: 'served@example.org', passwordHash: null });
    const own = await keys.create({ plan: 'pro', accountId: account.id });
    const operators = await keys.create({ plan: 'pro' });
    await Promise.all([accounts.close(), keys.close()]);
    const served = await serve(['--db', path]);
    try {
      const ask = (key: string) => fetch(`${served.url}/api/ipinfo?ip=8.8.8.8`, { headers: { 'x-api-key': key } });
      expect((await ask(own.key)).status).toBe(200);
      expect((await spawnCli(['accounts', 'disable', 'served@example.org', '--db', path])).code).toBe(0);
      const disabled_at = Date.now();
      let response = await ask(own.key);
      while (response.status === 200 && Date.now() - disabled_at < 5000) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        response = await ask(own.key);
      }
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ code: 'unauthorized', details: { reason: 'revoked', key_id: own.record.id } });
      expect((await ask(operators.key)).status).toBe(200);
    } finally {
      served.child.kill('SIGKILL');
      await served.exit;
    }
  }, 30_000);
});
