/**
 * `netintel data update` and `netintel data status` against fixture feeds on
 * a local HTTP server: exit codes and summaries, --feed and the config file,
 * 304, progress on a terminal, and an update killed mid-download or at a
 * random moment (the CLI spawned as a process) leaving the installed data whole.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/app/main.js';
import { DATA_STATUS_SCHEMA } from '../../src/output/schemas/data-schema.js';
import { parseCsv } from '../output/parse-csv.js';
import { BIN, isolatedEnv, REPO_ROOT, runCli, tempDir, writeConfigFile } from '../support/cli.js';
import { cidrLines, startFeedServer, type FeedServer } from '../engine/data/feed-server.js';
import { pathToFileURL } from 'node:url';
import { bundledDataFilePath } from '../../src/engine/data/data-files.js';
import { loadSourceRegistry } from '../../src/engine/data/data-sources.js';
import { AWS_JSON, AZURE_JSON, GOOGLE_JSON, ORACLE_JSON, PROXIES, TOR_EXIT_ADDRESSES, VPN_ASNS, VPN_CIDRS } from '../engine/security/fixtures.js';

const TOR_LIST = `${Array.from({ length: 150 }, (_, i) => `185.220.${100 + (i >> 8)}.${i & 255}`).join('\n')}\n`;
const VPN_LIST = cidrLines(1200, 45);

let server: FeedServer;
const scratch = tempDir('netintel-data-cmd-');
beforeAll(async () => {
  server = await startFeedServer();
  server.set('/tor', { body: TOR_LIST, etag: '"tor-1"' });
  server.set('/vpn', { body: VPN_LIST, lastModified: 'Fri, 20 Nov 2026 10:00:00 GMT' });
  server.set('/proxies', { body: PROXIES });
  server.set('/down', { status: 503 });
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

describe('netintel data update', () => {
  it('installs the named sources from --feed URLs and the config file, prints one record each and a summary, exit 0', async () => {
    const dir = dataDir();
    // The config file gives the proxy list's URL and lowers its minimum (the fixture has 4 entries).
    const xdg = writeConfigFile(join(scratch.path, 'cfg-1'), { feeds: { 'open-proxies': { url: server.url('/proxies'), min_entries: 1 } } });
    const result = await runCli(
      ['data', 'update', 'tor-exit', 'vpn-ipv4', 'open-proxies', '--feed', `tor-exit=${server.url('/tor')}`, '--feed', `vpn-ipv4=${server.url('/vpn')}`, '--data-dir', dir, '-f', 'json'],
      { env: { XDG_CONFIG_HOME: xdg } },
    );
    expect(result.code).toBe(0);
    const records = JSON.parse(result.stdout) as Array<Record<string, unknown>>;
    expect(records.map((record) => [record.source, record.status, record.entries])).toEqual([
      ['tor-exit', 'updated', 150],
      ['vpn-ipv4', 'updated', 1200],
      ['open-proxies', 'updated', 4],
    ]);
    expect(records[1]).toMatchObject({ kind: 'data-update', type: 'feed', url: server.url('/vpn'), path: join(dir, 'sources/vpn-ipv4.txt'), updated: '2026-11-20T10:00:00Z' });
    expect(result.stderr).toMatch(new RegExp(`^netintel: data update in ${dir}: 3 updated, 0 not modified, 0 failed in \\d+\\.\\d s\\n$`));

    const vpn = JSON.parse((await runCli(['vpn', '185.220.100.7', '-f', 'json', '--data-dir', dir])).stdout) as Record<string, unknown>;
    expect(vpn).toMatchObject({ is_tor: true, threat_rule: 'tor_exit', evidence: [{ signal: 'tor_exit_list', source: 'tor-exit', matched: '185.220.100.7' }] });

    // Again: the Tor list answers 304 to If-None-Match, the VPN list to If-Modified-Since.
    const again = await runCli(['data', 'update', 'tor-exit', 'vpn-ipv4', '--feed', `tor-exit=${server.url('/tor')}`, '--feed', `vpn-ipv4=${server.url('/vpn')}`, '--data-dir', dir, '-f', 'ndjson']);
    expect(again.code).toBe(0);
    expect(again.stdout.trimEnd().split('\n').map((line) => (JSON.parse(line) as { status: string }).status)).toEqual(['not_modified', 'not_modified']);
    expect(again.stderr).toMatch(/: 0 updated, 2 not modified, 0 failed in /);
  });

  it('updates every enabled source of the registry when none is named (URLs from the config file)', async () => {
    const bodies: Record<string, string> = {
      'cidr-list': VPN_CIDRS,
      'tor-exit-addresses': TOR_EXIT_ADDRESSES,
      'proxy-list': PROXIES,
      'aws-ip-ranges': AWS_JSON,
      'google-cloud': GOOGLE_JSON,
      'azure-service-tags': AZURE_JSON,
      'oracle-cloud': ORACLE_JSON,
      'asn-list': VPN_ASNS,
    };
    const feeds: Record<string, unknown> = {};
    const enabled = loadSourceRegistry().filter((source) => source.enabled);
    for (const source of enabled) {
      if (source.type === 'mmdb') {
        feeds[source.name] = pathToFileURL(bundledDataFilePath(source.file!)).href;
      } else if (source.type === 'rdap-bootstrap') {
        server.set(`/every/${source.name}`, { body: JSON.stringify({ version: '1.0', publication: '2026-11-20T00:00:00Z', services: [[['test'], ['https://rdap.example.net/']]] }) });
        feeds[source.name] = { url: server.url(`/every/${source.name}`), min_entries: 1 };
      } else if (source.type === 'asn-csv') {
        const row = source.ipVersion === 4 ? '1.0.8.0,1.0.15.255,64500,Fixture Networks\n' : '2001:db8:100::,2001:db8:1ff:ffff:ffff:ffff:ffff:ffff,64501,Fixture Six\n';
        server.set(`/every/${source.name}`, { body: row });
        feeds[source.name] = { url: server.url(`/every/${source.name}`), min_entries: 1 };
      } else if (source.type === 'rpki') {
        server.set(`/every/${source.name}`, { body: JSON.stringify({ roas: [{ asn: 'AS64500', prefix: '1.0.8.0/21', maxLength: 24, ta: 'apnic' }] }) });
        feeds[source.name] = { url: server.url(`/every/${source.name}`), min_entries: 1 };
      } else {
        server.set(`/every/${source.name}`, { body: bodies[source.format!]! });
        feeds[source.name] = { url: server.url(`/every/${source.name}`), min_entries: 1 };
      }
    }
    const dir = dataDir();
    const xdg = writeConfigFile(join(scratch.path, 'cfg-every'), { feeds });
    const result = await runCli(['data', 'update', '--data-dir', dir, '-f', 'json'], { env: { XDG_CONFIG_HOME: xdg } });
    expect(result.stderr).toMatch(new RegExp(`: ${enabled.length} updated, 0 not modified, 0 failed in `));
    expect(result.code).toBe(0);
    const records = JSON.parse(result.stdout) as Array<{ source: string; status: string }>;
    expect(records.map((record) => record.source)).toEqual(enabled.map((source) => source.name));
    expect(records.every((record) => record.status === 'updated')).toBe(true);
    const status = JSON.parse((await runCli(['data', 'status', '--data-dir', dir, '-f', 'json'], { env: { XDG_CONFIG_HOME: xdg } })).stdout) as Array<{ name: string; origin: string | null }>;
    expect(status.filter((row) => row.origin === 'data-dir').map((row) => row.name)).toEqual(enabled.map((source) => source.name));
    // The downloaded ASN data is in use: the fixture's AS announces 1.0.9.9, in the route its ROA authorises.
    expect(JSON.parse((await runCli(['ip', '1.0.9.9', '-f', 'json', '--data-dir', dir])).stdout)).toMatchObject({
      network: { asn: 64500, rpki: { status: 'valid', route: '1.0.8.0/21', vrps: [{ asn: 64500, prefix: '1.0.8.0/21', max_length: 24, ta: 'apnic', matches: true }] } },
      meta: { data: { 'asn-ipv4': expect.any(String), rpki: expect.any(String) } },
    });
  });

  it('exits 7 when one source fails and names it; the failure\'s own code (5) when every source fails', async () => {
    const dir = dataDir();
    const partial = await runCli(['data', 'update', 'tor-exit', 'aws', '--feed', `tor-exit=${server.url('/tor')}`, '--feed', `aws=${server.url('/down')}`, '--data-dir', dir, '-f', 'csv']);
    expect(partial.code).toBe(7);
    const rows = parseCsv(partial.stdout);
    expect(rows.slice(1).map((row) => [row[0], row[rows[0]!.indexOf('status')], row.at(-2)])).toEqual([
      ['tor-exit', 'updated', ''],
      ['aws', '', 'upstream'],
    ]);
    expect(partial.stderr).toContain(`netintel: aws: ${server.url('/down')}: HTTP 503 Service Unavailable (the server could not answer; try again later)\n`);
    expect(partial.stderr).toMatch(/: 1 updated, 0 not modified, 1 failed \(aws\) in /);

    const all = await runCli(['data', 'update', 'aws', '--feed', `aws=${server.url('/down')}`, '--data-dir', dir]);
    expect(all.code).toBe(5);
    // The Tor list installed by the first run still answers.
    expect(JSON.parse((await runCli(['vpn', '185.220.100.1', '-f', 'json', '--data-dir', dir])).stdout)).toMatchObject({ is_tor: true });
  });

  it('refuses an unknown source name or --feed name with exit 2', async () => {
    const unknown = await runCli(['data', 'update', 'no-such-feed', '--data-dir', dataDir()]);
    expect(unknown).toMatchObject({ code: 2, stdout: '' });
    expect(unknown.stderr).toMatch(/^netintel: no source named "no-such-feed"; known: dbip-city-ipv4, /);
    expect((await runCli(['data', 'update', 'tor-exit', '--feed', 'tor-exit', '--data-dir', dataDir()])).code).toBe(2);
  });

  it('shows progress on stderr when stderr is a terminal', async () => {
    const dir = dataDir();
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const sink = (chunks: Buffer[], tty: boolean) =>
      Object.assign(
        new Writable({
          write(chunk: Buffer, _encoding, callback) {
            chunks.push(Buffer.from(chunk));
            callback();
          },
        }),
        { isTTY: tty },
      );
    const stdin = Object.assign(Readable.from([]), { isTTY: true });
    const code = await main(['data', 'update', 'tor-exit', '--feed', `tor-exit=${server.url('/tor')}`, '--data-dir', dir], {
      stdin,
      stdout: sink(out, false),
      stderr: sink(err, true),
      env: isolatedEnv(),
    });
    expect(code).toBe(0);
    const lines = Buffer.concat(err).toString('utf8').split('\n');
    expect(lines.slice(0, 3)).toEqual([`netintel: tor-exit: downloading ${server.url('/tor')}`, 'netintel: tor-exit: updated, 150 entries', 'netintel: compiling the signal index']);
  });
});

describe('netintel data status', () => {
  it('lists every source with path, date, age, entries and licence; one named source prints one object', async () => {
    const dir = dataDir();
    await runCli(['data', 'update', 'tor-exit', '--feed', `tor-exit=${server.url('/tor')}`, '--data-dir', dir]);
    const all = await runCli(['data', 'status', '--data-dir', dir, '-f', 'json']);
    expect(all.code).toBe(0);
    const rows = JSON.parse(all.stdout) as Array<Record<string, unknown>>;
    expect(rows.map((row) => row.name)).toContain('curated-asns');
    expect(Object.keys(rows[0]!)).toEqual(['kind', ...DATA_STATUS_SCHEMA.columns]);
    const one = JSON.parse((await runCli(['data', 'status', 'tor-exit', '--data-dir', dir, '-f', 'json'])).stdout) as Record<string, unknown>;
    expect(one).toMatchObject({ name: 'tor-exit', origin: 'data-dir', path: join(dir, 'sources/tor-exit.txt'), entries: 150, stale: false, age_days: expect.any(Number) });
    expect(one.url).toBe(server.url('/tor'));
  });

  it('warns on stderr about stale data, past the source\'s age or --stale-after', async () => {
    const dir = dataDir();
    const result = await runCli(['data', 'status', 'dbip-city-ipv4', 'tor-exit', '--data-dir', dir, '--stale-after', '0.001']);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^netintel: warning: dbip-city-ipv4: the bundled copy is [\d.]+ days old \(stale after 0\.001 days\): run netintel data update dbip-city-ipv4\n$/);
    expect(result.stdout).toContain('bundled');
    expect((await runCli(['data', 'status', 'nope'])).code).toBe(2);
  });
});

describe('an update killed mid-download', () => {
  it('leaves the installed data whole and working, and the next update takes over its lock', async () => {
    const dir = dataDir();
    server.set('/kill/tor', { body: TOR_LIST, etag: '"a"' });
    expect((await runCli(['data', 'update', 'tor-exit', '--feed', `tor-exit=${server.url('/kill/tor')}`, '--data-dir', dir])).code).toBe(0);
    const before = snapshot(dir);

    // A bigger new version that stalls half-way: the process is killed while it downloads.
    server.set('/kill/tor', { body: `${TOR_LIST}${'185.220.103.1\n'.repeat(20_000)}`, etag: '"b"', stall: true });
    const child = spawn(process.execPath, [BIN, 'data', 'update', 'tor-exit', '--feed', `tor-exit=${server.url('/kill/tor')}`, '--data-dir', dir], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, ...isolatedEnv() },
      stdio: 'ignore',
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    await server.requested('/kill/tor');
    await new Promise((resolve) => setTimeout(resolve, 150));
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    const after = snapshot(dir);
    // Its lock and scratch dir are left behind; every installed file is byte for byte what it was.
    const leftovers = Object.keys(after).filter((name) => !(name in before));
    expect(leftovers.every((name) => name === '.update.lock' || name.startsWith('.update-'))).toBe(true);
    for (const [name, sum] of Object.entries(before)) expect(after[name], name).toBe(sum);
    expect(JSON.parse((await runCli(['vpn', '185.220.100.9', '-f', 'json', '--data-dir', dir])).stdout)).toMatchObject({ is_tor: true });
    expect(JSON.parse((await runCli(['data', 'status', 'tor-exit', '--data-dir', dir, '-f', 'json'])).stdout)).toMatchObject({ entries: 150 });

    server.set('/kill/tor', { body: `${TOR_LIST}185.220.103.1\n`, etag: '"c"' });
    const next = await runCli(['data', 'update', 'tor-exit', '--feed', `tor-exit=${server.url('/kill/tor')}`, '--data-dir', dir, '-f', 'json']);
    expect(next.code).toBe(0);
    expect(JSON.parse(next.stdout)).toMatchObject([{ status: 'updated', entries: 151, previous_entries: 150 }]);
    expect(existsSync(join(dir, '.update.lock'))).toBe(false);
    expect(readdirSync(dir).filter((name) => name.startsWith('.update-'))).toEqual([]);
  });
});

describe('an update killed at a random moment', () => {
  // Whatever the moment (downloading, installing a file, writing the state, rebuilding the signal index), the data
  // dir is either the old update or the new one where it counts: status reads it, lookups answer, and the next
  // update finishes the job.
  for (const seed of [11, 2026, 31337, 90210, 5, 77, 404, 8080]) {
    it(`leaves a data dir that reads, answers and updates (seed ${seed})`, async () => {
      const dir = dataDir();
      const tor = `/random-kill/${seed}/tor`;
      const vpn = `/random-kill/${seed}/vpn`;
      server.set(tor, { body: TOR_LIST, etag: '"1"' });
      server.set(vpn, { body: VPN_LIST, etag: '"1"' });
      const argv = ['data', 'update', 'tor-exit', 'vpn-ipv4', '--feed', `tor-exit=${server.url(tor)}`, '--feed', `vpn-ipv4=${server.url(vpn)}`, '--data-dir', dir];
      const started = Date.now();
      expect((await runCli(argv)).code).toBe(0);
      const took = Date.now() - started;

      server.set(tor, { body: `${TOR_LIST}185.220.103.1\n`, etag: '"2"' });
      server.set(vpn, { body: cidrLines(1300, 46), etag: '"2"' });
      const child = spawn(process.execPath, [BIN, ...argv], { cwd: REPO_ROOT, env: { PATH: process.env.PATH, ...isolatedEnv() }, stdio: 'ignore' });
      const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
      // A moment from the process's start to the time a whole update took (seeded: a failure replays).
      const at = Math.round(((seed * 2654435761) % 2 ** 32) / 2 ** 32 * took);
      await new Promise((resolve) => setTimeout(resolve, at));
      child.kill('SIGKILL');
      await exited;

      const status = await runCli(['data', 'status', 'tor-exit', 'vpn-ipv4', '--data-dir', dir, '-f', 'json']);
      expect(status.code, `killed after ${at} ms of ${took}: ${status.stderr}`).toBe(0);
      const entries = (JSON.parse(status.stdout) as Array<{ source: string; entries: number }>).map((record) => [record.source, record.entries]);
      expect([150, 151]).toContain(entries[0]![1]);
      expect([1200, 1300]).toContain(entries[1]![1]);
      const lookup = await runCli(['vpn', '185.220.100.9', '-f', 'json', '--data-dir', dir]);
      expect(lookup.code, `killed after ${at} ms: ${lookup.stderr}`).toBe(0);
      expect(JSON.parse(lookup.stdout)).toMatchObject({ is_tor: true });

      const next = await runCli([...argv, '-f', 'json']);
      expect(next.code, `killed after ${at} ms: ${next.stderr}`).toBe(0);
      expect((JSON.parse((await runCli(['data', 'status', 'tor-exit', 'vpn-ipv4', '--data-dir', dir, '-f', 'json'])).stdout) as Array<{ entries: number }>).map((record) => record.entries)).toEqual([151, 1300]);
    }, 60_000);
  }
});
