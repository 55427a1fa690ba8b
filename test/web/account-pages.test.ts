/**
 * The account pages through the whole server (buildServer), with real
 * stores (one SQLite file for keys and accounts, as `serve` opens them) and
 * the real outbox mailer: the flows, and the security cases of each form.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { simpleParser } from 'mailparser';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccountStore } from '../../src/store/account-store.js';
import { createMailer } from '../../src/accounts/mailer.js';
import { THROTTLES } from '../../src/web/throttles.js';
import { manualClock, startTestServer, type TestServer } from '../server/harness.js';
import { PageClient } from './page-client.js';
import { openStore } from '../support/stores.js';

const PASSWORD = 'correct horse battery staple';

interface Setup {
  server: TestServer;
  accounts: AccountStore;
  outbox: string;
  dir: string;
}

let setup: Setup;

async function start(options: { publicUrl?: string } = {}): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), 'netintel-pages-'));
  const clock = manualClock();
  // The store writes dates by the server's clock, so that moving the clock expires links and sessions.
  const store = await openStore(join(dir, 'keys.db'), { now: () => new Date(clock.now()) });
  const outbox = join(dir, 'outbox');
  const publicUrl = options.publicUrl ?? 'http://netintel.test';
  const server = await startTestServer({
    store,
    clock,
    checkContract: false,
    trustProxy: ['loopback'],
    accountPages: {
      mailer: createMailer({ from: 'netintel <no-reply@netintel.test>', outboxDir: outbox }),
      publicUrl: () => publicUrl,
      https: publicUrl.startsWith('https:'),
    },
  });
  return { server, accounts: store.accounts, outbox, dir };
}

beforeEach(async () => {
  setup = await start();
});

afterEach(async () => {
  await setup.server.close();
  rmSync(setup.dir, { recursive: true, force: true });
});

/** The mail in the outbox, oldest first, once `count` messages are there (mail goes out after the answer). */
async function mails(count: number, outbox = setup.outbox): Promise<Array<{ to: string; subject: string; text: string }>> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const files = (() => {
      try {
        return readdirSync(outbox).filter((name) => name.endsWith('.eml')).sort();
      } catch {
        return [];
      }
    })();
    if (files.length >= count) {
      return Promise.all(
        files.map(async (name) => {
          const parsed = await simpleParser(readFileSync(join(outbox, name)));
          const to = Array.isArray(parsed.to) ? parsed.to[0]!.text : parsed.to!.text;
          return { to, subject: parsed.subject ?? '', text: parsed.text ?? '' };
        }),
      );
    }
    if (Date.now() > deadline) throw new Error(`expected ${count} messages in the outbox, found ${files.length}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits a moment and says how many messages there are: for checking that none was sent. */
async function mailCount(): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 200));
  try {
    return readdirSync(setup.outbox).filter((name) => name.endsWith('.eml')).length;
  } catch {
    return 0;
  }
}

function linkIn(text: string, kind: 'verify' | 'reset'): string {
  const match = new RegExp(`http://netintel\\.test(/${kind}/[A-Za-z0-9_-]{43})`).exec(text);
  if (!match) throw new Error(`no ${kind} link in:\n${text}`);
  return match[1]!;
}

function client(address = '192.0.2.10'): PageClient {
  return new PageClient(setup.server.app, { 'x-forwarded-for': address });
}

async function signUp(browser: PageClient, email: string, password = PASSWORD) {
  await browser.get('/signup');
  return browser.post('/signup', { email, password });
}

/** Signs up, follows the verification link and logs in; returns the signed-in client. */
async function verifiedAccount(email = 'ada@example.org', address = '192.0.2.10'): Promise<PageClient> {
  const browser = client(address);
  const before = await mailCount();
  await signUp(browser, email);
  const mail = (await mails(before + 1)).at(-1)!;
  const path = linkIn(mail.text, 'verify');
  await browser.get(path);
  await browser.post('/verify', { token: path.split('/').at(-1)! });
  await browser.get('/login');
  const login = await browser.post('/login', { email, password: PASSWORD });
  expect(login.status, login.body).toBe(303);
  return browser;
}

async function makeKey(browser: PageClient, label: string): Promise<{ page: string; key: string }> {
  await browser.get('/dashboard');
  const page = await browser.post('/dashboard/keys', { label });
  expect(page.status, page.body).toBe(201);
  const key = /<code class="secret" id="new-key-value">(ni_[A-Za-z0-9_-]+)<\/code>/.exec(page.body)?.[1];
  if (!key) throw new Error(`no key on the page:\n${page.body}`);
  return { page: page.body, key };
}

async function ipinfo(key: string) {
  return setup.server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8', headers: { 'x-api-key': key } });
}

/**
 * Waits until a key is refused, and says how long that took. Changes made
 * through the account store (another connection, as another server's
 * would be) reach the key store's checks within a second.
 */
async function refusedWithin(key: string): Promise<number> {
  const started = performance.now();
  while ((await ipinfo(key)).statusCode !== 401) {
    if (performance.now() - started > 3000) throw new Error('the key is still accepted after 3 s');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return performance.now() - started;
}

describe('sign-up, verification, log-in and the dashboard', () => {
  it('go from nothing to a key that sees the premium fields, and a revoked key is refused', async () => {
    const browser = client();
    const signup = await signUp(browser, 'Ada@Example.ORG');
    expect(signup.status).toBe(200);
    expect(signup.body).toContain('Check your e-mail');
    const [mail] = await mails(1);
    expect(mail!.to).toBe('Ada@example.org');
    expect(mail!.subject).toBe('Verify your e-mail address for netintel');
    const path = linkIn(mail!.text, 'verify');

    // Opening the link (what a mail scanner does) verifies nothing; the button does.
    const landing = await browser.get(path);
    expect(landing.body).toContain('Verify my address');
    expect((await setup.accounts.byEmail('Ada@example.org'))!.email_verified_at).toBeNull();
    const verified = await browser.post('/verify', { token: path.split('/').at(-1)! });
    expect(verified).toMatchObject({ status: 303, location: '/login' });
    expect((await setup.accounts.byEmail('Ada@example.org'))!.email_verified_at).not.toBeNull();
    expect((await browser.get('/login')).body).toContain('Your e-mail address is verified');

    // The domain's case does not matter; the local part's is kept (RFC 5321 §2.4).
    const login = await browser.post('/login', { email: 'Ada@EXAMPLE.org', password: PASSWORD });
    expect(login).toMatchObject({ status: 303, location: '/dashboard' });
    const dashboard = await browser.get('/dashboard');
    expect(dashboard.status).toBe(200);
    expect(dashboard.body).toContain('Free account');
    expect(dashboard.body).toContain('5,000 lookups a day');

    const { page, key } = await makeKey(browser, 'cron on web-1');
    expect(page).toContain('shown only this once');
    expect(page).toContain(`curl -H &quot;X-API-Key: ${key}&quot; &#39;http://netintel.test/api/ipinfo?ip=8.8.8.8&#39;`);
    // The key is shown once: the next view of the dashboard lists it without the secret.
    const later = await browser.get('/dashboard');
    expect(later.body).not.toContain(key);
    expect(later.body).toContain('cron on web-1');

    const answer = await ipinfo(key);
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toHaveProperty('network.asn', 15169);
    expect(answer.json()).toHaveProperty('security.is_hosting', true);

    const id = key.split('_')[1]!;
    const revoked = await browser.post(`/dashboard/keys/${id}/revoke`, {});
    expect(revoked).toMatchObject({ status: 303, location: '/dashboard' });
    expect((await browser.get('/dashboard')).body).toContain('is revoked');
    const refused = await ipinfo(key);
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toMatchObject({ code: 'unauthorized', details: { reason: 'revoked' } });

    const logout = await browser.post('/logout', {});
    expect(logout).toMatchObject({ status: 303, location: '/login' });
    expect(await browser.get('/dashboard')).toMatchObject({ status: 303, location: '/login' });
  });

  it('refuse a key until the address is verified, and offer the link again', async () => {
    const browser = client();
    await signUp(browser, 'bo@example.org');
    await mails(1);
    await browser.get('/login');
    expect((await browser.post('/login', { email: 'bo@example.org', password: PASSWORD })).status).toBe(303);
    const dashboard = await browser.get('/dashboard');
    expect(dashboard.body).toContain('Verify your e-mail address to make API keys');
    expect(dashboard.body).not.toContain('Create key');
    const refused = await browser.post('/dashboard/keys', { label: 'x' });
    expect(refused.status).toBe(403);
    expect(await setup.accounts.keysOf((await setup.accounts.byEmail('bo@example.org'))!.id)).toEqual([]);
    expect((await browser.post('/verify/resend', {})).status).toBe(303);
    const sent = await mails(2);
    expect(linkIn(sent[1]!.text, 'verify')).not.toBe(linkIn(sent[0]!.text, 'verify'));
  });

  it('take a signed-in account from its verification link to the dashboard, with a confirmation there', async () => {
    const browser = client();
    await signUp(browser, 'cy@example.org');
    const path = linkIn((await mails(1))[0]!.text, 'verify');
    await browser.get('/login');
    expect((await browser.post('/login', { email: 'cy@example.org', password: PASSWORD })).status).toBe(303);
    expect(browser.cookies.size).toBeGreaterThan(0);
    await browser.get(path);
    const verified = await browser.post('/verify', { token: path.split('/').at(-1)! });
    expect(verified).toMatchObject({ status: 303, location: '/dashboard' });
    const dashboard = await browser.get('/dashboard');
    expect(dashboard.status).toBe(200);
    expect(dashboard.body).toContain('Your e-mail address is verified. You can make API keys now.');
    expect(dashboard.body).toContain('Create key');
    expect(dashboard.body).not.toContain('Verify your e-mail address to make API keys');
    // The confirmation is shown once.
    expect((await browser.get('/dashboard')).body).not.toContain('Your e-mail address is verified');
    // Signed in as another account, the link verifies its own account and asks for its log-in.
    const other = client('192.0.2.11');
    await signUp(other, 'di@example.org');
    const otherPath = linkIn((await mails(2))[1]!.text, 'verify');
    await browser.get(otherPath);
    expect(await browser.post('/verify', { token: otherPath.split('/').at(-1)! })).toMatchObject({ status: 303, location: '/login' });
    expect((await setup.accounts.byEmail('di@example.org'))!.email_verified_at).not.toBeNull();
  });

  it('say what is wrong with a field next to it, keeping what was typed', async () => {
    const browser = client();
    await browser.get('/signup');
    const page = await browser.post('/signup', { email: 'not-an-address', password: 'short' });
    expect(page.status).toBe(400);
    expect(page.body).toContain('value="not-an-address"');
    expect(page.body).toMatch(/aria-invalid="true"[^>]*>\s*<p class="field-error" id="field-email-error">Enter an e-mail address/);
    expect(page.body).toContain('id="field-password-error">A password must be 10 to 256 bytes long');
    const nul = await browser.post('/signup', { email: 'nul@example.org', password: 'pass phrase\0' });
    expect(nul.status).toBe(400);
    expect(nul.body).toContain('id="field-password-error">A password cannot contain the NUL character (U+0000)');
    expect(await mailCount()).toBe(0);
  });

  it('let a person delete the account: its keys are refused at once and the session ends', async () => {
    const browser = await verifiedAccount();
    const { key } = await makeKey(browser, 'doomed');
    expect((await ipinfo(key)).statusCode).toBe(200);
    await browser.get('/account/delete');
    expect((await browser.post('/account/delete', { password: 'not the password' })).status).toBe(403);
    expect(await setup.accounts.byEmail('ada@example.org')).not.toBeNull();
    const deleted = await browser.post('/account/delete', { password: PASSWORD });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toContain('Account deleted');
    expect(await setup.accounts.byEmail('ada@example.org')).toBeNull();
    expect(await refusedWithin(key)).toBeLessThan(1100);
    expect(await browser.get('/dashboard')).toMatchObject({ status: 303, location: '/login' });
  });

  it('delete the account once when the form is sent twice at once: both answers say it is deleted, none is an error page', async () => {
    const browser = await verifiedAccount();
    await browser.get('/account/delete');
    const pages = await Promise.all([1, 2, 3].map(() => browser.post('/account/delete', { password: PASSWORD })));
    for (const page of pages) expect(page.status === 200 ? page.body : page).toEqual(page.status === 200 ? expect.stringContaining('Account deleted') : { status: 303, location: '/login' });
    expect(pages.some((page) => page.status === 200)).toBe(true);
    expect(await setup.accounts.byEmail('ada@example.org')).toBeNull();
  });

  it("revoke only the account's own keys", async () => {
    const ada = await verifiedAccount('ada@example.org', '192.0.2.10');
    const bo = await verifiedAccount('bo@example.org', '192.0.2.11');
    const { key } = await makeKey(ada, 'ada');
    await bo.get('/dashboard');
    const attempt = await bo.post(`/dashboard/keys/${key.split('_')[1]}/revoke`, {});
    expect(attempt.status).toBe(404);
    expect((await ipinfo(key)).statusCode).toBe(200);
  });

  it('end the sessions of an account the operator disables', async () => {
    const browser = await verifiedAccount();
    const { key } = await makeKey(browser, 'k');
    await setup.accounts.disable((await setup.accounts.byEmail('ada@example.org'))!.id);
    expect(await browser.get('/dashboard')).toMatchObject({ status: 303, location: '/login' });
    expect(await refusedWithin(key)).toBeLessThan(1100);
    await browser.get('/login');
    const login = await browser.post('/login', { email: 'ada@example.org', password: PASSWORD });
    expect(login.status).toBe(403);
    expect(login.body).toContain('disabled');
  });
});

describe('forgotten password', () => {
  it('mails a one-hour, single-use link; the new password works, the old does not, other sessions end', async () => {
    const other = await verifiedAccount();
    const browser = client('192.0.2.20');
    await browser.get('/forgot');
    const asked = await browser.post('/forgot', { email: 'ada@example.org' });
    expect(asked.body).toContain('If <strong>ada@example.org</strong> has an account');
    const mail = (await mails(2))[1]!;
    expect(mail.subject).toBe('Choose a new netintel password');
    const path = linkIn(mail.text, 'reset');
    const token = path.split('/').at(-1)!;
    await browser.get(path);
    // A refused password does not spend the link.
    expect((await browser.post('/reset', { token, password: 'short' })).status).toBe(400);
    const reset = await browser.post('/reset', { token, password: 'a brand new passphrase' });
    expect(reset).toMatchObject({ status: 303, location: '/login' });
    expect(await other.get('/dashboard')).toMatchObject({ status: 303, location: '/login' });
    await browser.get('/login');
    expect((await browser.post('/login', { email: 'ada@example.org', password: PASSWORD })).status).toBe(401);
    expect((await browser.post('/login', { email: 'ada@example.org', password: 'a brand new passphrase' })).status).toBe(303);
    // Used once: the same link again does nothing.
    const again = client('192.0.2.21');
    const opened = await again.get(path);
    expect(opened.status).toBe(400);
    expect(opened.body).toContain('This link does not work any more');
    await again.get('/forgot');
    const reused = await again.post('/reset', { token, password: 'yet another passphrase' });
    expect(reused.status).toBe(400);
    expect(reused.body).toContain('This link does not work any more');
  });

  it('expires reset links after an hour and verification links after a day', async () => {
    const browser = client();
    await signUp(browser, 'ada@example.org');
    const verify = linkIn((await mails(1))[0]!.text, 'verify');
    await browser.get('/forgot');
    await browser.post('/forgot', { email: 'ada@example.org' });
    const reset = linkIn((await mails(2))[1]!.text, 'reset');
    setup.server.clock.advance(3_600_000);
    await browser.get(reset);
    expect((await browser.post('/reset', { token: reset.split('/').at(-1)!, password: 'a brand new passphrase' })).status).toBe(400);
    setup.server.clock.advance(23 * 3_600_000 - 1);
    await browser.get(verify);
    // One millisecond before the day is out, the link still works; the reset link did not.
    expect((await browser.post('/verify', { token: verify.split('/').at(-1)! })).status).toBe(303);
  });

  it('refuses a verification link a day old', async () => {
    const browser = client();
    await signUp(browser, 'ada@example.org');
    const verify = linkIn((await mails(1))[0]!.text, 'verify');
    setup.server.clock.advance(24 * 3_600_000);
    await browser.get(verify);
    const page = await browser.post('/verify', { token: verify.split('/').at(-1)! });
    expect(page.status).toBe(400);
    expect(page.body).toContain('This link does not work any more');
    expect((await setup.accounts.byEmail('ada@example.org'))!.email_verified_at).toBeNull();
  });
});

describe('no account enumeration', () => {
  const withoutToken = (body: string) => body.replace(/name="_csrf" value="[^"]+"/g, '');

  it('sign-up answers a taken address as a new one, and mails its holder instead', async () => {
    await verifiedAccount();
    const fresh = await signUp(client('192.0.2.30'), 'new@example.org');
    const taken = await signUp(client('192.0.2.31'), 'ada@example.org');
    expect(taken.status).toBe(fresh.status);
    expect(withoutToken(taken.body)).toBe(withoutToken(fresh.body).replace('new@example.org', 'ada@example.org'));
    const sent = await mails(3);
    expect(sent.find((mail) => mail.to === 'ada@example.org' && mail.subject === 'You already have a netintel account')).toBeDefined();
    expect(sent.find((mail) => mail.to === 'new@example.org' && mail.subject.startsWith('Verify'))).toBeDefined();
  });

  it('the reset form answers known and unknown addresses alike, and mails only the known', async () => {
    await verifiedAccount();
    const known = client('192.0.2.40');
    const unknown = client('192.0.2.41');
    await known.get('/forgot');
    await unknown.get('/forgot');
    const a = await known.post('/forgot', { email: 'ada@example.org' });
    const b = await unknown.post('/forgot', { email: 'nobody@example.org' });
    expect(a.status).toBe(b.status);
    expect(withoutToken(a.body)).toBe(withoutToken(b.body).replace('nobody@example.org', 'ada@example.org'));
    const sent = await mails(2);
    expect(await mailCount()).toBe(2);
    expect(sent.map((mail) => mail.to)).toEqual(['ada@example.org', 'ada@example.org']);
  });

  it('a wrong password and an unknown address get the same answer in the same time, within noise', async () => {
    await verifiedAccount();
    const attempt = async (email: string, address: string) => {
      const browser = client(address);
      await browser.get('/login');
      const started = performance.now();
      const page = await browser.post('/login', { email, password: 'wrong password here' });
      return { ms: performance.now() - started, page };
    };
    const known: number[] = [];
    const unknown: number[] = [];
    for (let round = 0; round < 8; round++) {
      // Each attempt from its own address and for its own account name, so no throttle is reached.
      const a = await attempt('ada@example.org', `198.51.100.${round * 2}`);
      const b = await attempt(`nobody${round}@example.org`, `198.51.100.${round * 2 + 1}`);
      expect(a.page.status).toBe(401);
      expect(b.page.status).toBe(401);
      expect(withoutToken(b.page.body).replace(`nobody${round}@example.org`, 'ada@example.org')).toBe(withoutToken(a.page.body));
      known.push(a.ms);
      unknown.push(b.ms);
      // The failures of the known address refill before the throttle is reached.
      setup.server.clock.advance(300_000);
    }
    const median = (values: number[]) => [...values].sort((x, y) => x - y)[values.length >> 1]!;
    const ratio = median(known) / median(unknown);
    // Both paths run one scrypt of the same cost; a missing dummy hash would make this ratio tens of times 1.
    expect(ratio).toBeGreaterThan(0.6);
    expect(ratio).toBeLessThan(1.67);
  });
});

describe('throttles', () => {
  async function wrongPasswords(email: string, clients: string[]): Promise<number[]> {
    const statuses: number[] = [];
    for (const address of clients) {
      const browser = client(address);
      await browser.get('/login');
      statuses.push((await browser.post('/login', { email, password: 'wrong password here' })).status);
    }
    return statuses;
  }

  it('refuse a client after five wrong passwords for one address, the right one too, and for unknown addresses alike', async () => {
    await verifiedAccount('ada@example.org', '192.0.2.200');
    for (const email of ['ada@example.org', 'nobody@example.org']) {
      const browser = client('203.0.113.1');
      await browser.get('/login');
      for (let attempt = 0; attempt < THROTTLES.signInByAddressAndClient.burst; attempt++) {
        expect((await browser.post('/login', { email, password: 'wrong password here' })).status).toBe(401);
      }
      const refused = await browser.post('/login', { email, password: PASSWORD });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.body).toContain('Too many attempts');
      setup.server.clock.advance(24 * 3_600_000);
    }
  });

  it('refuse one client address after ten wrong passwords, whatever addresses it types', async () => {
    const browser = client('203.0.113.7');
    await browser.get('/login');
    for (let attempt = 0; attempt < THROTTLES.signInByClient.burst; attempt++) {
      expect((await browser.post('/login', { email: `guess${attempt}@example.org`, password: 'wrong password here' })).status).toBe(401);
    }
    expect((await browser.post('/login', { email: 'another@example.org', password: 'wrong password here' })).status).toBe(429);
    // Another client is not affected.
    const other = client('203.0.113.8');
    await other.get('/login');
    expect((await other.post('/login', { email: 'another@example.org', password: 'wrong password here' })).status).toBe(401);
  });

  it('count an IPv6 client by its /64, as the API counts callers: rotating through it passes no throttle', async () => {
    const statuses: number[] = [];
    for (let index = 1; index <= 3 * THROTTLES.signUpsByClient.burst; index++) {
      const browser = client(`2001:db8:77:1::${index.toString(16)}`);
      statuses.push((await signUp(browser, `rotating${index}@example.org`)).status);
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(THROTTLES.signUpsByClient.burst);
    expect(statuses.slice(THROTTLES.signUpsByClient.burst).every((status) => status === 429)).toBe(true);
    // Another /64 is another client.
    expect((await signUp(client('2001:db8:77:2::1'), 'next-net@example.org')).status).toBe(200);
  });

  it('let a stolen session guess the current password no faster than the log-in form (five from one client)', async () => {
    const owner = await verifiedAccount('ada@example.org', '192.0.2.10');
    await owner.get('/dashboard');
    const thief = client('203.0.113.66');
    for (const [name, value] of owner.cookies) if (!name.endsWith('netintel-device')) thief.cookies.set(name, value);
    await thief.get('/dashboard');
    const guesses = await Promise.all(
      Array.from({ length: 3 * THROTTLES.signInByAddressAndClient.burst }, (_, index) => thief.post('/account/password', { current: `guess number ${index}`, password: 'a brand new passphrase' })),
    );
    const statuses = guesses.map((page) => page.status);
    expect(statuses.filter((status) => status === 403)).toHaveLength(THROTTLES.signInByAddressAndClient.burst);
    expect(statuses.filter((status) => status === 429)).toHaveLength(2 * THROTTLES.signInByAddressAndClient.burst);
    // The delete form's password counts against the same throttles.
    await thief.get('/account/delete');
    expect((await thief.post('/account/delete', { password: 'one more guess' })).status).toBe(429);
  });

  it('give the attempts back when the password is right, so the owner never uses up a throttle', async () => {
    const browser = await verifiedAccount('ada@example.org', '203.0.113.9');
    for (let round = 0; round < THROTTLES.signInByClient.burst * 2; round++) {
      await browser.get('/dashboard');
      expect((await browser.post('/logout', {})).status).toBe(303);
      await browser.get('/login');
      expect((await browser.post('/login', { email: 'ada@example.org', password: PASSWORD })).status).toBe(303);
    }
  });

  it('let failures from elsewhere not block a browser that signed in to the account before (device cookie)', async () => {
    const owner = await verifiedAccount('ada@example.org', '192.0.2.10');
    await owner.get('/dashboard');
    expect((await owner.post('/logout', {})).status).toBe(303);
    const attackers = Array.from({ length: 20 }, (_, index) => `198.51.100.${index + 1}`);
    const statuses = await wrongPasswords('ada@example.org', attackers);
    // Exactly the per-address budget was checked; then every stranger is refused, the owner on a new browser too.
    expect(statuses.filter((status) => status === 401)).toHaveLength(THROTTLES.signInByAddress.burst);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20 - THROTTLES.signInByAddress.burst);
    const newBrowser = client('192.0.2.77');
    await newBrowser.get('/login');
    expect((await newBrowser.post('/login', { email: 'ada@example.org', password: PASSWORD })).status).toBe(429);
    // The owner's own browser still signs in, and still gets a reset link.
    await owner.get('/login');
    expect((await owner.post('/login', { email: 'ada@example.org', password: PASSWORD })).status).toBe(303);
    const before = await mailCount();
    await owner.get('/forgot');
    expect((await owner.post('/forgot', { email: 'ada@example.org' })).status).toBe(200);
    const sent = await mails(before + 1);
    expect(sent.at(-1)!.subject).toBe('Choose a new netintel password');
  });

  it('do not trust a device cookie signed by anyone else, or one of another account', async () => {
    await verifiedAccount('ada@example.org', '192.0.2.10');
    const bo = await verifiedAccount('bo@example.org', '192.0.2.11');
    await bo.get('/dashboard');
    expect((await bo.post('/logout', {})).status).toBe(303);
    await wrongPasswords('ada@example.org', Array.from({ length: THROTTLES.signInByAddress.burst }, (_, index) => `198.51.100.${index + 1}`));
    // Bo's device cookie names Bo's account: for Ada's address it is a stranger's browser.
    await bo.get('/login');
    expect((await bo.post('/login', { email: 'ada@example.org', password: PASSWORD })).status).toBe(429);
    const forged = client('192.0.2.12');
    const [name, value] = [...bo.cookies].find(([cookie]) => cookie.endsWith('netintel-device'))!;
    const ada = (await setup.accounts.byEmail('ada@example.org'))!;
    forged.cookies.set(name, value.replace(/^[a-z2-7]{12}/, ada.id));
    await forged.get('/login');
    expect((await forged.post('/login', { email: 'ada@example.org', password: PASSWORD })).status).toBe(429);
  });

  it('limit the mail one mailbox is sent however its local part is spelled', async () => {
    const spellings = ['victim2', 'VICTIM2', 'Victim2', 'vIcTiM2', 'victiM2', 'VICtim2', 'vicTIM2'];
    const statuses: number[] = [];
    for (const [index, local] of spellings.entries()) {
      const browser = client(`203.0.113.${100 + index}`);
      await browser.get('/forgot');
      statuses.push((await browser.post('/forgot', { email: `${local}@example.org` })).status);
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(THROTTLES.mailByAddress.burst);
    expect(statuses.slice(THROTTLES.mailByAddress.burst).every((status) => status === 429)).toBe(true);
  });

  it('limit the mail one address can be sent through the forms, and say that the newest message holds the link', async () => {
    for (let attempt = 0; attempt < THROTTLES.mailByAddress.burst; attempt++) {
      const browser = client(`203.0.113.${50 + attempt}`);
      await browser.get('/forgot');
      expect((await browser.post('/forgot', { email: 'victim@example.org' })).status).toBe(200);
    }
    const browser = client('203.0.113.60');
    await browser.get('/signup');
    const refused = await browser.post('/signup', { email: 'victim@example.org', password: PASSWORD });
    expect(refused.status).toBe(429);
    expect(refused.body).toContain('Use the newest one in your mailbox');
  });
});

describe('sessions end on the server', () => {
  /** A copy of the browser's cookies, as someone who took them would keep them. */
  const copyOf = (browser: PageClient): PageClient => {
    const copy = client('192.0.2.99');
    for (const [name, value] of browser.cookies) copy.cookies.set(name, value);
    return copy;
  };

  it('logging out ends the session for every copy of the cookie', async () => {
    const browser = await verifiedAccount();
    const stolen = copyOf(browser);
    expect((await stolen.get('/dashboard')).status).toBe(200);
    await browser.get('/dashboard');
    expect((await browser.post('/logout', {})).status).toBe(303);
    expect(await stolen.get('/dashboard')).toMatchObject({ status: 303, location: '/login' });
  });

  it('"log out everywhere" ends every session of the account', async () => {
    const first = await verifiedAccount();
    const second = client('192.0.2.50');
    await second.get('/login');
    expect((await second.post('/login', { email: 'ada@example.org', password: PASSWORD })).status).toBe(303);
    const stolen = copyOf(second);
    const dashboard = await first.get('/dashboard');
    expect(dashboard.body).toContain('2 sessions are open');
    expect(await first.post('/logout/everywhere', {})).toMatchObject({ status: 303, location: '/login' });
    expect((await first.get('/login')).body).toContain('logged out everywhere (2 sessions)');
    for (const browser of [first, second, stolen]) expect(await browser.get('/dashboard')).toMatchObject({ status: 303, location: '/login' });
  });

  it('a password change keeps this session and ends the others; the old password and old reset links stop working', async () => {
    const browser = await verifiedAccount();
    const other = client('192.0.2.51');
    await other.get('/login');
    await other.post('/login', { email: 'ada@example.org', password: PASSWORD });
    const stolen = copyOf(other);
    // A reset link asked for before the change.
    await other.get('/forgot');
    await other.post('/forgot', { email: 'ada@example.org' });
    const resetPath = linkIn((await mails(2))[1]!.text, 'reset');
    await browser.get('/dashboard');
    expect((await browser.post('/account/password', { current: 'not it at all', password: 'a brand new passphrase' })).status).toBe(403);
    const changed = await browser.post('/account/password', { current: PASSWORD, password: 'a brand new passphrase' });
    expect(changed).toMatchObject({ status: 303, location: '/dashboard' });
    expect((await browser.get('/dashboard')).body).toContain('1 other session is logged out');
    for (const gone of [other, stolen]) expect(await gone.get('/dashboard')).toMatchObject({ status: 303, location: '/login' });
    expect((await client('192.0.2.52').get(resetPath)).status).toBe(400);
    const fresh = client('192.0.2.53');
    await fresh.get('/login');
    expect((await fresh.post('/login', { email: 'ada@example.org', password: PASSWORD })).status).toBe(401);
    expect((await fresh.post('/login', { email: 'ada@example.org', password: 'a brand new passphrase' })).status).toBe(303);
  });

  it("counts password changes, so a stolen session that knows the password cannot end the owner's reset links one after another", async () => {
    const thief = await verifiedAccount();
    await thief.get('/dashboard');
    let current = PASSWORD;
    for (let change = 1; change <= THROTTLES.passwordChangesByAccount.burst; change++) {
      const next = `stolen passphrase number ${change}`;
      expect(await thief.post('/account/password', { current, password: next })).toMatchObject({ status: 303, location: '/dashboard' });
      current = next;
    }
    // The owner asks for a reset link; the next change is refused, so the link still works.
    const owner = client('198.51.100.90');
    await owner.get('/forgot');
    await owner.post('/forgot', { email: 'ada@example.org' });
    const resetPath = linkIn((await mails(2))[1]!.text, 'reset');
    await thief.get('/dashboard');
    const refused = await thief.post('/account/password', { current, password: 'one more stolen passphrase' });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body).toContain('was changed several times lately');
    expect((await owner.get(resetPath)).status).toBe(200);
    expect(await owner.post('/reset', { token: resetPath.split('/').at(-1)!, password: 'the owner is back' })).toMatchObject({ status: 303, location: '/login' });
    expect(await thief.get('/dashboard')).toMatchObject({ status: 303, location: '/login' });
  });

  it('makes one change of ten sent at once from one session, and tells the others it was not made', async () => {
    const browser = await verifiedAccount();
    await browser.get('/dashboard');
    const pages = await Promise.all(Array.from({ length: 10 }, (_, i) => browser.post('/account/password', { current: PASSWORD, password: `burst passphrase ${i}` })));
    const made = pages.flatMap((page, i) => (page.status === 303 && page.location === '/dashboard' ? [i] : []));
    expect(made).toHaveLength(1);
    // The others: not made (409), or refused by the change throttle before any work (429); never "changed".
    expect(pages.filter((page) => page.status === 409 || page.status === 429)).toHaveLength(9);
    const fresh = client('192.0.2.54');
    await fresh.get('/login');
    expect((await fresh.post('/login', { email: 'ada@example.org', password: `burst passphrase ${made[0]}` })).status).toBe(303);
  });

  it('a session expires on the server after seven days, whatever the cookie says', async () => {
    const browser = await verifiedAccount();
    setup.server.clock.advance(7 * 24 * 3_600_000 - 1000);
    expect((await browser.get('/dashboard')).status).toBe(200);
    setup.server.clock.advance(1000);
    expect(await browser.get('/dashboard')).toMatchObject({ status: 303, location: '/login' });
  });
});

describe('links', () => {
  it('only the newest reset link works, and using it ends the older ones', async () => {
    await verifiedAccount();
    const browser = client('192.0.2.60');
    await browser.get('/forgot');
    await browser.post('/forgot', { email: 'ada@example.org' });
    const first = linkIn((await mails(2))[1]!.text, 'reset');
    await browser.get('/forgot');
    await browser.post('/forgot', { email: 'ada@example.org' });
    const second = linkIn((await mails(3))[2]!.text, 'reset');
    await browser.get(first);
    expect((await browser.post('/reset', { token: first.split('/').at(-1)!, password: 'a brand new passphrase' })).status).toBe(400);
    await browser.get(second);
    expect((await browser.post('/reset', { token: second.split('/').at(-1)!, password: 'a brand new passphrase' })).status).toBe(303);
    expect((await client('192.0.2.61').get(second)).status).toBe(400);
  });

  it('a new verification message ends the link of the one before', async () => {
    const browser = client();
    await signUp(browser, 'bo@example.org');
    const first = linkIn((await mails(1))[0]!.text, 'verify');
    await browser.get('/login');
    await browser.post('/login', { email: 'bo@example.org', password: PASSWORD });
    await browser.get('/dashboard');
    await browser.post('/verify/resend', {});
    const second = linkIn((await mails(2))[1]!.text, 'verify');
    expect((await browser.get(first)).status).toBe(400);
    expect((await browser.get(second)).status).toBe(200);
  });
});

describe('CSRF and sessions', () => {
  it('refuse a form without its token, with a wrong one, or with the token of another session', async () => {
    await verifiedAccount();
    const browser = client();
    await browser.get('/login');
    for (const token of ['', 'wrong-token', client().csrf]) {
      const page = await browser.post('/login', { _csrf: token, email: 'ada@example.org', password: PASSWORD });
      expect(page.status).toBe(403);
      expect(page.body).toContain('This form has expired or did not come from this site');
    }
    const stranger = client();
    await stranger.get('/login');
    const crossed = await browser.post('/login', { _csrf: stranger.csrf, email: 'ada@example.org', password: PASSWORD });
    expect(crossed.status).toBe(403);
    // A form from another site carries no session cookie at all.
    const foreign = await setup.server.app.inject({
      method: 'POST',
      url: '/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      payload: new URLSearchParams({ _csrf: browser.csrf, email: 'ada@example.org', password: PASSWORD }).toString(),
    });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.headers['set-cookie'] ?? '').not.toMatch(/netintel-session=[^;]+;/);
  });

  it('treat a tampered session cookie as no session', async () => {
    const browser = await verifiedAccount();
    expect((await browser.get('/dashboard')).status).toBe(200);
    const [name, value] = [...browser.cookies][0]!;
    const raw = decodeURIComponent(value);
    const flipped = `${raw.slice(0, 10)}${raw[10] === 'A' ? 'B' : 'A'}${raw.slice(11)}`;
    browser.cookies.set(name, encodeURIComponent(flipped));
    expect(await browser.get('/dashboard')).toMatchObject({ status: 303, location: '/login' });
  });

  it('give a new session at sign-in (a cookie planted before it is worth nothing after)', async () => {
    const planted = client();
    await planted.get('/login');
    const before = new Map(planted.cookies);
    await verifiedAccount();
    const victim = client();
    for (const [name, value] of before) victim.cookies.set(name, value);
    await victim.get('/login');
    await victim.post('/login', { email: 'ada@example.org', password: PASSWORD });
    const attacker = client();
    for (const [name, value] of before) attacker.cookies.set(name, value);
    expect(await attacker.get('/dashboard')).toMatchObject({ status: 303, location: '/login' });
  });

  it('set HttpOnly, SameSite=Lax cookies and the security headers; never cached', async () => {
    const page = await client().get('/signup');
    expect(String(page.headers['set-cookie'])).toMatch(/^netintel-session=[^;]+; Max-Age=604800; Path=\/; HttpOnly; SameSite=Lax$/);
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['content-security-policy']).not.toContain('upgrade-insecure-requests');
    expect(page.headers['strict-transport-security']).toBeUndefined();
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['cache-control']).toBe('no-store');
  });

  it('behind https: Secure, __Host- cookies, HSTS and upgrade-insecure-requests', async () => {
    await setup.server.close();
    setup = await start({ publicUrl: 'https://netintel.example' });
    const page = await client().get('/signup');
    expect(String(page.headers['set-cookie'])).toMatch(/^__Host-netintel-session=[^;]+; Max-Age=604800; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
    expect(page.headers['strict-transport-security']).toBe('max-age=15552000');
    expect(page.headers['content-security-policy']).toContain('upgrade-insecure-requests');
  });
});

describe('hostile input', () => {
  it('a label is shown as text, never as markup', async () => {
    const browser = await verifiedAccount();
    const { page } = await makeKey(browser, '<script>alert(1)</script>"\'&');
    expect(page).not.toContain('<script>alert(1)');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;');
  });

  it('no form body makes a page fail: every answer is a page, never a 5xx', async () => {
    const browser = await verifiedAccount();
    const routes = ['/signup', '/login', '/forgot', '/verify', '/reset', '/dashboard/keys', '/verify/resend', '/account/delete'];
    const value = fc.oneof(fc.string({ maxLength: 300 }), fc.constant('x'.repeat(5000)), fc.string({ unit: 'grapheme', maxLength: 40 }));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), fc.dictionary(fc.constantFrom('email', 'password', 'token', 'label', 'other', 'email[]'), value), fc.boolean(), async (route, fields, repeat) => {
        const form = new URLSearchParams({ _csrf: browser.csrf, ...fields });
        if (repeat) form.append('email', 'twice@example.org');
        const answer = await setup.server.app.inject({
          method: 'POST',
          url: route,
          headers: { cookie: browser.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '192.0.2.10' },
          payload: form.toString(),
        });
        expect(answer.statusCode).toBeLessThan(500);
        if (answer.statusCode !== 303) expect(answer.headers['content-type']).toBe('text/html; charset=utf-8');
      }),
      { numRuns: 60 },
    );
  });

  it('bodies the forms do not take get a page: JSON, a body too large, an unknown media type', async () => {
    await client().get('/login');
    const cases = [
      { headers: { 'content-type': 'application/json' }, payload: '{"email":"a@b.c"}', status: 415 },
      { headers: { 'content-type': 'text/plain' }, payload: 'email=a@b.c', status: 415 },
      { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `email=${'a'.repeat(20_000)}`, status: 413 },
      { headers: { 'content-type': 'text/xml' }, payload: '<a/>', status: 415 },
    ];
    for (const { headers, payload, status } of cases) {
      const answer = await setup.server.app.inject({ method: 'POST', url: '/login', headers, payload });
      expect(answer.statusCode).toBe(status);
      expect(answer.headers['content-type']).toBe('text/html; charset=utf-8');
    }
  });
});

describe('without the pages', () => {
  it('a server built without accountPages answers /signup 404 as any unknown path', async () => {
    const bare = await startTestServer({ checkContract: false });
    try {
      const answer = await bare.app.inject({ url: '/signup' });
      expect(answer.statusCode).toBe(404);
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    } finally {
      await bare.close();
    }
  });
});
