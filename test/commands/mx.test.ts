/** `netintel mx` in-process against a real DNS server on 127.0.0.1. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCsv } from '../output/parse-csv.js';
import { runCli } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { MAIL_BEHAVIOURS, MAIL_ZONE } from '../engine/mail/mail-zone.js';

let server: DnsTestServer;
let dnsFlags: string[];

beforeAll(async () => {
  server = await startDnsServer({ records: MAIL_ZONE, behaviours: MAIL_BEHAVIOURS });
  dnsFlags = ['--resolver', server.address, '--timeout', '1000', '--retries', '0'];
});

afterAll(async () => {
  await server.close();
});

describe('netintel mx', () => {
  it('prints the MX record as JSON with hosts, addresses, PTR, FCrDNS and findings', async () => {
    const run = await runCli(['mx', 'good.test', '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const record = JSON.parse(run.stdout);
    expect(record).toMatchObject({ kind: 'mx', domain: 'good.test', status: 'mx' });
    expect(record.records.map((host: { exchange: string }) => host.exchange)).toEqual(['mx1.good.test', 'mx2.good.test']);
    expect(record.findings.find((item: { id: string }) => item.id === 'mx_fcrdns_mismatch')).toMatchObject({ severity: 'warning', rfc: expect.any(String) });
    expect(Object.keys(record)).toEqual(['kind', 'domain', 'domain_unicode', 'status', 'records', 'implicit_addresses', 'ttl_seconds', 'findings', 'resolver']);
  });

  it('shows the findings grouped by severity in the table view', async () => {
    const run = await runCli(['mx', 'private.test', ...dnsFlags]);
    expect(run.code).toBe(0);
    const table = run.stdout;
    expect(table.split('\n')[0]).toBe('private.test MX: 1 error, 1 warning');
    const error = table.indexOf('\n1 error\n');
    const warning = table.indexOf('\n1 warning\n');
    const pass = table.indexOf('\n1 check passed\n');
    expect(error).toBeGreaterThan(-1);
    expect(warning).toBeGreaterThan(error);
    expect(pass).toBeGreaterThan(warning);
    expect(table).toContain('mx_reserved_address');
    expect(table).toContain('10 mx.private.test -> 10.0.0.25 (no PTR; private (RFC 1918))');
  });

  it('exits 10 with --fail-on when a finding reaches the threshold, 0 otherwise', async () => {
    expect((await runCli(['mx', 'private.test', '--fail-on', 'error', '-f', 'json', ...dnsFlags])).code).toBe(10);
    expect((await runCli(['mx', 'nullmx.test', '--fail-on', 'warning', '-f', 'json', ...dnsFlags])).code).toBe(0);
    expect((await runCli(['mx', 'nomx.test', '--fail-on', 'warning', '-f', 'json', ...dnsFlags])).code).toBe(10);
    expect((await runCli(['mx', 'nomx.test', '--fail-on', 'error', '-f', 'json', ...dnsFlags])).code).toBe(0);
    expect((await runCli(['mx', 'nomx.test', '--fail-on', 'fatal', ...dnsFlags])).code).toBe(2);
  });

  it('exits 4 on a timeout of the MX lookup, never printing "no MX"', async () => {
    const run = await runCli(['mx', 'silentmxroot.test', '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(4);
    expect(JSON.parse(run.stdout)).toMatchObject({ query: 'silentmxroot.test', error: { code: 'timeout' } });
    expect(run.stderr).toContain('the MX lookup of silentmxroot.test failed');
  });

  it('exits 7, --fail-on or not, when a host\'s addresses could not be looked up: its addresses are unknown, not absent', async () => {
    const run = await runCli(['mx', 'slowmx.test', '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(7);
    const record = JSON.parse(run.stdout);
    expect(record.records[0]).toMatchObject({ exchange: 'silentmx.test', addresses: [], error: { code: 'timeout' } });
    expect(record.findings.find((item: { id: string }) => item.id === 'mx_lookup_failed')).toMatchObject({ severity: 'unknown' });
    expect((await runCli(['mx', 'slowmx.test', '--fail-on', 'warning', '-f', 'json', ...dnsFlags])).code).toBe(7);
  });

  it('reads domains from stdin and prints one CSV row per line, in order, with an error row', async () => {
    const run = await runCli(['mx', '-f', 'csv', ...dnsFlags], { stdin: 'nullmx.test\n# comment\nbad name\ngood.test\nnomx.test\n' });
    expect(run.code).toBe(7);
    const rows = parseCsv(run.stdout);
    expect(rows[0]).toEqual(['query', 'domain', 'domain_unicode', 'status', 'records', 'implicit_addresses', 'ttl_seconds', 'findings.max_severity', 'findings.count.error', 'findings.count.warning', 'findings.count.info', 'findings.ids', 'resolver', 'error.code', 'error.message']);
    expect(rows.slice(1).map((row) => [row[0], row[3], row[13]])).toEqual([
      ['nullmx.test', 'null_mx', ''],
      ['bad name', '', 'invalid_input'],
      ['good.test', 'mx', ''],
      ['nomx.test', 'implicit', ''],
    ]);
    expect(run.stderr).toMatch(/4 \w+, 3 ok, 1 failed/);
  });

  it('asks the server given with --server, never the local engine, and exits 5 when it cannot be reached', async () => {
    const run = await runCli(['mx', 'good.test', '--server', 'http://127.0.0.1:9', '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(5);
    expect(run.stderr).toContain('127.0.0.1:9');
    expect(run.stdout).not.toContain('mx.good.test');
  });

  it('asks for a domain at a terminal', async () => {
    const run = await runCli(['mx']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('mx needs a domain');
  });
});
