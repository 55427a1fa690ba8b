/**
 * A key is always worth more than no key. The plan of requests without a
 * key (`free` in data/plans.json) cannot be given to a key, and a key (or
 * an account) stored with it, as `keys create --plan free` once made them,
 * is served with the plan of new accounts (`free-account`): in a SQLite file
 * and in a real PostgreSQL (test/support/postgres.ts).
 */
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkKeyedPlan, keyedPlanNames, loadPlanTable, parsePlanTable, planOfKey } from '../../src/keys/plans.js';
import { openStore, type Store } from '../../src/store/open-store.js';
import { tempDir } from '../support/cli.js';
import { findPostgres, startPostgresServer, type PostgresTestServer } from '../support/postgres.js';
import { startTestServer } from './harness.js';

const programs = findPostgres();
if (programs === null) console.warn('SKIPPING the PostgreSQL half of test/server/keyless-plan.test.ts: initdb/postgres not found (Debian package postgresql)');

describe('the plan of requests without a key', () => {
  const table = loadPlanTable();

  it('is not among the plans a key or an account may have', () => {
    expect(keyedPlanNames(table)).toEqual(['free-account', 'starter', 'pro', 'enterprise']);
    expect(() => checkKeyedPlan(table, 'free')).toThrow(
      expect.objectContaining({ code: 'usage', message: 'plan "free" is the plan of requests without a key and cannot be given to a key: use one of free-account, starter, pro, enterprise' }),
    );
    expect(() => checkKeyedPlan(table, 'pro')).not.toThrow();
    expect(() => checkKeyedPlan(table, 'gold')).toThrow(/plan "gold" is not in the plans file/);
  });

  it('is read as the plan of new accounts when a key was stored with it', () => {
    expect(planOfKey(table, 'free', null)).toMatchObject({ name: 'free-account', features: ['premium'] });
    expect(planOfKey(table, 'pro', null).name).toBe('pro');
  });

  it('is never the plan of new accounts of a plans file that has another', () => {
    const plans = { free: { daily: 10, perMinute: 1, burst: 10, batch: 1 }, paid: { daily: 100, perMinute: 1, burst: 10, batch: 1, features: ['premium'] } };
    expect(parsePlanTable({ anonymous: 'free', plans }, 'plans.json').newAccounts).toBe('paid');
    expect(() => parsePlanTable({ anonymous: 'free', newAccounts: 'free', plans }, 'plans.json')).toThrow(/"newAccounts" must not be "free", the plan of requests without a key/);
    // A file of one plan has nothing else to give; its keys are served as their callers would be without.
    expect(parsePlanTable({ anonymous: 'free', plans: { free: plans.free } }, 'plans.json').newAccounts).toBe('free');
  });
});

/** A key and an account stored with `free` as before, and the answers a server gives them. */
async function storedFreeKeysAreServed(store: Store, rawUpdate: (sql: string) => Promise<void>): Promise<void> {
  const account = await store.accounts.create({ email: 'old@example.org', passwordHash: null, plan: 'pro' });
  const { key } = await store.keys.create({ plan: 'free', label: 'made with --plan free' });
  const { key: accountKey } = await store.keys.create({ plan: 'pro', accountId: account.id });
  // Rows as an older netintel left them: an account, and its keys, on the keyless plan.
  await rawUpdate(`UPDATE accounts SET plan = 'free' WHERE id = '${account.id}'`);
  await rawUpdate(`UPDATE api_keys SET plan = 'free' WHERE account_id = '${account.id}'`);
  const server = await startTestServer({ store });
  try {
    for (const presented of [key, accountKey]) {
      const answer = await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8', headers: { 'x-api-key': presented } });
      expect(answer.statusCode).toBe(200);
      expect(answer.headers['x-netintel-withheld']).toBeUndefined();
      const record = answer.json() as { network?: { asn: number }; note?: string };
      expect(record.network?.asn).toBe(15169);
      expect(record.note).toBeUndefined();
      const quota = (await server.app.inject({ url: '/api/quota', headers: { 'x-api-key': presented } })).json() as { plan: string };
      expect(quota.plan).toBe('free-account');
    }
    // Without a key: the keyless plan, and the note that says a key is needed.
    const anonymous = (await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8' })).json() as { network?: unknown; note?: string };
    expect(anonymous.network).toBeUndefined();
    expect(anonymous.note).toMatch(/need an API key/);
    // Giving the keyless plan to the account now is refused.
    await expect(store.accounts.setPlan(account.id, 'free', server.plans)).rejects.toMatchObject({ code: 'usage' });
  } finally {
    await server.close();
  }
}

describe('keys stored with the keyless plan keep working', () => {
  const dir = tempDir('netintel-keyless-');
  afterAll(() => dir.remove());

  it('in a SQLite file', async () => {
    const path = join(dir.path, 'keys.db');
    const store = await openStore(path);
    const Database = (await import('better-sqlite3')).default;
    await storedFreeKeysAreServed(store, async (sql) => {
      const raw = new Database(path);
      try {
        raw.exec(sql);
      } finally {
        raw.close();
      }
    });
  });

  describe.skipIf(programs === null)('in PostgreSQL', () => {
    let postgres: PostgresTestServer;
    beforeAll(async () => {
      postgres = await startPostgresServer(programs!);
    }, 60_000);
    afterAll(async () => {
      await postgres?.stop();
    });

    it('a key and an account stored with free', async () => {
      const url = await postgres.createDatabase('keyless_plan');
      const store = await openStore(url);
      await storedFreeKeysAreServed(store, async (sql) => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          await client.query(sql);
        } finally {
          await client.end();
        }
      });
    }, 60_000);
  });
});

describe('a key whose plan lacks the premium groups', () => {
  it('is told its plan lacks them, not that it needs a key', async () => {
    const plans = {
      anonymous: 'free',
      plans: { free: { daily: 100, perMinute: 60, burst: 10, batch: 1 }, basic: { daily: 100, perMinute: 60, burst: 10, batch: 1 } },
    };
    const server = await startTestServer({ plans });
    try {
      const key = await server.key('basic');
      const record = (await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8', headers: { 'x-api-key': key } })).json() as { note?: string };
      expect(record.note).toBe('network and security are not in the basic plan of this API key; see /docs#plans');
    } finally {
      await server.close();
    }
  });
});
