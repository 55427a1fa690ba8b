/**
 * `netintel blacklist` in-process: main(argv, io) with memory streams,
 * against the test DNS server (test/support/dns-server.ts) serving
 * blocklist zones on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLACKLIST_SCHEMA } from '../../src/output/schemas/blacklist-schema.js';
import { parseCsv } from '../output/parse-csv.js';
import { runCli, type RunOptions } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { listedName, zoneRecords } from '../engine/blacklist/dnsbl-fixtures.js';
import { csvColumnsOf } from '../../src/output/record-schema.js';

let server: DnsTestServer;

beforeAll(async () => {
  server = await startDnsServer({
    records: [
      ...zoneRecords('bl.test.example', { '192.0.2.99': { a: ['127.0.0.2'], txt: 'spam source, see https://bl.test.example/192.0.2.99' } }),
      ...zoneRecords('other.test.example', {}),
      ...zoneRecords('zen.spamhaus.org', { '192.0.2.66': { a: ['127.255.255.254'] } }),
      ...zoneRecords('dbl.spamhaus.org', { 'bad.example': { a: ['127.0.1.2'] } }, { kind: 'domain', canaryName: 'dbltest.com' }),
      { name: 'bad.example', type: 'MX', data: { preference: 10, exchange: 'mx.bad.example' } },
      { name: 'mx.bad.example', type: 'A', data: '192.0.2.99' },
    ],
    behaviours: Object.fromEntries(['192.0.2.99', '192.0.2.1', '127.0.0.2', '127.0.0.1'].map((ip) => [listedName(ip, 'quiet.test.example'), 'silent' as const])),
  });
});

afterAll(async () => {
  await server.close();
});

function blacklist(args: string[], options: RunOptions = {}) {
  return runCli(['blacklist', '--resolver', server.address, '-t', '1500', '--retries', '0', ...args], options);
}

describe('netintel blacklist', () => {
  it('prints the verdict and a table of the lists for one target, and exits 0 when listed', async () => {
    const result = await blacklist(['192.0.2.99', '--zones', 'bl.test.example,other.test.example']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout.split('\n')[0]).toBe('192.0.2.99  listed on 1 of 2 lists (bl.test.example)');
    expect(result.stdout).toMatch(/│ bl\.test\.example +│ listed +│ 127\.0\.0\.2 +│ spam source, see +│/);
    expect(result.stdout).toMatch(/│ +│ +│ +│ https:\/\/bl\.test\.example\/192\.0\.2\.99 +│/);
    expect(result.stdout).toMatch(/│ other\.test\.example +│ clean +│/);
  });

  it('names each reason once for the lists that share it, after the fact that explains the verdict', async () => {
    // Zones the server does not hold: their test point 127.0.0.2 is not listed, so none can be trusted.
    const dead = ['one.gone.example', 'two.gone.example', 'three.gone.example', 'four.gone.example', 'five.gone.example'];
    const result = await blacklist(['192.0.2.99', '--zones', dead.join(','), '-f', 'table'], { env: { COLUMNS: '80' } });
    expect(result.code).toBe(5);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.slice(0, 4).join('\n')).toBe(
      [
        '192.0.2.99  could not be checked: DNS refused or gave no usable answer; none of',
        'the 5 lists answered',
        '192.0.2.99 is documentation, TEST-NET-1 (RFC 5737): public lists do not list',
        'such addresses [blacklist_special_address, RFC 6890]',
      ].join('\n'),
    );
    // The reason once, the five zones in one row, each named once.
    expect(result.stdout.split('misnamed').length - 1).toBe(1);
    for (const zone of dead) expect(result.stdout.split(zone).length - 1, zone).toBe(1);
    expect(result.stdout.match(/TEST-NET-1/g)).toHaveLength(1);
    expect(lines.length).toBeLessThan(25);
  });

  it('prints the record as JSON with -f json', async () => {
    const result = await blacklist(['192.0.2.1', '--zones', 'bl.test.example', '-f', 'json']);
    expect(result.code).toBe(0);
    const record = JSON.parse(result.stdout);
    expect(Object.keys(record)).toEqual([
      'kind',
      'target',
      'target_type',
      'verdict',
      'zones',
      'skipped',
      'mx',
      'findings',
      'resolvers',
      'registry_version',
      'checked_at',
      'latency_ms',
    ]);
    expect(record).toMatchObject({ kind: 'blacklist', target: '192.0.2.1', verdict: { status: 'clean' }, resolvers: [server.address] });
    expect(Object.keys(record.zones[0])).toEqual([
      'zone',
      'name',
      'list_kind',
      'subject',
      'mx_hosts',
      'query',
      'status',
      'return_codes',
      'reason',
      'detail',
      'canary',
      'latency_ms',
      'resolver',
      'delist_url',
    ]);
  });

  it('exits 10 under --fail-on error for a listing, 0 for a clean address', async () => {
    expect((await blacklist(['192.0.2.99', '--zones', 'bl.test.example', '--fail-on', 'error'])).code).toBe(10);
    expect((await blacklist(['192.0.2.1', '--zones', 'bl.test.example', '--fail-on', 'error'])).code).toBe(0);
  });

  it('reports a refused zone as unknown, never listed or clean, and exits 5 (upstream) when it was the only one, --fail-on or not', async () => {
    const plain = await blacklist(['192.0.2.66', '--zones', 'zen.spamhaus.org', '-f', 'json']);
    expect(plain.code).toBe(5);
    const record = JSON.parse(plain.stdout);
    expect(record.zones[0].status).toBe('refused');
    expect(record.verdict).toMatchObject({ status: 'unknown', failure: { code: 'upstream', reason: 'DNS refused or gave no usable answer' } });
    expect(plain.stderr).toBe(`netintel: ${record.verdict.failure.message}\n`);
    expect(record.findings.find((item: { id: string }) => item.id === 'blacklist_zone_refused')).toMatchObject({ severity: 'unknown' });
    expect((await blacklist(['192.0.2.66', '--zones', 'zen.spamhaus.org', '--fail-on', 'error'])).code).toBe(5);
    expect((await blacklist(['192.0.2.66', '--zones', 'zen.spamhaus.org', '--fail-on', 'warning'])).code).toBe(5);
  });

  it('says in the record when a zone timed out beside a listing, and exits 7 (checked in part), before --fail-on\'s 10', async () => {
    const result = await blacklist(['192.0.2.99', '--zones', 'bl.test.example,quiet.test.example', '-t', '500', '-f', 'json']);
    expect(result.code).toBe(7);
    const record = JSON.parse(result.stdout);
    expect(record.zones.map((row: { status: string }) => row.status)).toEqual(['listed', 'timeout']);
    expect(record.verdict).toMatchObject({ status: 'listed', unchecked_zones: 1, failure: { code: 'timeout' } });
    expect((await blacklist(['192.0.2.99', '--zones', 'bl.test.example,quiet.test.example', '-t', '500', '--fail-on', 'error'])).code).toBe(7);
  });

  it('checks a domain: the domain list, then its MX addresses naming the MX', async () => {
    const result = await blacklist(['bad.example', '--zones', 'dbl.spamhaus.org,bl.test.example', '-f', 'json']);
    const record = JSON.parse(result.stdout);
    expect(record.zones.map((row: { zone: string; subject: string; mx_hosts: string[]; status: string }) => [row.zone, row.subject, row.mx_hosts, row.status])).toEqual([
      ['dbl.spamhaus.org', 'bad.example', [], 'listed'],
      ['bl.test.example', '192.0.2.99', ['mx.bad.example'], 'listed'],
    ]);
    expect(record.verdict).toMatchObject({ status: 'listed', listed_zones: 2 });
  });

  it('reads many targets from stdin and prints one row per line in input order, failures included', async () => {
    const input = ['192.0.2.99', '# a comment', '', '192.0.2.1', 'not valid!', 'bad.example'].join('\n');
    const result = await blacklist(['--zones', 'bl.test.example', '-f', 'ndjson'], { stdin: input });
    expect(result.code).toBe(7);
    const rows = result.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(rows.map((row) => row.target ?? row.query)).toEqual(['192.0.2.99', '192.0.2.1', 'not valid!', 'bad.example']);
    expect(rows.map((row) => row.verdict?.status ?? row.error.code)).toEqual(['listed', 'clean', 'invalid_input', 'listed']);
    expect(result.stderr).toMatch(/4 \w+, 3 ok, 1 failed \(invalid_input: 1\)/);
  });

  it('writes CSV with the schema\'s stable columns and one zone row per line', async () => {
    const result = await blacklist(['192.0.2.99', '192.0.2.1', '--zones', 'bl.test.example', '-f', 'csv']);
    const [header, ...rows] = parseCsv(result.stdout);
    expect(header).toEqual(['query', ...csvColumnsOf(BLACKLIST_SCHEMA, BLACKLIST_SCHEMA.columns), 'error.code', 'error.message']);
    expect(rows).toHaveLength(2);
    const zones = rows[0]![header!.indexOf('zones')]!;
    expect(zones).toMatch(/^bl\.test\.example 192\.0\.2\.99 listed 127\.0\.0\.2 /);
    expect(rows[1]![header!.indexOf('verdict.status')]).toBe('clean');
  });

  it('keeps the verdict group with --fields verdict', async () => {
    const result = await blacklist(['192.0.2.99', '--zones', 'bl.test.example', '-f', 'csv', '--fields', 'verdict']);
    const [header] = parseCsv(result.stdout);
    expect(header).toEqual(['query', 'target', ...BLACKLIST_SCHEMA.groups.verdict!, 'error.code', 'error.message']);
  });

  it('reports a dead zone named in --zones without querying it', async () => {
    const before = server.queries.length;
    const result = await blacklist(['192.0.2.1', '--zones', 'bl.test.example,ix.dnsbl.manitu.net', '-f', 'json']);
    expect(server.queries.slice(before).some((query) => query.name.endsWith('manitu.net'))).toBe(false);
    const record = JSON.parse(result.stdout);
    expect(record.skipped).toEqual([expect.objectContaining({ zone: 'ix.dnsbl.manitu.net', reason: 'dead' })]);
    expect(record.findings.map((item: { id: string }) => item.id)).toContain('blacklist_zone_dead');
  });

  it('lists the registry zones with --list-zones, dead ones marked, and only the selection with --zones', async () => {
    const all = await runCli(['blacklist', '--list-zones', '-f', 'json']);
    expect(all.code).toBe(0);
    const zones = JSON.parse(all.stdout) as Array<{ zone: string; status: string; default: boolean }>;
    expect(zones.find((zone) => zone.zone === 'dnsbl.sorbs.net')).toMatchObject({ status: 'dead', default: false });
    const selection = await runCli(['blacklist', '--list-zones', '--zones', 'zen.spamhaus.org,bl.example.net:ipv6', '-f', 'csv']);
    const [header, ...rows] = parseCsv(selection.stdout);
    expect(rows.map((row) => [row[header!.indexOf('zone')], row[header!.indexOf('kind')], row[header!.indexOf('ipv6')]])).toEqual([
      ['zen.spamhaus.org', 'ip', 'true'],
      ['bl.example.net', 'ip', 'true'],
    ]);
  });

  it('exits 2 with a usage message for a bad --zones value or no target at a terminal', async () => {
    const bad = await blacklist(['192.0.2.1', '--zones', 'bl.example.net:rhs']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--zones: "bl\.example\.net:rhs": the kind after ":" must be ip, ipv6 or domain/);
    const bare = await runCli(['blacklist']);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/blacklist needs an IP address or a domain/);
  });

  it('exits 2 for a target that is not an IP address or a domain', async () => {
    const result = await blacklist(['300.1.2.3.4!', '--zones', 'bl.test.example']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/is not an IP address or a domain name/);
  });

  it('exits 4 and says it could not check when no zone answered (a resolver that never answers), also under --fail-on, in every format', async () => {
    const dead = await silentResolver();
    try {
      const run = (args: string[]) => runCli(['blacklist', '192.0.2.1', '--zones', 'bl.test.example,other.test.example', '--resolver', dead.address, '-t', '400', '--retries', '0', ...args]);
      const table = await run([]);
      expect(table.code).toBe(4);
      expect(table.stdout.replace(/\s+/g, ' ')).toMatch(/^192\.0\.2\.1 could not be checked: DNS did not answer; none of the 2 lists answered/);
      // What to do, once, whatever the number of lookups that timed out.
      expect(table.stderr.match(/--resolver/g)).toHaveLength(1);
      expect((await run(['--fail-on', 'warning'])).code).toBe(4);
      const json = await run(['-f', 'json']);
      expect(json.code).toBe(4);
      const record = JSON.parse(json.stdout);
      expect(record.verdict).toMatchObject({ status: 'unknown', checked_zones: 0, failure: { code: 'timeout', reason: 'DNS did not answer' } });
      expect(record.findings.filter((item: { severity: string }) => item.severity === 'unknown').map((item: { id: string }) => item.id)).toEqual(['blacklist_zone_unchecked', 'blacklist_zone_unchecked']);
      const csv = await run(['-f', 'csv']);
      const [header, row] = parseCsv(csv.stdout);
      expect(row![header!.indexOf('verdict.failure.code')]).toBe('timeout');
      expect(row![header!.indexOf('findings.max_severity')]).toBe('unknown');
    } finally {
      await dead.close();
    }
  });

  it('exits 7 over several targets when one could not be checked and another could', async () => {
    const result = await blacklist(['192.0.2.99', '192.0.2.1', '--zones', 'quiet.test.example,bl.test.example', '-t', '500', '-f', 'ndjson']);
    const rows = result.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(rows.map((row) => row.verdict.status)).toEqual(['listed', 'incomplete']);
    expect(result.code).toBe(7);
  });
});

/** A UDP port on 127.0.0.1 that takes queries and never answers (no ICMP refusal either): a resolver that is down. */
async function silentResolver(): Promise<{ address: string; close: () => Promise<void> }> {
  const { createSocket } = await import('node:dgram');
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { address: `127.0.0.1:${socket.address().port}`, close: () => new Promise<void>((resolve) => socket.close(() => resolve())) };
}
