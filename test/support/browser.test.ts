/**
 * The browser of the browser tests (test/support/browser.ts): Debian's
 * chromium, driven by playwright-core, loads a page from a local server,
 * reads it and takes a screenshot.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './cli.js';
import { findChromium, launchBrowser, screenshotPath } from './browser.js';

const chromiumProgram = findChromium();
if (chromiumProgram === null) console.warn('SKIPPING test/support/browser.test.ts: chromium not found on PATH or at /usr/bin/chromium (Debian package chromium)');

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>netintel browser check</title>
<style>body { font: 16px sans-serif; margin: 2rem; background: #f4f6fb; } h1 { color: #1d4ed8; } td { border: 1px solid #999; padding: 4px 8px; }</style>
</head><body>
<h1 id="title">Several servers, one service</h1>
<table><tr><td>8.8.8.8</td><td>AS15169</td><td>Google LLC</td></tr><tr><td>1.1.1.1</td><td>AS13335</td><td>Cloudflare</td></tr></table>
</body></html>`;

describe('findChromium', () => {
  const withPath = <T>(path: string, run: () => T): T => {
    const saved = process.env['PATH'];
    process.env['PATH'] = path;
    try {
      return run();
    } finally {
      process.env['PATH'] = saved;
    }
  };

  it('takes chromium from PATH before chromium-browser, and a launcher script as the binary it starts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'netintel-chromium-'));
    try {
      const program = (name: string, text: string) => {
        writeFileSync(join(dir, name), text);
        chmodSync(join(dir, name), 0o755);
      };
      program('chromium-browser', '\x7fELF');
      expect(withPath(dir, findChromium)).toBe(join(dir, 'chromium-browser'));
      program('chromium', '\x7fELF');
      expect(withPath(dir, findChromium)).toBe(join(dir, 'chromium'));
      program('chromium', '#!/bin/sh\nexec /usr/lib/chromium/chromium "$@"\n');
      const debianBinary = existsSync('/usr/lib/chromium/chromium');
      expect(withPath(dir, findChromium)).toBe(debianBinary ? '/usr/lib/chromium/chromium' : join(dir, 'chromium'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('screenshotPath', () => {
  it('names a PNG under test-artifacts/screenshots of the repository, and makes that directory', () => {
    const path = screenshotPath('browser-path-check');
    expect(path).toBe(join(REPO_ROOT, 'test-artifacts', 'screenshots', 'browser-path-check.png'));
    expect(statSync(dirname(path)).isDirectory()).toBe(true);
  });

  it('refuses a name that would leave that directory', () => {
    for (const name of ['../escape', 'a/b', '', '.hidden', '/etc/passwd']) expect(() => screenshotPath(name), name).toThrow(/screenshot name/);
  });

  it('is ignored by git', () => {
    expect(readFileSync(join(REPO_ROOT, '.gitignore'), 'utf8').split('\n')).toContain('test-artifacts/');
  });
});

describe.skipIf(chromiumProgram === null)('chromium through playwright-core', () => {
  let server: Server;
  let url: string;
  let browser: Browser;

  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url !== '/') {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    browser = await launchBrowser();
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  it('launches the installed chromium, not a downloaded one', () => {
    expect(chromiumProgram).not.toMatch(/ms-playwright/);
    expect(browser.isConnected()).toBe(true);
    expect(browser.version()).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  });

  it('loads a page from a local server, reads its heading and writes a PNG screenshot', async () => {
    const page = await browser.newPage({ viewport: { width: 800, height: 600 } });
    try {
      const response = await page.goto(url);
      expect(response?.status()).toBe(200);
      expect(await page.title()).toBe('netintel browser check');
      expect(await page.locator('h1').textContent()).toBe('Several servers, one service');
      expect(await page.locator('td').allTextContents()).toContain('AS15169');

      const path = screenshotPath('browser-check');
      rmSync(path, { force: true });
      await page.screenshot({ path, fullPage: false });
      const png = readFileSync(path);
      // PNG signature and the IHDR chunk's width and height (RFC 2083 §3.1, §4.1.1).
      expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
      expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([800, 600]);
      expect(png.length).toBeGreaterThan(1024);
    } finally {
      await page.close();
    }
  });
});
