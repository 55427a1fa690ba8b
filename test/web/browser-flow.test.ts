/**
 * The account pages as a person uses them: Debian's chromium (through
 * playwright-core) against a real `netintel serve` process that sends its
 * mail to a real SMTP receiver. Everything is done through the page: fields
 * found by their labels, buttons by their names, links taken from the mail.
 *
 * Screenshots go to test-artifacts/screenshots/accounts-*.png.
 */
import { simpleParser, type ParsedMail } from 'mailparser';
import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRelay, type TestRelay } from '../accounts/relay.js';
import { findChromium, launchBrowser, screenshotPath } from '../support/browser.js';
import { tempDir } from '../support/cli.js';
import { serve, type Served } from '../support/served.js';

const chromiumProgram = findChromium();
if (chromiumProgram === null) console.warn('SKIPPING test/web/browser-flow.test.ts: chromium not found on PATH or at /usr/bin/chromium (Debian package chromium)');

const DESKTOP = { viewport: { width: 1000, height: 800 } };
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };
/** The promise: from the sign-up page to a working key in under a minute. */
const SIGN_UP_TO_API_MS = 60_000;
const MAIL_WAIT_MS = 15_000;

let relay: TestRelay;
let served: Served;
let browser: Browser;
let dataDir: ReturnType<typeof tempDir>;

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: screenshotPath(`accounts-${name}`), fullPage: true });
}

/** The first message to `to` with `subject` among those the relay took after the first `seen`. */
async function mailAfter(seen: number, to: string, subject: string): Promise<ParsedMail> {
  const deadline = Date.now() + MAIL_WAIT_MS;
  let checked = seen;
  while (Date.now() < deadline) {
    for (; checked < relay.received.length; checked++) {
      const mail = relay.received[checked]!;
      if (!mail.to.includes(to)) continue;
      const parsed = await simpleParser(mail.raw);
      if (parsed.subject === subject) return parsed;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no mail "${subject}" to ${to} within ${MAIL_WAIT_MS} ms; the relay took ${relay.received.length - seen}; server log:\n${served.stderr()}`);
}

/** The one link to `path`/<token> in the text of a message, as a person would copy it. */
function linkIn(mail: ParsedMail, path: 'verify' | 'reset'): string {
  const text = mail.text ?? '';
  const links = text.match(new RegExp(`${served.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/${path}/\\S+`, 'g')) ?? [];
  expect(links, text).toHaveLength(1);
  return links[0]!;
}

/** Runs `act` and gives the answer to the form it posts (before any redirect is followed). */
async function submit(page: Page, act: () => Promise<void>): Promise<Response> {
  const answer = page.waitForEvent('response', { predicate: (response) => response.request().isNavigationRequest() && response.request().method() === 'POST' });
  await act();
  return answer;
}

async function heading(page: Page, name: string): Promise<void> {
  await page.getByRole('heading', { level: 1, name, exact: true }).waitFor();
}

function path(page: Page): string {
  return new URL(page.url()).pathname;
}

/** Every visible form field has a label, and getByLabel with that label's text finds the field. */
async function expectEveryFieldLabelled(page: Page): Promise<void> {
  const fields = await page.locator('input:not([type=hidden]), select, textarea').all();
  expect(fields.length).toBeGreaterThan(0);
  for (const field of fields) {
    const { id, labels } = await field.evaluate((element) => ({
      id: element.id,
      // The label's own words, without the hint inside it.
      labels: [...((element as HTMLInputElement).labels ?? [])].map((label) => (label.firstChild?.textContent ?? '').trim()),
    }));
    expect(labels, `${id} has a label`).toHaveLength(1);
    expect(labels[0], `${id} label text`).not.toBe('');
    const found = await page.getByLabel(labels[0]!).evaluateAll((elements) => elements.map((element) => element.id));
    expect(found, `getByLabel(${JSON.stringify(labels[0])})`).toContain(id);
  }
}

async function expectNoSideScroll(page: Page): Promise<void> {
  const { scrollWidth, clientWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth }));
  expect(scrollWidth, `page ${path(page)} is ${scrollWidth} px wide in a ${clientWidth} px window`).toBeLessThanOrEqual(clientWidth);
}

/** What has the keyboard focus, in words: `input#field-email`, `button "Log in"`, `a "Sign up"`. */
async function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const element = document.activeElement;
    if (element === null || element === document.body) return 'body';
    const tag = element.tagName.toLowerCase();
    return tag === 'input' ? `input#${element.id}` : `${tag} "${(element.textContent ?? '').trim()}"`;
  });
}

/** The focus stops from the top of the page, pressing Tab, up to and including `last` (at most `limit` presses). */
async function tabStops(page: Page, last: string, limit = 15): Promise<string[]> {
  // A click on the empty top-left corner puts the start of keyboard navigation at the top of the page.
  await page.mouse.click(1, 1);
  const stops: string[] = [];
  while (stops.length < limit && stops.at(-1) !== last) {
    await page.keyboard.press('Tab');
    stops.push(await focused(page));
  }
  return stops;
}

async function signUp(page: Page, email: string, password: string): Promise<void> {
  await page.goto(`${served.url}/signup`);
  await heading(page, 'Create a free account');
  await page.getByLabel('E-mail address', { exact: true }).fill(email);
  await page.getByLabel('Password').fill(password);
  const answer = await submit(page, () => page.getByRole('button', { name: 'Create account' }).click());
  expect(answer.status()).toBe(200);
  await heading(page, 'Check your e-mail');
  expect(await page.locator('main').textContent()).toContain(email);
}

async function verifyFromMail(page: Page, link: string): Promise<void> {
  const opened = await page.goto(link);
  expect(opened?.status()).toBe(200);
  await heading(page, 'Verify your e-mail address');
}

async function pressVerify(page: Page): Promise<void> {
  const answer = await submit(page, () => page.getByRole('button', { name: 'Verify my address' }).click());
  expect(answer.status()).toBe(303);
  await heading(page, 'Log in');
  expect(path(page)).toBe('/login');
  expect(await page.getByRole('status').textContent()).toContain('Your e-mail address is verified');
}

async function logIn(page: Page, email: string, password: string): Promise<Response> {
  await page.getByLabel('E-mail address', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  return submit(page, () => page.getByRole('button', { name: 'Log in', exact: true }).click());
}

async function ipinfo(key: string): Promise<globalThis.Response> {
  return fetch(`${served.url}/api/ipinfo?ip=8.8.8.8`, { headers: { 'X-API-Key': key } });
}

describe.skipIf(chromiumProgram === null)('account pages in chromium, mail through a real SMTP relay', () => {
  beforeAll(async () => {
    relay = await startTestRelay({ plain: true });
    dataDir = tempDir('netintel-browser-');
    served = await serve(['--smtp-url', `smtp://127.0.0.1:${relay.port}`, '--mail-from', 'netintel <accounts@example.test>'], { XDG_DATA_HOME: dataDir.path });
    browser = await launchBrowser();
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    if (served) {
      served.child.kill('SIGTERM');
      await served.exit;
    }
    await relay?.close();
    dataDir?.remove();
  });

  it('signs up, verifies by the mailed link, logs in by keyboard, makes a key that works, revokes it and logs out', async () => {
    const email = 'ada@example.test';
    const password = 'a long walk in the hills 42';

    // The sign-up page on a phone, before the flow starts.
    const phone = await browser.newContext(PHONE);
    try {
      const page = await phone.newPage();
      await page.goto(`${served.url}/signup`);
      await heading(page, 'Create a free account');
      await expectNoSideScroll(page);
      await shoot(page, 'signup-phone');
    } finally {
      await phone.close();
    }

    const desktop = await browser.newContext({ ...DESKTOP, permissions: ['clipboard-read', 'clipboard-write'] });
    let context: BrowserContext | undefined;
    try {
      const page = await desktop.newPage();
      const started = performance.now();

      // 1. Sign up.
      await page.goto(`${served.url}/signup`);
      await heading(page, 'Create a free account');
      await expectEveryFieldLabelled(page);
      expect(await focused(page), 'the e-mail field has the focus when the page opens').toBe('input#field-email');
      await shoot(page, 'signup');
      const seen = relay.received.length;
      await page.getByLabel('E-mail address', { exact: true }).fill(email);
      await page.getByLabel('Password').fill(password);
      const signedUp = await submit(page, () => page.getByRole('button', { name: 'Create account' }).click());
      expect(signedUp.status()).toBe(200);
      await heading(page, 'Check your e-mail');
      expect(await page.locator('main').textContent()).toContain(email);
      await shoot(page, 'check-mail');

      // 2. The verification mail, its link opened in the browser, the button pressed.
      const mail = await mailAfter(seen, email, 'Verify your e-mail address for netintel');
      expect(mail.from?.value).toEqual([{ name: 'netintel', address: 'accounts@example.test' }]);
      const link = linkIn(mail, 'verify');
      await verifyFromMail(page, link);
      await shoot(page, 'verify');
      await pressVerify(page);
      await shoot(page, 'login');

      // 3. Log in with the keyboard alone: Tab from the top reaches e-mail, password and the button in that order.
      await expectEveryFieldLabelled(page);
      const stops = await tabStops(page, 'button "Log in"');
      const emailStop = stops.indexOf('input#field-email');
      expect(emailStop, `focus stops: ${stops.join(', ')}`).toBeGreaterThanOrEqual(0);
      expect(stops.slice(emailStop), `focus stops: ${stops.join(', ')}`).toEqual(['input#field-email', 'input#field-password', 'button "Log in"']);
      await page.mouse.click(1, 1);
      for (let press = 0; press <= emailStop; press++) await page.keyboard.press('Tab');
      expect(await focused(page)).toBe('input#field-email');
      await page.keyboard.type(email);
      await page.keyboard.press('Tab');
      await page.keyboard.type(password);
      const loggedIn = await submit(page, () => page.keyboard.press('Enter'));
      expect(loggedIn.status()).toBe(303);
      await heading(page, 'Dashboard');
      expect(path(page)).toBe('/dashboard');
      expect(await page.locator('dt:text-is("Plan") + dd').textContent()).toContain('Free account');
      expect(await page.locator('dt:text-is("E-mail") + dd').textContent()).toBe(`${email} (verified)`);

      // A key with a label, read from the page where it is shown once.
      await expectEveryFieldLabelled(page);
      await page.getByLabel('Label for a new key').fill('laptop');
      const created = await submit(page, () => page.getByRole('button', { name: 'Create key' }).click());
      expect(created.status()).toBe(201);
      await page.getByRole('heading', { name: 'Your new key “laptop”' }).waitFor();
      const key = ((await page.locator('code#new-key-value').textContent()) ?? '').trim();
      expect(key).not.toBe('');
      expect(await page.locator('#curl-example').textContent()).toContain(key);
      await shoot(page, 'dashboard-new-key');
      // The copy button puts the key on the clipboard (http://127.0.0.1 is a secure context, so the Clipboard API is there).
      await page.getByRole('button', { name: 'Copy key' }).click();
      await page.getByRole('button', { name: 'Copied' }).waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);

      // 4. The key works, with the fields of the plan.
      const answered = await ipinfo(key);
      const elapsed = performance.now() - started;
      expect(answered.status).toBe(200);
      const info = (await answered.json()) as Record<string, unknown>;
      expect(info).toHaveProperty('network');
      expect(info).toHaveProperty('security');
      console.log(`sign-up page to first API answer with the new key: ${(elapsed / 1000).toFixed(1)} s`);
      expect(elapsed).toBeLessThan(SIGN_UP_TO_API_MS);

      // The page with the new key on a phone-wide window: the key and the example wrap.
      await page.setViewportSize(PHONE.viewport);
      await expectNoSideScroll(page);
      await shoot(page, 'dashboard-new-key-phone');
      await page.setViewportSize(DESKTOP.viewport);

      // 5. Revoke it; the API refuses it from then on.
      const revoked = await submit(page, () => page.getByRole('button', { name: /^Revoke/ }).click());
      expect(revoked.status()).toBe(303);
      await page.getByRole('status').filter({ hasText: 'is revoked' }).waitFor();
      expect(path(page)).toBe('/dashboard');
      expect(await page.getByRole('status').textContent()).toContain('“laptop”');
      expect(await page.locator('code#new-key-value').count()).toBe(0);
      expect(await page.getByRole('button', { name: /^Revoke/ }).count()).toBe(0);
      expect(await page.locator('table.keys tbody tr').textContent()).toMatch(/revoked \d{4}-\d{2}-\d{2}/);
      await shoot(page, 'dashboard-revoked');
      expect((await ipinfo(key)).status).toBe(401);

      // The same dashboard on a phone, signed in with the same cookies.
      context = await browser.newContext({ ...PHONE, storageState: await desktop.storageState() });
      const onPhone = await context.newPage();
      await onPhone.goto(`${served.url}/dashboard`);
      await heading(onPhone, 'Dashboard');
      await expectNoSideScroll(onPhone);
      await shoot(onPhone, 'dashboard-phone');
      // Stacked on a phone, the key table's header row is hidden: each cell shows its column's name from data-label.
      const columns = await onPhone.locator('table.keys thead th').evaluateAll((headers) => headers.map((header) => (header.querySelector('.visually-hidden') ? null : (header.textContent ?? '').trim())));
      const cellLabels = await onPhone.locator('table.keys tbody tr').first().locator('td').evaluateAll((cells) => cells.map((cell) => cell.getAttribute('data-label') ?? ''));
      expect(cellLabels.filter((_label, index) => columns[index] !== null), 'names beside the cells of the stacked key table').toEqual(columns.filter((column) => column !== null));

      // 6. Log out; the dashboard sends to the log-in page.
      const loggedOut = await submit(page, () => page.getByRole('button', { name: 'Log out', exact: true }).click());
      expect(loggedOut.status()).toBe(303);
      await heading(page, 'Log in');
      const again = await page.goto(`${served.url}/dashboard`);
      expect(path(page)).toBe('/login');
      const redirect = again?.request().redirectedFrom();
      expect(redirect?.url()).toBe(`${served.url}/dashboard`);
      expect((await redirect?.response())?.status()).toBe(303);
    } finally {
      await context?.close();
      await desktop.close();
    }
  }, 90_000);

  it('goes to the dashboard with a confirmation when the mailed link is pressed while signed in', async () => {
    const email = 'hedy@example.test';
    const password = 'frequency hopping since 1942';
    const desktop = await browser.newContext(DESKTOP);
    try {
      const page = await desktop.newPage();
      const seen = relay.received.length;
      await signUp(page, email, password);
      const link = linkIn(await mailAfter(seen, email, 'Verify your e-mail address for netintel'), 'verify');
      await page.goto(`${served.url}/login`);
      await heading(page, 'Log in');
      expect((await logIn(page, email, password)).status()).toBe(303);
      await heading(page, 'Dashboard');
      expect(await page.locator('dt:text-is("E-mail") + dd').textContent()).toBe(`${email} (not verified)`);

      await verifyFromMail(page, link);
      const answer = await submit(page, () => page.getByRole('button', { name: 'Verify my address' }).click());
      expect(answer.status()).toBe(303);
      await heading(page, 'Dashboard');
      expect(path(page)).toBe('/dashboard');
      expect(await page.getByRole('status').allTextContents()).toEqual([expect.stringContaining('Your e-mail address is verified. You can make API keys now.')]);
      expect(await page.locator('dt:text-is("E-mail") + dd').textContent()).toBe(`${email} (verified)`);
      await shoot(page, 'verified-signed-in');
    } finally {
      await desktop.close();
    }
  }, 60_000);

  it('sets a new password from the mailed link; the old one stops working and the link works once', async () => {
    const email = 'grace@example.test';
    const oldPassword = 'first password of grace';
    const newPassword = 'second password, much longer';
    const desktop = await browser.newContext(DESKTOP);
    try {
      const page = await desktop.newPage();
      let seen = relay.received.length;
      await signUp(page, email, oldPassword);
      await verifyFromMail(page, linkIn(await mailAfter(seen, email, 'Verify your e-mail address for netintel'), 'verify'));
      await pressVerify(page);

      // Forgotten password: the form, the mail, the link.
      await page.getByRole('link', { name: 'Forgotten your password?' }).click();
      await heading(page, 'Forgotten password');
      await expectEveryFieldLabelled(page);
      seen = relay.received.length;
      await page.getByLabel('E-mail address', { exact: true }).fill(email);
      const asked = await submit(page, () => page.getByRole('button', { name: 'Send the link' }).click());
      expect(asked.status()).toBe(200);
      await heading(page, 'Check your e-mail');
      const link = linkIn(await mailAfter(seen, email, 'Choose a new netintel password'), 'reset');

      await page.goto(link);
      await heading(page, 'Choose a new password');
      await expectEveryFieldLabelled(page);
      await page.getByLabel('New password').fill(newPassword);
      const reset = await submit(page, () => page.getByRole('button', { name: 'Set password' }).click());
      expect(reset.status()).toBe(303);
      await heading(page, 'Log in');
      expect(path(page)).toBe('/login');
      // Soft: the rest of the flow still runs when the notice is missing.
      expect(await page.getByRole('status').allTextContents(), 'the notice after a new password').toEqual([expect.stringContaining('Your password is changed')]);
      await shoot(page, 'login-after-reset');

      // The old password is refused, the new one lets in.
      const refused = await logIn(page, email, oldPassword);
      expect(refused.status()).toBe(401);
      await page.getByRole('alert').filter({ hasText: 'Wrong e-mail address or password.' }).waitFor();
      expect(path(page)).toBe('/login');
      const accepted = await logIn(page, email, newPassword);
      expect(accepted.status()).toBe(303);
      await heading(page, 'Dashboard');
      expect(await page.locator('dt:text-is("E-mail") + dd').textContent()).toBe(`${email} (verified)`);

      // The same link a second time.
      // The same link a second time: the page says so at once, before a password is typed.
      const second = await page.goto(link);
      expect(second!.status()).toBe(400);
      await heading(page, 'This link does not work any more');
      expect(await page.getByLabel('New password').count()).toBe(0);
      await shoot(page, 'reset-link-used');
    } finally {
      await desktop.close();
    }
  }, 60_000);
});
