import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { effectivePlan, loadPlanTable, parsePlanTable } from '../../src/keys/plans.js';
import { tempDir } from '../support/cli.js';
import { startTestServer } from './harness.js';

const base = {
  anonymous: 'free',
  bulkMax: 100,
  plans: { free: { daily: 1000, perMinute: 10, burst: 20, batch: 10, features: [] } },
};

describe('the plans file', () => {
  it('ships the plan table of docs/api.md, and a plan for accounts made on the sign-up page', () => {
    const table = loadPlanTable();
    expect(table.anonymous).toBe('free');
    expect(table.newAccounts).toBe('free-account');
    expect(table.bulkMax).toBe(100);
    expect(Object.fromEntries(Object.values(table.plans).map((plan) => [plan.name, [plan.daily, plan.perMinute, plan.burst, plan.batch, plan.features]]))).toEqual({
      free: [1000, 10, 20, 10, []],
      'free-account': [5000, 20, 40, 10, ['premium']],
      starter: [10_000, 50, 100, 50, ['premium']],
      pro: [100_000, 500, 1000, 50, ['premium', 'bulk']],
      enterprise: [1_000_000, 5000, 10_000, 50, ['premium', 'bulk']],
    });
  });

  it.each([
    [{ ...base, plans: {} }, /"anonymous" must name a plan/],
    [{ ...base, plans: { free: { ...base.plans.free, daily: 0 } } }, /"daily" must be a positive integer/],
    [{ ...base, plans: { free: { ...base.plans.free, perMinute: 'fast' } } }, /"perMinute" must be a positive number/],
    [{ ...base, plans: { free: { ...base.plans.free, batch: 21 } } }, /"batch" \(21\) must not exceed "burst" \(20\)/],
    [{ ...base, plans: { free: { ...base.plans.free, features: ['bulk'] } } }, /"burst" \(20\) is below "bulkMax" \(100\)/],
    [{ ...base, plans: { free: { ...base.plans.free, features: ['teleport'] } } }, /"features" must be a list of premium, bulk/],
    [{ ...base, plans: { Free: base.plans.free } }, /plan name "Free"/],
    [{ ...base, newAccounts: 'gold' }, /"newAccounts" must name a plan/],
  ])('refuses a table that cannot be served (%#)', (json, message) => {
    expect(() => parsePlanTable(json, 'plans.json')).toThrow(message);
  });

  it('accepts fractional rates (100 an hour is 1.6667 a minute)', () => {
    const table = parsePlanTable({ ...base, plans: { free: { ...base.plans.free, perMinute: 100 / 60, burst: 10 } } }, 'plans.json');
    expect(table.plans.free!.perMinute).toBeCloseTo(1.6667, 4);
  });

  it('says which file is unreadable or not JSON', () => {
    const dir = tempDir();
    try {
      const path = join(dir.path, 'plans.json');
      writeFileSync(path, '{ nope');
      expect(() => loadPlanTable(path)).toThrow(new RegExp(`${path} is not valid JSON`));
      expect(() => loadPlanTable(join(dir.path, 'missing.json'))).toThrow(/cannot read the plans file/);
      // Never read whole: /dev/zero stops at the limit, in one line naming the file and the limit.
      expect(() => loadPlanTable('/dev/zero')).toThrow(
        expect.objectContaining({ code: 'usage', message: expect.stringMatching(/^the plans file \/dev\/zero is larger than the limit of 1 MiB \(1048576 bytes\); give a JSON file of plans to --plans/) }),
      );
    } finally {
      dir.remove();
    }
  });

  it('merges an enterprise key\'s own limits and checks them', () => {
    const table = loadPlanTable();
    expect(effectivePlan(table, 'enterprise', { daily: 7 })).toMatchObject({ daily: 7, perMinute: 5000, burst: 10_000 });
    expect(() => effectivePlan(table, 'enterprise', { burst: 20 })).toThrow(/must not exceed "burst"/);
    expect(() => effectivePlan(table, 'platinum', null)).toThrow(/not in the plans file/);
  });

  it('serves an operator\'s own plans: limits, features and the docs follow the file', async () => {
    const server = await startTestServer({
      plans: { ...base, plans: { free: { ...base.plans.free, burst: 2, batch: 2 }, team: { title: 'Team', daily: 5, perMinute: 1, burst: 100, batch: 3, features: ['premium', 'bulk'] } } },
    });
    try {
      for (let i = 0; i < 2; i++) expect((await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8' })).statusCode).toBe(200);
      expect((await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8' })).statusCode).toBe(429);
      const key = await server.key('team');
      const bulk = await server.app.inject({ method: 'POST', url: '/api/bulk', headers: { 'x-api-key': key }, payload: { ips: ['8.8.8.8', '1.1.1.1'] } });
      expect(bulk.statusCode).toBe(200);
      expect(bulk.headers['x-ratelimit-remaining']).toBe('3');
      expect((await server.app.inject({ url: '/docs' })).body).toContain('Team <code>team</code>');
    } finally {
      await server.close();
    }
  });

  it('gives an account its plan\'s allowance once, whatever keys it makes or revokes; an operator\'s keys each their own', async () => {
    const server = await startTestServer({
      plans: { ...base, plans: { ...base.plans, team: { daily: 5, perMinute: 1, burst: 100, batch: 3, features: [] } } },
    });
    try {
      const ask = async (key: string) => (await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8', headers: { 'x-api-key': key } })).statusCode;
      const account = await server.store.accounts.create({ email: 'team@example.org', passwordHash: null, plan: 'team' });
      const [first, second] = await Promise.all([1, 2].map(() => server.store.keys.create({ plan: 'team', accountId: account.id })));
      const answers = await Promise.all(Array.from({ length: 8 }, (_, index) => ask((index % 2 === 0 ? first : second)!.key)));
      expect(answers.filter((status) => status === 200)).toHaveLength(5);
      expect(answers.filter((status) => status === 429)).toHaveLength(3);
      await server.store.keys.revoke(first!.record.id);
      const third = await server.store.keys.create({ plan: 'team', accountId: account.id });
      expect(await ask(third.key)).toBe(429);
      // Keys without an account (the operator's, from `netintel keys create`) are counted one by one.
      const [own, other] = await Promise.all([1, 2].map(() => server.key('team')));
      for (let i = 0; i < 5; i++) expect(await ask(own!)).toBe(200);
      expect(await ask(own!)).toBe(429);
      expect(await ask(other!)).toBe(200);
    } finally {
      await server.close();
    }
  });
});
