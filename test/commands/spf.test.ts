/** `netintel spf` in-process against a real DNS server on 127.0.0.1. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

describe('netintel spf', () => {
  it('prints the record check as JSON: terms, tree with lookups per node, findings', async () => {
    const run = await runCli(['spf', 'over.test', '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(0);
    const record = JSON.parse(run.stdout);
    expect(record).toMatchObject({ kind: 'spf', domain: 'over.test', status: 'permerror', lookups: 12, lookup_limit: 10, evaluation: null });
    expect(record.tree).toMatchObject({ domain: 'over.test', lookups: 1, total_lookups: 12, children: [{ domain: 'n1.over.test', lookups: 3, total_lookups: 11 }] });
    expect(record.findings.find((item: { id: string }) => item.id === 'spf_lookup_limit')).toMatchObject({ severity: 'error', rfc: 'RFC 7208 §4.6.4' });
  });

  it('evaluates check_host() with --ip, --sender and --helo and shows the matched path in the table', async () => {
    const run = await runCli(['spf', 'redirect.test', '--ip', '198.51.100.20', '--sender', 'bounce@redirect.test', '--helo', 'mta.example.net', ...dnsFlags], { env: { COLUMNS: '200' } });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('redirect.test: redirect=good.test > good.test: include:_spf.good.test > _spf.good.test: ip4:198.51.100.0/24');
    expect(run.stdout).toMatch(/^result +pass$/m);
    expect(run.stdout).toMatch(/^\d+ checks? passed$/m);
  });

  it('shows the include tree with each node\'s lookups in the table view', async () => {
    const run = await runCli(['spf', 'loop.test', ...dnsFlags], { env: { COLUMNS: '200' } });
    expect(run.stdout).toContain('loop.test (1 lookups, 2 with those below)');
    expect(run.stdout).toContain('include:loop2.test -> loop2.test (1 lookups, 1 with those below)');
    expect(run.stdout).toContain('include:loop.test -> loop.test (0 lookups) [loop');
    expect(run.stdout.search(/^\d+ errors?$/m)).toBeGreaterThan(0);
    expect(run.stdout.search(/^\d+ errors?$/m)).toBeLessThan(run.stdout.search(/^\d+ checks? passed$/m));
  });

  it('exits 10 under --fail-on error when check_host() fails the IP', async () => {
    const run = await runCli(['spf', 'good.test', '--ip', '203.0.113.200', '--fail-on', 'error', '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(10);
    expect(JSON.parse(run.stdout).evaluation).toMatchObject({ result: 'fail', matched: { mechanism: '-all' } });
    expect((await runCli(['spf', 'good.test', '--ip', '198.51.100.1', '--fail-on', 'warning', '-f', 'json', ...dnsFlags])).code).toBe(0);
  });

  it('exits 4 when the record cannot be fetched and 5 on SERVFAIL, with the error record in JSON', async () => {
    const timeout = await runCli(['spf', 'silentroot.test', '-f', 'json', ...dnsFlags]);
    expect(timeout.code).toBe(4);
    expect(JSON.parse(timeout.stdout).error.code).toBe('timeout');
    const servfail = await runCli(['spf', 'servfail.test', '-f', 'json', ...dnsFlags]);
    expect(servfail.code).toBe(5);
    expect(JSON.parse(servfail.stdout).error.code).toBe('upstream');
  });

  it('exits 7, --fail-on or not, when an include could not be looked up: the record was checked in part, and check_host() is temperror, not fail', async () => {
    const run = await runCli(['spf', 'slowinc.test', '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(7);
    const record = JSON.parse(run.stdout);
    expect(record.status).toBe('temperror');
    expect(record.findings.find((item: { id: string }) => item.id === 'spf_lookup_failed')).toMatchObject({ severity: 'unknown', evidence: { error: { code: 'timeout' } } });
    expect((await runCli(['spf', 'slowinc.test', '--fail-on', 'error', '-f', 'json', ...dnsFlags])).code).toBe(7);
    const evaluated = await runCli(['spf', 'slowinc.test', '--ip', '192.0.2.1', '-f', 'json', ...dnsFlags]);
    expect(evaluated.code).toBe(7);
    expect(JSON.parse(evaluated.stdout).findings.find((item: { id: string }) => item.id === 'spf_check_host')).toMatchObject({ severity: 'unknown', evidence: { result: 'temperror' } });
    const table = await runCli(['spf', 'slowinc.test', ...dnsFlags], { env: { COLUMNS: '80' } });
    expect(table.code).toBe(7);
    expect(table.stdout).toMatch(/^1 not checked$/m);
  });

  it('refuses --sender without --ip, and a bad IP', async () => {
    expect((await runCli(['spf', 'good.test', '--sender', 'a@good.test', ...dnsFlags])).code).toBe(2);
    const bad = await runCli(['spf', 'good.test', '--ip', '1.2.3', ...dnsFlags]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('not a valid IPv4 or IPv6 address');
  });

  it('checks many domains from stdin as NDJSON, in order', async () => {
    const run = await runCli(['spf', '-f', 'ndjson', ...dnsFlags], { stdin: 'two.test\ngood.test\nsilentroot.test\nnospf.test\n' });
    expect(run.code).toBe(7);
    const lines = run.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((line) => line.domain ?? line.query)).toEqual(['two.test', 'good.test', 'silentroot.test', 'nospf.test']);
    expect(lines.map((line) => line.status ?? line.error.code)).toEqual(['permerror', 'valid', 'timeout', 'none']);
  });
});
