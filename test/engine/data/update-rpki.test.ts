/**
 * `data update` of the RPKI source from a local HTTP server: the VRP export
 * installed and compiled into rpki.idx, lookups answering from it, data
 * status listing it, and malformed, oversized and shrunken exports refused
 * with the installed dataset kept.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lookupAsn } from '../../../src/engine/asn/lookup-asn.js';
import { createEngineContext } from '../../../src/engine/context.js';
import type { DataSource } from '../../../src/engine/data/data-sources.js';
import { dataStatus } from '../../../src/engine/data/data-status.js';
import { updateData, type SourceUpdateResult, type UpdateDataOptions } from '../../../src/engine/data/update-data.js';
import { lookupIp } from '../../../src/engine/ip/lookup-ip.js';
import type { Outcome } from '../../../src/engine/outcome.js';
import { tempDir } from '../../support/cli.js';
import { startFeedServer, type FeedServer } from './feed-server.js';

let server: FeedServer;
const scratch = tempDir('netintel-update-rpki-');
beforeAll(async () => {
  server = await startFeedServer();
});
afterAll(async () => {
  await server.close();
  scratch.remove();
});

let dirs = 0;
function dataDir(): string {
  const dir = join(scratch.path, `data-${++dirs}`);
  mkdirSync(dir);
  return dir;
}

function rpkiSource(url: string, extra: Partial<DataSource> = {}): DataSource {
  return {
    name: 'rpki',
    type: 'rpki',
    url,
    homepage: null,
    enabled: true,
    staleAfterDays: 1,
    minEntries: 2,
    licence: 'test',
    attribution: null,
    description: '',
    format: null,
    signal: null,
    provider: null,
    file: null,
    databaseType: null,
    ipVersion: null,
    ...extra,
  };
}

function options(dir: string, sources: DataSource[], extra: Partial<UpdateDataOptions> = {}): UpdateDataOptions {
  return {
    dataDir: dir,
    sources,
    selected: sources,
    force: false,
    idleTimeoutMs: 2000,
    now: () => new Date('2026-11-29T12:00:00Z'),
    pid: process.pid,
    isProcessAlive: () => false,
    userAgent: 'netintel-test',
    ...extra,
  };
}

function outcomeText(outcome: Outcome<SourceUpdateResult>): string {
  return outcome.ok ? outcome.value.status : `${outcome.error.code}: ${outcome.error.message}`;
}

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string, prefix: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path, `${prefix}${name}/`);
      else out[`${prefix}${name}`] = createHash('sha256').update(readFileSync(path)).digest('hex');
    }
  };
  walk(dir, '');
  return out;
}

// The routes the bundled ASN data gives 8.8.8.8 and 1.1.1.1, whatever its release.
const bundled = createEngineContext({ dataDir: null });
const google = lookupAsn(bundled, '8.8.8.8');
const cloudflare = lookupAsn(bundled, '1.1.1.1');
const EXPORT = JSON.stringify({
  metadata: { buildtime: '2026-11-29T11:00:00Z' },
  roas: [
    { asn: `AS${google.asn}`, prefix: google.route, maxLength: Number(google.route!.split('/')[1]), ta: 'arin' },
    // 1.1.1.1's route, authorised to another AS only.
    { asn: 64500, prefix: cloudflare.route, maxLength: 24, ta: 'apnic' },
    { asn: 64501, prefix: '2001:db8::/32', ta: 'ripe' },
  ],
});

describe('data update of the RPKI source', () => {
  it('installs the export, compiles rpki.idx, and lookups and data status use it', async () => {
    server.set('/vrps.json', { body: EXPORT, etag: '"v1"' });
    const dir = dataDir();
    const source = rpkiSource(server.url('/vrps.json'));
    const [outcome] = await updateData(options(dir, [source]));
    expect(outcomeText(outcome!)).toBe('updated');
    expect(outcome!.ok && outcome!.value).toMatchObject({ type: 'rpki', entries: 3, updated: '2026-11-29T11:00:00Z', path: join(dir, 'sources/rpki.json') });
    expect(existsSync(join(dir, 'rpki.idx'))).toBe(true);

    const ctx = createEngineContext({ dataDir: dir });
    const valid = lookupIp(ctx, '8.8.8.8');
    expect(valid.network.rpki).toMatchObject({ status: 'valid', reason: null, route: google.route, origin_asn: google.asn });
    expect(valid.meta.data.rpki).toBe('2026-11-29T11:00:00Z');
    expect(lookupIp(ctx, '1.1.1.1').network.rpki).toMatchObject({ status: 'invalid', reason: 'origin_not_authorised', vrps: [{ asn: 64500, matches: false }] });
    expect(lookupAsn(ctx, '1.1.1.1').rpki).toMatchObject({ status: 'invalid', reason: 'origin_not_authorised' });
    expect(lookupAsn(ctx, 'AS15169').rpki).toBeNull();
    expect(lookupIp(ctx, '9.9.9.9').network.rpki).toMatchObject({ status: 'not_found' });

    const row = dataStatus({ dataDir: dir, sources: [source], now: new Date('2026-11-29T13:00:00Z') }).find((status) => status.name === 'rpki');
    expect(row).toMatchObject({ type: 'rpki', origin: 'data-dir', entries: 3, stale: false, updated: '2026-11-29T11:00:00Z' });

    // Unchanged upstream: 304, nothing rewritten.
    const before = snapshot(dir);
    const [again] = await updateData(options(dir, [source]));
    expect(outcomeText(again!)).toBe('not_modified');
    expect(snapshot(dir)['rpki.idx']).toBe(before['rpki.idx']);

    // An index removed (or of another format version) is rebuilt: the export is asked for unconditionally.
    rmSync(join(dir, 'rpki.idx'));
    const [rebuilt] = await updateData(options(dir, [source]));
    expect(outcomeText(rebuilt!)).toBe('updated');
    expect(server.requests.at(-1)!.headers['if-none-match']).toBeUndefined();
    expect(snapshot(dir)['rpki.idx']).toBe(before['rpki.idx']);
  });

  it('without a dataset, lookups say unknown and data status says how to install it', () => {
    const dir = dataDir();
    const ctx = createEngineContext({ dataDir: dir });
    expect(lookupIp(ctx, '8.8.8.8').network.rpki).toEqual({ status: 'unknown', reason: 'no_dataset', route: null, origin_asn: null, vrps: [] });
    expect(lookupIp(ctx, '10.0.0.1').network.rpki).toBeNull();
    const row = dataStatus({ dataDir: dir, sources: [rpkiSource('https://example.invalid/vrps.json')], now: new Date() }).find((status) => status.name === 'rpki');
    expect(row).toMatchObject({ origin: null, warning: 'not installed: run netintel data update rpki' });
  });

  it.each([
    ['malformed JSON', '{"roas": [{"asn": 1, "prefix": "10.0.0.0/8"', /rpki: rejected the download: not JSON/],
    ['an entry with host bits set', JSON.stringify({ roas: [{ asn: 1, prefix: '10.0.0.0/8' }, { asn: 2, prefix: '10.0.0.1/8' }] }), /rejected the download: roas\[1\]: "prefix" has host bits set/],
    ['no roas array', JSON.stringify({ vrps: [] }), /no "roas" array/],
    ['too few payloads', JSON.stringify({ roas: [{ asn: 1, prefix: '10.0.0.0/8' }] }), /1 payloads, fewer than the 2/],
  ])('refuses %s and keeps the installed dataset', async (_name, body, message) => {
    server.set('/good.json', { body: EXPORT });
    const dir = dataDir();
    expect(outcomeText((await updateData(options(dir, [rpkiSource(server.url('/good.json'))])))[0]!)).toBe('updated');
    const before = snapshot(dir);
    server.set('/bad.json', { body });
    const [outcome] = await updateData(options(dir, [rpkiSource(server.url('/bad.json'))]));
    expect(outcome!.ok).toBe(false);
    expect(outcomeText(outcome!)).toMatch(message);
    const after = snapshot(dir);
    expect(after['rpki.idx']).toBe(before['rpki.idx']);
    expect(after['sources/rpki.json']).toBe(before['sources/rpki.json']);
    expect(lookupIp(createEngineContext({ dataDir: dir }), '8.8.8.8').network.rpki?.status).toBe('valid');
  });

  it('refuses an export over the size cap and one shrunk to a fraction of the installed one', async () => {
    const dir = dataDir();
    const many = JSON.stringify({ roas: Array.from({ length: 50 }, (_, i) => ({ asn: 64500 + i, prefix: `10.${i}.0.0/16` })) });
    server.set('/many.json', { body: many });
    expect(outcomeText((await updateData(options(dir, [rpkiSource(server.url('/many.json'))])))[0]!)).toBe('updated');
    const before = snapshot(dir);
    server.set('/few.json', { body: EXPORT });
    expect(outcomeText((await updateData(options(dir, [rpkiSource(server.url('/few.json'))])))[0]!)).toMatch(/3 payloads, under 20% of the 50 installed/);
    server.set('/huge.json', { body: `{"roas": [${'{"asn": 1, "prefix": "10.0.0.0/8"},'.repeat(200)}{"asn": 1, "prefix": "10.0.0.0/8"}]}` });
    expect(outcomeText((await updateData(options(dir, [rpkiSource(server.url('/huge.json'))], { maxBytes: 4096 })))[0]!)).toMatch(/upstream: rpki: .*larger than/);
    expect(snapshot(dir)).toEqual(before);
  });
});
