/**
 * The account forms' protections under concurrency: hundreds of sign-in
 * attempts at once against one address, from one client and from twenty,
 * with the throttles in process memory and in Redis shared by two servers.
 * The throttles are taken before any password is hashed, so exactly as many
 * passwords are checked as the documented limits allow (docs/accounts.md),
 * and the right password sent inside a refused burst is refused too.
 * Also: a Redis that is down or hung gives a 503 page within a second.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMailer } from '../../src/accounts/mailer.js';
import { hashPassword } from '../../src/accounts/passwords.js';
import type { LimitStore } from '../../src/server/limits/limit-store.js';
import { createRedisLimitStore } from '../../src/server/limits/redis-limit-store.js';
import { THROTTLES } from '../../src/web/throttles.js';
import { manualClock, startTestServer, type TestServer } from '../server/harness.js';
import { findRedisServer, startRedisServer, type RedisTestServer } from '../server/redis-server.js';
import { openStore } from '../support/stores.js';
import { PageClient } from './page-client.js';

const PASSWORD = 'correct horse battery staple';
const EMAIL = 'owner@example.org';
const redisBinary = findRedisServer();
if (!redisBinary) console.warn('SKIPPING the Redis half of test/web/account-bursts.test.ts: redis-server is not installed (apt-get install redis-server)');

interface Fleet {
  servers: TestServer[];
  close(): Promise<void>;
}

let redis: RedisTestServer | undefined;
beforeAll(async () => {
  if (redisBinary) redis = await startRedisServer(redisBinary);
}, 30_000);
afterAll(async () => {
  await redis?.stop();
});

/** `count` servers on one SQLite file, sharing throttles through `limits()` (one store each, as separate processes would have). */
async function fleet(count: number, limits: () => Promise<LimitStore> | undefined): Promise<Fleet> {
  const dir = mkdtempSync(join(tmpdir(), 'netintel-bursts-'));
  const clock = manualClock();
  const servers: TestServer[] = [];
  for (let index = 0; index < count; index++) {
    const store = await openStore(join(dir, 'keys.db'), { now: () => new Date(clock.now()) });
    const shared = await limits();
    servers.push(
      await startTestServer({
        store,
        clock,
        ...(shared ? { limits: shared } : {}),
        checkContract: false,
        trustProxy: ['loopback'],
        accountPages: { mailer: createMailer({ from: 'netintel <no-reply@netintel.test>', outboxDir: join(dir, 'outbox') }), publicUrl: () => 'http://netintel.test', https: false },
      }),
    );
  }
  const accounts = servers[0]!.store.accounts;
  const account = await accounts.create({ email: EMAIL, passwordHash: await hashPassword(PASSWORD) });
  await accounts.markVerified(account.id);
  return {
    servers,
    close: async () => {
      for (const server of servers) await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Sign-in attempts sent at once: attempt i comes from client `clientOf(i)`
 * through server i mod n, with the right password only where `right(i)`.
 * Each browser has its log-in form first; then every POST leaves together.
 */
async function burst(target: Fleet, count: number, clientOf: (index: number) => string, right: (index: number) => boolean): Promise<number[]> {
  const browsers = await Promise.all(
    Array.from({ length: count }, async (_, index) => {
      const browser = new PageClient(target.servers[index % target.servers.length]!.app, { 'x-forwarded-for': clientOf(index) });
      await browser.get('/login');
      return browser;
    }),
  );
  const pages = await Promise.all(browsers.map((browser, index) => browser.post('/login', { email: EMAIL, password: right(index) ? PASSWORD : 'wrong password here' })));
  return pages.map((page) => page.status);
}

const tally = (statuses: number[]) => ({
  checked: statuses.filter((status) => status === 401 || status === 303).length,
  refused: statuses.filter((status) => status === 429).length,
  other: statuses.filter((status) => ![401, 303, 429].includes(status)).length,
});

/** Where the throttles count: each server's memory, or one Redis that two servers share (a key prefix per test). */
const setups: Array<{ name: string; skip: boolean; servers: number; limits: (prefix: string) => () => Promise<LimitStore> | undefined }> = [
  { name: 'throttles in memory, one server', skip: false, servers: 1, limits: () => () => undefined },
  { name: 'throttles in Redis, two servers', skip: !redisBinary, servers: 2, limits: (prefix) => () => createRedisLimitStore(redis!.url, { keyPrefix: prefix }) },
];

for (const setup of setups) {
  describe.skipIf(setup.skip)(`300 sign-in attempts at once, ${setup.name}`, () => {
    let target: Fleet;
    afterEach(async () => {
      await target?.close();
    });

    it('from one client: exactly five passwords are checked, and the right one sent last is refused', async () => {
      target = await fleet(setup.servers, setup.limits('one-client:'));
      const statuses = await burst(target, 300, () => '203.0.113.5', (index) => index === 299);
      expect(tally(statuses)).toEqual({ checked: THROTTLES.signInByAddressAndClient.burst, refused: 300 - THROTTLES.signInByAddressAndClient.burst, other: 0 });
      expect(statuses.filter((status) => status === 303)).toEqual([]);
      expect(statuses[299]).toBe(429);
    });

    it('from twenty clients: exactly ten passwords are checked in all, and the right one sent last is refused', async () => {
      target = await fleet(setup.servers, setup.limits('twenty-clients:'));
      const statuses = await burst(target, 300, (index) => (index === 299 ? '198.51.100.250' : `198.51.100.${index % 20}`), (index) => index === 299);
      expect(tally(statuses)).toEqual({ checked: THROTTLES.signInByAddress.burst, refused: 300 - THROTTLES.signInByAddress.burst, other: 0 });
      expect(statuses[299]).toBe(429);
    });
  });
}

for (const setup of setups) {
  describe.skipIf(setup.skip)(`sign-ins with the old password racing a password change or a reset, ${setup.name}`, () => {
    let target: Fleet;
    afterEach(async () => {
      await target?.close();
    });

    /** Browsers (one client each) with their log-in form, on the servers in turn. */
    const browsersAt = (count: number, prefix: string) =>
      Promise.all(
        Array.from({ length: count }, async (_, index) => {
          const browser = new PageClient(target.servers[index % target.servers.length]!.app, { 'x-forwarded-for': `${prefix}.${index + 1}` });
          await browser.get('/login');
          return browser;
        }),
      );
    /** Sign-ins sent while the change is under way (its own two hashes take far longer than the delay). */
    const signInsDuring = async (change: Promise<unknown>, browsers: PageClient[], password: string) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const statuses = await Promise.all(browsers.map((browser) => browser.post('/login', { email: EMAIL, password })));
      await change;
      return statuses.map((page) => page.status);
    };

    it('a password change: no session signed in with the old password outlives it, and the owner keeps theirs', async () => {
      target = await fleet(setup.servers, setup.limits('change-race:'));
      const owner = new PageClient(target.servers[0]!.app, { 'x-forwarded-for': '203.0.113.200' });
      await owner.get('/login');
      expect((await owner.post('/login', { email: EMAIL, password: PASSWORD })).status).toBe(303);
      await owner.get('/dashboard');
      const others = await browsersAt(3, '203.0.113');
      const change = owner.post('/account/password', { current: PASSWORD, password: 'a brand new passphrase' });
      const statuses = await signInsDuring(change, others, PASSWORD);
      expect(await change).toMatchObject({ status: 303, location: '/dashboard' });
      expect(statuses.every((status) => status === 303 || status === 401)).toBe(true);
      for (const other of others) expect(await other.get('/dashboard')).toMatchObject({ status: 303, location: '/login' });
      expect((await owner.get('/dashboard')).body).toContain('This is the only session open.');
    });

    it("a stolen session's password change racing the owner's reset: the reset's password is the one that works", async () => {
      target = await fleet(setup.servers, setup.limits('thief-reset:'));
      const accounts = target.servers[0]!.store.accounts;
      const thief = new PageClient(target.servers[setup.servers - 1]!.app, { 'x-forwarded-for': '192.0.2.66' });
      await thief.get('/login');
      expect((await thief.post('/login', { email: EMAIL, password: PASSWORD })).status).toBe(303);
      await thief.get('/dashboard');
      const { token } = await accounts.issueLink((await accounts.byEmail(EMAIL))!.id, 'reset-password');
      const owner = new PageClient(target.servers[0]!.app, { 'x-forwarded-for': '198.51.100.7' });
      expect((await owner.get(`/reset/${token}`)).status).toBe(200);
      const change = thief.post('/account/password', { current: PASSWORD, password: 'the thief keeps this one' });
      await new Promise((resolve) => setTimeout(resolve, 30));
      const reset = await owner.post('/reset', { token, password: 'the owner chose this one' });
      const changed = await change;
      expect(reset).toMatchObject({ status: 303, location: '/login' });
      // The change was checked against the password the reset replaced: not made, and the thief is logged out.
      expect(changed).toMatchObject({ status: 303, location: '/login' });
      const signIn = async (password: string) => {
        const browser = new PageClient(target.servers[0]!.app, { 'x-forwarded-for': '198.51.100.8' });
        await browser.get('/login');
        return (await browser.post('/login', { email: EMAIL, password })).status;
      };
      expect(await signIn('the owner chose this one')).toBe(303);
      expect(await signIn('the thief keeps this one')).toBe(401);
      expect(await thief.get('/dashboard')).toMatchObject({ status: 303, location: '/login' });
    });

    it('two password changes at once from two sessions: one is made, the other says it was not', async () => {
      target = await fleet(setup.servers, setup.limits('two-changes:'));
      const sessions = await Promise.all(
        [0, 1].map(async (index) => {
          const browser = new PageClient(target.servers[index % setup.servers]!.app, { 'x-forwarded-for': `192.0.2.${70 + index}` });
          await browser.get('/login');
          expect((await browser.post('/login', { email: EMAIL, password: PASSWORD })).status).toBe(303);
          await browser.get('/dashboard');
          return browser;
        }),
      );
      const pages = await Promise.all(sessions.map((browser, index) => browser.post('/account/password', { current: PASSWORD, password: `new passphrase number ${index}` })));
      const made = pages.findIndex((page) => page.status === 303 && page.location === '/dashboard');
      expect(made).toBeGreaterThanOrEqual(0);
      // The other was checked against the password the first replaced: its session ended with the change, so it is sent to log in; never told "changed".
      expect(pages[1 - made]).toMatchObject({ status: 303, location: '/login' });
      expect((await sessions[made]!.get('/dashboard')).status).toBe(200);
      const browser = new PageClient(target.servers[0]!.app, { 'x-forwarded-for': '192.0.2.80' });
      await browser.get('/login');
      expect((await browser.post('/login', { email: EMAIL, password: `new passphrase number ${made}` })).status).toBe(303);
    });

    it('a reset: no session signed in with the old password outlives it', async () => {
      target = await fleet(setup.servers, setup.limits('reset-race:'));
      const accounts = target.servers[0]!.store.accounts;
      const { token } = await accounts.issueLink((await accounts.byEmail(EMAIL))!.id, 'reset-password');
      const resetter = new PageClient(target.servers[0]!.app, { 'x-forwarded-for': '198.51.100.200' });
      expect((await resetter.get(`/reset/${token}`)).status).toBe(200);
      const others = await browsersAt(3, '198.51.100');
      const reset = resetter.post('/reset', { token, password: 'a brand new passphrase' });
      const statuses = await signInsDuring(reset, others, PASSWORD);
      expect(await reset).toMatchObject({ status: 303, location: '/login' });
      expect(statuses.every((status) => status === 303 || status === 401)).toBe(true);
      for (const other of others) expect(await other.get('/dashboard')).toMatchObject({ status: 303, location: '/login' });
      expect(await accounts.sessionCount((await accounts.byEmail(EMAIL))!.id)).toBe(0);
    });
  });
}

describe.skipIf(!redisBinary)('a Redis that does not answer', () => {
  it('gives the forms a 503 "try again shortly" page within a second, hung or down; awake again, they work', async () => {
    const own = await startRedisServer(redisBinary!);
    const target = await fleet(1, () => createRedisLimitStore(own.url, { keyPrefix: 'down:' }));
    try {
      const attempt = async () => {
        const browser = new PageClient(target.servers[0]!.app, { 'x-forwarded-for': '192.0.2.1' });
        await browser.get('/login');
        const started = performance.now();
        const page = await browser.post('/login', { email: EMAIL, password: PASSWORD });
        return { page, ms: performance.now() - started };
      };
      expect((await attempt()).page.status).toBe(303);

      own.signal('SIGSTOP');
      const hung = await attempt();
      expect(hung.page.status).toBe(503);
      expect(hung.page.body).toContain('Try again shortly');
      expect(hung.page.headers['retry-after']).toBe('30');
      expect(hung.ms).toBeLessThan(1000);

      // Awake again: the same connection answers.
      own.signal('SIGCONT');
      expect((await attempt()).page.status).toBe(303);

      await own.stop();
      const down = await attempt();
      expect(down.page.status).toBe(503);
      expect(down.ms).toBeLessThan(1000);
    } finally {
      await target.close();
      await own.stop();
    }
  });
});
