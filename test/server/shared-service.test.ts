/**
 * Several `netintel serve` processes as one service: two servers given the
 * same PostgreSQL (--db: keys, accounts, usage) and the same Redis
 * (--redis-url: rate limits), both real and started for this file
 * (test/support/postgres.ts, test/server/redis-server.ts). A caller must not
 * be able to tell which server answered.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, spawnCli } from '../support/cli.js';
import { findPostgres, startPostgresServer, type PostgresTestServer } from '../support/postgres.js';
import { serve, type Served } from '../support/served.js';
import { findRedisServer, startRedisServer, type RedisTestServer } from './redis-server.js';

const postgresPrograms = findPostgres();
const redisBinary = findRedisServer();
if (postgresPrograms === null) {
  console.warn('SKIPPING test/server/shared-service.test.ts: initdb/postgres not found on PATH or in /usr/lib/postgresql/*/bin (Debian package postgresql)');
}
if (redisBinary === null) console.warn('SKIPPING test/server/shared-service.test.ts: redis-server not found on PATH (Debian package redis-server)');

interface PlansFile {
  anonymous: string;
  plans: Record<string, { daily: number; perMinute: number; burst: number }>;
}

const shipped = JSON.parse(readFileSync(join(REPO_ROOT, 'data', 'plans.json'), 'utf8')) as PlansFile;
const free = shipped.plans[shipped.anonymous]!;

/**
 * The shipped plans, with the anonymous plan refilling its bucket so slowly
 * that no token comes back while this file runs. At the shipped rate a
 * token can come back while 200 requests go through two processes on a
 * loaded machine: one more request would then be accepted and a remaining
 * count would show twice. With no refill every accepted request is one
 * token of the burst, so the count of 200s is exactly the burst.
 */
function slowRefillPlans(): PlansFile {
  const plans = structuredClone(shipped);
  plans.plans[plans.anonymous]!.perMinute = 0.00001;
  return plans;
}

describe.skipIf(postgresPrograms === null || redisBinary === null)('two servers sharing PostgreSQL and Redis', () => {
  let postgres: PostgresTestServer;
  let redis: RedisTestServer;
  let dir: string;
  let db: string;
  let servers: Served[] = [];

  beforeAll(async () => {
    [postgres, redis] = await Promise.all([startPostgresServer(postgresPrograms!), startRedisServer(redisBinary!)]);
    db = await postgres.createDatabase('shared_service');
    dir = mkdtempSync(join(tmpdir(), 'netintel-shared-'));
    const plansFile = join(dir, 'plans.json');
    writeFileSync(plansFile, JSON.stringify(slowRefillPlans()));
    const args = ['--db', db, '--redis-url', redis.url, '--plans', plansFile];
    // One after the other: the second finds the migrations the first applied.
    servers.push(await serve(args));
    servers.push(await serve(args));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(
      servers.map(async (served) => {
        if (served.child.exitCode === null && served.child.signalCode === null) served.child.kill('SIGTERM');
        await served.exit;
      }),
    );
    servers = [];
    await redis?.stop();
    await postgres?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  const lookup = async (served: Served, headers: Record<string, string> = {}) => {
    const response = await fetch(`${served.url}/api/ipinfo?ip=8.8.8.8`, { headers });
    const body = (await response.json()) as Record<string, unknown>;
    return { status: response.status, headers: response.headers, body };
  };

  // First: the anonymous bucket of 127.0.0.1 must be full when it starts.
  it('accepts exactly the free burst from 200 concurrent keyless requests split over both servers, with consistent X-RateLimit headers', async () => {
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => lookup(servers[i % 2]!)));
    const accepted = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(accepted).toHaveLength(free.burst);
    expect(refused).toHaveLength(200 - free.burst);
    const header = (answer: (typeof answers)[number], name: string) => Number(answer.headers.get(name));

    // Each accepted request left the shared bucket one token lower and the day one lookup lower:
    // every state is seen once, whichever server answered.
    const burstLeft = accepted.map((answer) => header(answer, 'x-ratelimit-burst-remaining')).sort((a, b) => b - a);
    expect(burstLeft).toEqual(Array.from({ length: free.burst }, (_, i) => free.burst - 1 - i));
    const dailyLeft = accepted.map((answer) => header(answer, 'x-ratelimit-remaining')).sort((a, b) => b - a);
    expect(dailyLeft).toEqual(Array.from({ length: free.burst }, (_, i) => free.daily - 1 - i));
    for (const answer of accepted) {
      expect(header(answer, 'x-ratelimit-limit')).toBe(free.daily);
      expect(header(answer, 'x-ratelimit-burst-limit')).toBe(free.burst);
    }

    // Every refusal sees the emptied bucket: nothing left of the burst, the day's count
    // only lowered by the accepted ones (a refusal is not charged).
    for (const answer of refused) {
      expect(header(answer, 'x-ratelimit-burst-remaining')).toBe(0);
      expect(header(answer, 'x-ratelimit-remaining')).toBe(free.daily - free.burst);
      expect(header(answer, 'x-ratelimit-retryafter')).toBeGreaterThanOrEqual(1);
      expect(answer.body).toMatchObject({ code: 'rate_limited', details: { limit: 'burst', plan: shipped.anonymous, burst_remaining: 0 } });
    }

    // The same bucket after the run, from either server.
    for (const served of servers) {
      const after = await lookup(served);
      expect(after.status).toBe(429);
      expect(after.headers.get('x-ratelimit-burst-remaining')).toBe('0');
      expect(after.headers.get('x-ratelimit-remaining')).toBe(String(free.daily - free.burst));
    }
  });

  it('accepts a key made by `netintel keys create` on both, with one budget, and both refuse it within a second of `netintel keys revoke`', async () => {
    const created = await spawnCli(['keys', 'create', '--plan', 'pro', '--label', 'shared', '--db', db, '-f', 'json']);
    expect(created.code, created.stderr).toBe(0);
    const made = JSON.parse(created.stdout) as { id: string; key: string };
    const withKey = { 'x-api-key': made.key };
    const pro = shipped.plans['pro']!;

    // Accepted by both, and charged to one budget in Redis.
    const remaining: number[] = [];
    for (const served of [...servers, ...servers]) {
      const answer = await lookup(served, withKey);
      expect(answer.status).toBe(200);
      expect((answer.body.network as { asn: number }).asn).toBe(15169);
      expect(answer.headers.get('x-ratelimit-limit')).toBe(String(pro.daily));
      remaining.push(Number(answer.headers.get('x-ratelimit-remaining')));
    }
    expect(remaining).toEqual([pro.daily - 1, pro.daily - 2, pro.daily - 3, pro.daily - 4]);

    const revoked = await spawnCli(['keys', 'revoke', made.id, '--db', db]);
    expect(revoked.code, revoked.stderr).toBe(0);
    const revoked_at = Date.now();

    // Polled until refused: the time each server took to notice, from the end of `keys revoke`.
    const refusedAfter = await Promise.all(
      servers.map(async (served) => {
        for (;;) {
          const answer = await lookup(served, withKey);
          if (answer.status === 401) {
            expect(answer.body).toMatchObject({ code: 'unauthorized', details: { reason: 'revoked', key_id: made.id } });
            expect(answer.headers.get('www-authenticate')).toBeTruthy();
            return Date.now() - revoked_at;
          }
          expect(answer.status).toBe(200);
          if (Date.now() - revoked_at > 5000) return Infinity;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }),
    );
    for (const elapsed of refusedAfter) expect(elapsed).toBeLessThan(1000);

    // Neither server logged the database password.
    for (const served of servers) expect(served.stderr()).not.toContain(postgres.password);
  });
});
