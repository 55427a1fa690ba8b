/**
 * dataStatus: every source with where its data is, its date, age, entries
 * and licence, and the stale verdict against the source's (or a given) age.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { dataStatus } from '../../../src/engine/data/data-status.js';
import { applySourceSettings, loadSourceRegistry, type DataSource } from '../../../src/engine/data/data-sources.js';
import { updateData } from '../../../src/engine/data/update-data.js';
import { tempDir } from '../../support/cli.js';
import { TOR_BULK } from '../security/fixtures.js';

const scratch = tempDir('netintel-status-');
afterAll(() => scratch.remove());

const NOW = new Date('2026-11-22T12:00:00Z');

describe('dataStatus', () => {
  it('lists every registry source and the curated list; a fresh data dir has bundled city/ASN data and no feeds', () => {
    const dir = join(scratch.path, 'fresh');
    const sources = loadSourceRegistry();
    const rows = dataStatus({ dataDir: dir, sources, now: NOW });
    expect(rows.map((row) => row.name)).toEqual([...sources.map((source) => source.name), 'curated-asns']);
    const byName = Object.fromEntries(rows.map((row) => [row.name, row]));
    expect(byName['dbip-city-ipv4']).toMatchObject({
      kind: 'data-source',
      type: 'mmdb',
      origin: 'bundled',
      path: expect.stringMatching(/dbip-city-ipv4\.mmdb$/),
      version: expect.stringMatching(/^build \d{4}-\d{2}-\d{2}$/),
      licence: 'CC BY 4.0',
      attribution: 'IP geolocation by DB-IP (https://db-ip.com)',
      entries: null,
    });
    expect(byName['asn-ipv4']).toMatchObject({ origin: 'bundled', path: expect.stringMatching(/asn-ipv4\.csv$/), entries: expect.any(Number) });
    expect(byName['asn-ipv4']!.entries).toBeGreaterThan(100_000);
    expect(byName['tor-exit']).toMatchObject({
      origin: null,
      path: null,
      stale: null,
      url: 'https://check.torproject.org/torbulkexitlist',
      signal: 'tor_exit_list',
      warning: 'not installed: run netintel data update tor-exit',
    });
    expect(byName.azure).toMatchObject({ enabled: false, url: null, warning: expect.stringMatching(/^not installed: no URL configured/) });
    expect(byName['tor-exit-addresses']).toMatchObject({ enabled: false, warning: null });
    expect(byName['curated-asns']).toMatchObject({ type: 'embedded', origin: 'embedded', licence: 'CC0-1.0 (facts)', stale: null, entries: expect.any(Number) });
  });

  it('reports an installed feed with its path, date, entries, last check, age and stale verdict', async () => {
    const dir = join(scratch.path, 'installed');
    mkdirSync(dir);
    const file = join(scratch.path, 'tor.txt');
    writeFileSync(file, TOR_BULK);
    const sources: DataSource[] = applySourceSettings(loadSourceRegistry(), { 'tor-exit': { url: pathToFileURL(file).href, min_entries: 1 } }, []);
    const tor = sources.filter((source) => source.name === 'tor-exit');
    const updatedAt = new Date('2026-11-20T12:00:00Z');
    await updateData({ dataDir: dir, sources, selected: tor, force: false, idleTimeoutMs: 2000, now: () => updatedAt, pid: process.pid, isProcessAlive: () => false, userAgent: 't' });

    const fresh = dataStatus({ dataDir: dir, sources, now: new Date('2026-11-20T18:00:00Z') }).find((row) => row.name === 'tor-exit')!;
    expect(fresh).toMatchObject({
      origin: 'data-dir',
      path: join(dir, 'sources/tor-exit.txt'),
      entries: 3,
      last_checked_at: '2026-11-20T12:00:00.000Z',
      stale_after_days: 1,
      stale: false,
      warning: null,
      licence: 'public list of the Tor Project (no terms stated)',
    });
    expect(typeof fresh.updated).toBe('string');

    const old = dataStatus({ dataDir: dir, sources, now: NOW }).find((row) => row.name === 'tor-exit')!;
    expect(old.stale).toBe(true);
    expect(old.warning).toBe('not confirmed current for 2 days (stale after 1 day): run netintel data update tor-exit');
    const lenient = dataStatus({ dataDir: dir, sources, now: NOW, staleAfterDays: 30 }).find((row) => row.name === 'tor-exit')!;
    expect([lenient.stale, lenient.stale_after_days]).toEqual([false, 30]);
  });
});

describe('source settings', () => {
  it('adds a feed the registry lacks from the config file, and lets --feed override a URL', () => {
    const sources = applySourceSettings(
      loadSourceRegistry(),
      { 'my-vpns': { url: 'https://example.test/vpns.txt', format: 'cidr-list', signal: 'vpn_range', provider: 'Example VPN' }, aws: { enabled: false } },
      ['tor-exit=file:///srv/tor.txt'],
    );
    expect(sources.find((source) => source.name === 'my-vpns')).toMatchObject({ type: 'feed', format: 'cidr-list', signal: 'vpn_range', provider: 'Example VPN', enabled: true });
    expect(sources.find((source) => source.name === 'aws')!.enabled).toBe(false);
    expect(sources.find((source) => source.name === 'tor-exit')!.url).toBe('file:///srv/tor.txt');
  });

  it('refuses an unknown --feed name, a flag without =, a URL of another scheme, and a new feed without format', () => {
    const registry = loadSourceRegistry();
    expect(() => applySourceSettings(registry, undefined, ['nope=https://x.test/'])).toThrow(/--feed: no source named "nope"; known: dbip-city-ipv4,/);
    expect(() => applySourceSettings(registry, undefined, ['tor-exit'])).toThrow('--feed takes NAME=URL, not "tor-exit"');
    expect(() => applySourceSettings(registry, undefined, ['tor-exit=ftp://x.test/list'])).toThrow('tor-exit: only http, https and file URLs are supported, not ftp:');
    expect(() => applySourceSettings(registry, { mine: { url: 'https://x.test/' } }, [])).toThrow(/config file: feeds\.mine: .*unknown feed format/);
  });
});
