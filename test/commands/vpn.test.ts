/**
 * `netintel vpn` in-process, over the bundled city/ASN data and a data dir
 * holding the compiled fixture feeds; and the same verdicts in the security
 * object of `netintel ip` (evidence in json/ndjson/xml, flat flags in CSV).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IP_SCHEMA } from '../../src/output/schemas/ip-schema.js';
import { VPN_SCHEMA } from '../../src/output/schemas/vpn-schema.js';
import { parseCsv } from '../output/parse-csv.js';
import { runCli, tempDir } from '../support/cli.js';
import { writeFixtureIndex } from '../engine/security/fixtures.js';

const scratch = tempDir('netintel-vpn-cmd-');
const DATA = join(scratch.path, 'data');
mkdirSync(DATA);
writeFixtureIndex(DATA);
afterAll(() => scratch.remove());

const TOR_EVIDENCE = [
  { signal: 'tor_exit_list', source: 'tor-exit', matched: '185.220.101.1', provider: null, updated: '2026-11-21T10:00:00Z' },
  { signal: 'tor_exit_list', source: 'tor-exit-addresses', matched: '185.220.101.1', provider: null, updated: '2026-11-21T08:02:59Z' },
  { signal: 'vpn_asn', source: 'vpn-asn', matched: 'AS60729', provider: 'Tor Servers (Tor exit nodes)', updated: '2026-11-10T00:00:00Z' },
];

describe('netintel vpn', () => {
  it('prints one JSON record with flags, threat level, the rule that fired, provider and evidence', async () => {
    const result = await runCli(['vpn', '185.220.101.1', '-f', 'json', '--data-dir', DATA]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const record = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(Object.keys(record)).toEqual(['kind', 'ip', 'is_vpn', 'is_proxy', 'is_tor', 'is_hosting', 'threat_level', 'threat_rule', 'provider', 'evidence', 'coverage', 'reserved', 'meta']);
    expect(record).toMatchObject({
      kind: 'vpn',
      ip: '185.220.101.1',
      is_vpn: true,
      is_proxy: false,
      is_tor: true,
      threat_level: 'high',
      threat_rule: 'tor_exit',
      provider: 'Tor Servers (Tor exit nodes)',
      evidence: TOR_EVIDENCE,
      coverage: { consulted: ['tor_exit_list', 'proxy_list', 'vpn_range', 'vpn_asn', 'cloud_range', 'datacenter_range', 'hosting_asn'], missing: [] },
      reserved: null,
    });
    expect((record.meta as { data: Record<string, string> }).data['tor-exit']).toBe('2026-11-21T10:00:00Z');
  });

  it('prints CSV with flat flag columns and the evidence one signal after another, on the row\'s one line', async () => {
    const result = await runCli(['vpn', '185.220.101.1', '8.8.8.8', '10.0.0.1', '-f', 'csv', '--data-dir', DATA]);
    expect(result.code).toBe(0);
    const rows = parseCsv(result.stdout);
    expect(rows[0]).toEqual(['query', ...VPN_SCHEMA.columns, 'error.code', 'error.message']);
    const column = (name: string) => rows[0]!.indexOf(name);
    expect(rows.slice(1).map((row) => [row[0], row[column('is_tor')], row[column('threat_level')], row[column('threat_rule')]])).toEqual([
      ['185.220.101.1', 'true', 'high', 'tor_exit'],
      ['8.8.8.8', 'false', 'low', 'hosting'],
      ['10.0.0.1', '', '', ''],
    ]);
    expect(rows[1]![column('evidence')]!.split(' | ')).toEqual([
      'tor_exit_list tor-exit 185.220.101.1 (2026-11-21T10:00:00Z)',
      'tor_exit_list tor-exit-addresses 185.220.101.1 (2026-11-21T08:02:59Z)',
      'vpn_asn vpn-asn AS60729 [Tor Servers (Tor exit nodes)] (2026-11-10T00:00:00Z)',
    ]);
    expect(rows[3]![column('reserved')]).toBe('private (RFC 1918)');
  });

  it('shows the evidence in the single-target view, without the data credit when stdout is not a terminal', async () => {
    const result = await runCli(['vpn', '45.83.104.20', '--data-dir', DATA]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('proxy_list open-proxies 45.83.104.20:3128');
    expect(result.stdout.split('\n')[0]).toBe('45.83.104.20  threat: high (open proxy)');
    expect(result.stdout + result.stderr).not.toContain('netintel data status');
  });

  it('names the special-purpose block of an address in the table of several targets', async () => {
    const result = await runCli(['vpn', '8.8.8.8', '10.0.0.1', '--data-dir', DATA]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/│ 10\.0\.0\.1 +│ +│ private \(RFC 1918\) +│/);
  });

  it('reads targets from stdin: one ndjson row per line, an invalid line as an error row, exit 7', async () => {
    const result = await runCli(['vpn', '-f', 'ndjson', '--data-dir', DATA], { stdin: '2a0b:f4c2::1\n# comment\n1.2.3\n3.5.140.9\n' });
    expect(result.code).toBe(7);
    const lines = result.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => (line.ip as string | undefined) ?? (line.query as string))).toEqual(['2a0b:f4c2::1', '1.2.3', '3.5.140.9']);
    expect(lines[0]).toMatchObject({ is_tor: true, threat_level: 'high' });
    expect(lines[1]).toMatchObject({ error: { code: 'invalid_input' } });
    expect(lines[2]).toMatchObject({ is_hosting: true, provider: 'Amazon Web Services', threat_rule: 'hosting' });
    expect(result.stderr).toMatch(/^netintel: 3 rows, 2 ok, 1 failed \(invalid_input: 1\)\n$/);
  });

  it('exits 2 with a JSON error record for an invalid single target', async () => {
    const result = await runCli(['vpn', '1.2.3', '-f', 'json']);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({ query: '1.2.3', error: { code: 'invalid_input' } });
  });

  it('says is_tor/is_proxy null (unknown) without installed feeds, the curated AS still explaining is_hosting', async () => {
    const result = await runCli(['vpn', '8.8.8.8', '-f', 'json']);
    expect(JSON.parse(result.stdout)).toMatchObject({
      is_tor: null,
      is_proxy: null,
      is_vpn: false,
      is_hosting: true,
      threat_level: 'unknown',
      threat_rule: 'signals_missing',
      evidence: [{ signal: 'hosting_asn', source: 'curated-asns', matched: 'AS15169' }],
      coverage: { consulted: ['vpn_asn', 'hosting_asn'], missing: ['tor_exit_list', 'proxy_list', 'vpn_range', 'cloud_range', 'datacenter_range'] },
    });
    // stderr is not a terminal: no hint about the missing feeds.
    expect(result.stderr).toBe('');
  });

  it('lists the missing signals in a CSV column, empty once the feeds are installed', async () => {
    const bare = parseCsv((await runCli(['vpn', '185.220.101.1', '-f', 'csv'])).stdout);
    const full = parseCsv((await runCli(['vpn', '185.220.101.1', '-f', 'csv', '--data-dir', DATA])).stdout);
    const column = bare[0]!.indexOf('coverage.missing');
    expect(column).toBeGreaterThan(0);
    expect([bare[1]![column], bare[1]![bare[0]!.indexOf('threat_level')]]).toEqual(['tor_exit_list proxy_list vpn_range cloud_range datacenter_range', 'unknown']);
    expect([full[1]![column], full[1]![full[0]!.indexOf('threat_level')]]).toEqual(['', 'high']);
  });

  it('finds installed feeds in the XDG data dir without --data-dir', async () => {
    const xdg = join(scratch.path, 'xdg');
    mkdirSync(join(xdg, 'netintel'), { recursive: true });
    writeFixtureIndex(join(xdg, 'netintel'));
    const result = await runCli(['vpn', '185.220.101.2', '-f', 'json'], { env: { XDG_DATA_HOME: xdg } });
    const record = JSON.parse(result.stdout) as { is_tor: boolean; evidence: unknown[] };
    expect(record.is_tor).toBe(true);
    expect(record.evidence[0]).toMatchObject({ source: 'tor-exit', matched: '185.220.101.2' });
  });
});

describe('the security object of netintel ip', () => {
  it('carries the same flags, rule, provider and evidence in JSON, and the data dates in meta', async () => {
    const ip = JSON.parse((await runCli(['ip', '185.220.101.1', '-f', 'json', '--data-dir', DATA])).stdout) as Record<string, Record<string, unknown>>;
    const vpn = JSON.parse((await runCli(['vpn', '185.220.101.1', '-f', 'json', '--data-dir', DATA])).stdout) as Record<string, unknown>;
    expect(ip.security).toEqual({
      is_vpn: vpn.is_vpn,
      is_proxy: vpn.is_proxy,
      is_tor: vpn.is_tor,
      is_hosting: vpn.is_hosting,
      threat_level: vpn.threat_level,
      threat_rule: vpn.threat_rule,
      provider: vpn.provider,
      evidence: TOR_EVIDENCE,
      coverage: vpn.coverage,
    });
    // The verdict does not use the city database, so vpn's meta names every dataset but that one.
    const { 'dbip-city-ipv4': city, ...rest } = (ip.meta as { data: Record<string, string> }).data;
    expect(city).toMatch(/^\d{4}-\d{2}/);
    expect(vpn.meta).toEqual({ data: rest });
  });

  it('keeps evidence out of CSV: the IP columns are unchanged, the flags flat', async () => {
    const result = await runCli(['ip', '185.220.101.1', '-f', 'csv', '--data-dir', DATA]);
    const rows = parseCsv(result.stdout);
    expect(rows[0]).toEqual(['query', ...IP_SCHEMA.columns, 'error.code', 'error.message']);
    expect(rows[0]!.some((name) => name.includes('evidence') || name.startsWith('meta'))).toBe(false);
    const at = (name: string) => rows[1]![rows[0]!.indexOf(name)];
    expect([at('security.is_tor'), at('security.is_vpn'), at('security.threat_level')]).toEqual(['true', 'true', 'high']);
  });

  it('prints the evidence in XML as item elements, and in ndjson', async () => {
    const xml = (await runCli(['ip', '185.220.101.1', '-f', 'xml', '--data-dir', DATA])).stdout;
    expect(xml).toMatch(/<evidence>\s*<item>\s*<signal>tor_exit_list<\/signal>\s*<source>tor-exit<\/source>\s*<matched>185\.220\.101\.1<\/matched>/);
    const ndjson = JSON.parse((await runCli(['ip', '45.83.104.20', '-f', 'ndjson', '--data-dir', DATA])).stdout) as { security: { threat_rule: string; evidence: unknown[] } };
    expect(ndjson.security.threat_rule).toBe('open_proxy');
    expect(ndjson.security.evidence.length).toBeGreaterThan(2);
  });
});
