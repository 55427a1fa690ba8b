/**
 * What a person confirmed survives: the built `netintel serve` on a SQLite
 * file, read meanwhile by other processes (Debian's sqlite3 and
 * better-sqlite3 in a child process), then killed with SIGKILL; and a
 * hundred sign-ups with SIGKILL at a random moment, then a restart. Every
 * account the server confirmed is in the file afterwards, the file passes
 * PRAGMA integrity_check, and every account gets exactly one message.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { simpleParser } from 'mailparser';
import { afterEach, describe, expect, it } from 'vitest';
import { PageClient } from '../web/page-client.js';
import { REPO_ROOT, spawnCli, tempDir } from '../support/cli.js';
import { burstThenKill, eventually } from '../support/crash-harness.js';
import { findExecutable } from '../support/peers.js';
import { serve, type Served } from '../support/served.js';

const PASSWORD = 'correct horse battery staple';
const sqlite3 = findExecutable('sqlite3');
if (!sqlite3) console.warn('SKIPPING the outside-reader half of test/integration/account-crash.test.ts: the sqlite3 CLI is not installed (apt-get install sqlite3)');

const dirs: Array<{ remove(): void }> = [];
const running: Served[] = [];
afterEach(async () => {
  for (const served of running.splice(0)) {
    if (served.child.exitCode === null && served.child.signalCode === null) {
      served.child.kill('SIGKILL');
      await served.exit;
    }
  }
  dirs.splice(0).forEach((dir) => dir.remove());
});

function workspace() {
  const dir = tempDir('netintel-crash-');
  dirs.push(dir);
  return { dir: dir.path, db: join(dir.path, 'keys.db'), outbox: join(dir.path, 'outbox') };
}

async function start(db: string, dataDir: string): Promise<Served> {
  const served = await serve(['--db', db, '--data-dir', dataDir, '--trust-proxy', 'loopback', '--log-level', 'warn']);
  running.push(served);
  return served;
}

/** Signs up from a client address of its own (the per-client sign-up throttle is not what is tested here); resolves only on the page that says it is done. */
async function signUp(served: Served, email: string, client: string): Promise<void> {
  const browser = new PageClient(served.url, { 'x-forwarded-for': client });
  await browser.get('/signup');
  const page = await browser.post('/signup', { email, password: PASSWORD });
  if (page.status !== 200 || !page.body.includes('Check your e-mail')) throw new Error(`sign-up of ${email}: ${page.status}`);
}

/** A query by Debian's sqlite3, another process with its own locks, as an operator would run it. */
function outsideQuery(db: string, sql: string): string {
  const result = spawnSync(sqlite3!, [db, sql], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`sqlite3: ${result.stderr}`);
  return result.stdout.trim();
}

/** The same through better-sqlite3 in a child process: a second kind of outside reader. */
async function childQuery(db: string, sql: string): Promise<string> {
  const script = `const D = require('better-sqlite3'); const db = new D(process.argv[1]); process.stdout.write(JSON.stringify(db.prepare(process.argv[2]).all())); db.close();`;
  const child = spawn(process.execPath, ['-e', script, db, sql], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`better-sqlite3 child: ${err}`);
  return out;
}

function withFile<T>(db: string, read: (file: Database.Database) => T): T {
  const file = new Database(db);
  try {
    return read(file);
  } finally {
    file.close();
  }
}

describe('accounts in SQLite under outside readers and kill -9', () => {
  it.skipIf(!sqlite3)('keeps every account the server confirmed, read meanwhile by sqlite3 and better-sqlite3 in other processes', async () => {
    const { dir, db } = workspace();
    const served = await start(db, dir);
    await signUp(served, 'u1@example.org', '192.0.2.1');
    expect(outsideQuery(db, 'select count(*) from accounts')).toBe('1');
    expect(JSON.parse(await childQuery(db, 'select count(*) as n from accounts'))).toEqual([{ n: 1 }]);
    await signUp(served, 'u2@example.org', '192.0.2.2');
    // u2 can log in: the server holds the account.
    const browser = new PageClient(served.url, { 'x-forwarded-for': '192.0.2.2' });
    await browser.get('/login');
    expect((await browser.post('/login', { email: 'u2@example.org', password: PASSWORD })).status).toBe(303);
    // Another process sees what the server holds while it runs.
    const listed = await spawnCli(['accounts', 'list', '--db', db, '-f', 'json']);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as Array<{ email: string }>).map((account) => account.email).sort()).toEqual(['u1@example.org', 'u2@example.org']);
    expect(outsideQuery(db, 'select count(*) from accounts')).toBe('2');

    served.child.kill('SIGKILL');
    await served.exit;
    expect(outsideQuery(db, 'select email from accounts order by email')).toBe('u1@example.org\nu2@example.org');
    expect(outsideQuery(db, 'PRAGMA integrity_check')).toBe('ok');
    expect(JSON.parse(await childQuery(db, 'select email from accounts order by email'))).toEqual([{ email: 'u1@example.org' }, { email: 'u2@example.org' }]);
  }, 60_000);

  for (const seed of [29, 2029]) {
    it(`loses no confirmed sign-up and sends each account exactly one message across a kill -9 at a random moment of 100 sign-ups (seed ${seed})`, async () => {
      const { dir, db, outbox } = workspace();
      const email = (index: number) => `user${index}@example.org`;
      const { outcome } = await burstThenKill({
        start: () => start(db, dir),
        request: async (served, index) => signUp(served, email(index), `10.0.${index >> 8}.${index & 255}`),
        requests: 100,
        concurrency: 40,
        killWindowMs: [300, 3000],
        seed,
      });
      const context = `seed ${seed}, killed after ${outcome.killedAfterMs} ms, ${outcome.confirmed.size} of 100 confirmed`;
      console.info(context);

      // Restarted, the server sends what was queued and not yet sent.
      const restarted = await start(db, dir);
      const pending = () => withFile(db, (file) => (file.prepare('SELECT count(*) AS n FROM mail_outbox WHERE sent_at IS NULL AND gave_up_at IS NULL').get() as { n: number }).n);
      await eventually(() => pending() === 0, 30_000, () => `${pending()} messages still queued (${context})`);

      const accounts = withFile(db, (file) => (file.prepare('SELECT email FROM accounts').all() as Array<{ email: string }>).map((row) => row.email));
      for (const index of outcome.confirmed.keys()) expect(accounts, context).toContain(email(index));
      expect(new Set(accounts).size).toBe(accounts.length);

      // No message at all (killed before the first sign-up was stored) leaves no outbox folder: then no account either.
      const files = existsSync(outbox) ? readdirSync(outbox).filter((name) => name.endsWith('.eml')) : [];
      const recipients = await Promise.all(
        files.map(async (name) => {
          const parsed = await simpleParser(readFileSync(join(outbox, name)));
          return Array.isArray(parsed.to) ? parsed.to[0]!.text : parsed.to!.text;
        }),
      );
      expect([...recipients].sort(), context).toEqual([...accounts].sort());
      expect(withFile(db, (file) => file.pragma('integrity_check', { simple: true })), context).toBe('ok');

      restarted.child.kill('SIGTERM');
      await restarted.exit;
    }, 120_000);
  }

  it('keeps every key the dashboard showed, and no more than an account may hold, across a kill -9 at a random moment of 30 key requests', async () => {
    const { dir, db } = workspace();
    const email = 'keys@example.org';
    let browser: PageClient;
    const { outcome } = await burstThenKill({
      start: async () => {
        const served = await start(db, dir);
        await signUp(served, email, '192.0.2.9');
        withFile(db, (file) => file.prepare('UPDATE accounts SET email_verified_at = ? WHERE email = ?').run(new Date().toISOString(), email));
        browser = new PageClient(served.url, { 'x-forwarded-for': '192.0.2.9' });
        await browser.get('/login');
        if ((await browser.post('/login', { email, password: PASSWORD })).status !== 303) throw new Error('log-in failed');
        await browser.get('/dashboard');
        return served;
      },
      // A key shown (201) or the limit said (409) is what the server confirmed.
      request: async (_served, index) => {
        const page = await browser.post('/dashboard/keys', { label: `k${index}` });
        if (page.status === 409) return null;
        const key = /ni_[A-Za-z0-9]+_[A-Za-z0-9_-]{43}/.exec(page.body)?.[0];
        if (page.status !== 201 || key === undefined) throw new Error(`key request ${index}: ${page.status}`);
        return key;
      },
      requests: 30,
      concurrency: 10,
      // The thirty are answered within about 150 ms on a quiet machine.
      killWindowMs: [10, 150],
      seed: 1129,
    });
    const shown = [...outcome.confirmed.values()].filter((key): key is string => key !== null);
    const context = `killed after ${outcome.killedAfterMs} ms, ${shown.length} keys shown`;
    console.info(context);
    const restarted = await start(db, dir);
    for (const key of shown) {
      const answer = await fetch(`${restarted.url}/api/ipinfo?ip=8.8.8.8`, { headers: { 'x-api-key': key } });
      expect(answer.status, context).toBe(200);
    }
    const active = withFile(db, (file) => (file.prepare('SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NULL').get() as { n: number }).n);
    expect(active, context).toBeGreaterThanOrEqual(shown.length);
    expect(active, context).toBeLessThanOrEqual(20);
    expect(withFile(db, (file) => file.pragma('integrity_check', { simple: true })), context).toBe('ok');
    restarted.child.kill('SIGTERM');
    await restarted.exit;
  }, 120_000);
});

