/**
 * The account pages as `netintel serve` starts them: on by default with the
 * outbox as the mail route (and the log saying so), off with --no-accounts,
 * and the new options' mistakes refused in one line before anything starts.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { serve, type Served } from '../support/served.js';
import { PageClient } from './page-client.js';

let served: Served | undefined;
let dir: string | undefined;

afterEach(async () => {
  if (served && served.child.exitCode === null) {
    served.child.kill('SIGTERM');
    await served.exit;
  }
  served = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('netintel serve and its account pages', () => {
  it('serves them by default, writes mail to the outbox of the data dir, and logs where', async () => {
    dir = mkdtempSync(join(tmpdir(), 'netintel-serve-pages-'));
    served = await serve(['--data-dir', dir, '--db', join(dir, 'keys.db')]);
    const browser = new PageClient(served.url);
    const page = await browser.get('/signup');
    expect(page.status).toBe(200);
    expect(page.body).toContain('<h1>Create a free account</h1>');
    expect((await browser.post('/signup', { email: 'ada@example.org', password: 'correct horse battery' })).status).toBe(200);
    const outbox = join(dir, 'outbox');
    await expect.poll(() => { try { return readdirSync(outbox).filter((name) => name.endsWith('.eml')).length; } catch { return 0; } }).toBe(1);
    const log = served.stderr();
    expect(log).toContain(`"outbox":"${outbox}"`);
    await expect.poll(() => served!.stderr()).toContain('mail written to the outbox (no --smtp-url given)');
  });

  it('serves the API only with --no-accounts', async () => {
    dir = mkdtempSync(join(tmpdir(), 'netintel-serve-pages-'));
    served = await serve(['--no-accounts', '--db', join(dir, 'keys.db')]);
    const answer = await fetch(`${served.url}/signup`);
    expect(answer.status).toBe(404);
    expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(served.stderr()).toContain('"accounts":false');
  });

  it.each([
    [['--public-url', 'ftp://example.com'], '--public-url must be an http or https URL of a host'],
    [['--public-url', 'https://example.com/netintel'], 'without user, path, query or fragment'],
    [['--public-url', 'not a url'], '--public-url must be a URL such as https://api.example.com'],
    [['--smtp-url', 'http://relay.example.com'], 'SMTP URL'],
    [['--oidc-config', '/nonexistent/oidc.json'], '/nonexistent/oidc.json'],
  ])('refuses %j in one line with exit 2', async (args, message) => {
    dir = mkdtempSync(join(tmpdir(), 'netintel-serve-pages-'));
    const result = await runCli(['serve', '--port', '0', '--db', join(dir, 'keys.db'), ...args]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
