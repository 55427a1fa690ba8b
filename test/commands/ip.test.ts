/**
 * `netintel ip` in-process: main(argv, io) with memory streams. Data goes to
 * stdout, diagnostics to stderr; exit codes follow src/errors.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext } from '../../src/engine/context.js';
import { lookupIp } from '../../src/engine/ip/lookup-ip.js';
import { IP_SCHEMA } from '../../src/output/schemas/ip-schema.js';
import { parseCsv } from '../output/parse-csv.js';
import { runCli } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';

const CREDIT = 'IP geolocation by DB-IP (https://db-ip.com), CC BY 4.0\n';
const INVALID = (input: string) => `${JSON.stringify(input)} is not a valid IPv4 or IPv6 address`;
const PRIVATE = {
  ip: '10.0.0.1',
  type: 'ipv4',
  location: { country: null, country_code: null, region: null, region_code: null, city: null, latitude: null, longitude: null, timezone: null, zip: null },
  network: { isp: null, organization: null, asn: null, domain: null, rpki: null },
  security: { is_vpn: null, is_proxy: null, is_tor: null, is_hosting: null, threat_level: null, threat_rule: null, provider: null, evidence: [], coverage: { consulted: [], missing: [] } },
  reserved: 'private (RFC 1918)',
  meta: { data: {} },
};

describe('netintel ip', () => {
  it('prints one JSON object for a single address and exits 0 with nothing on stderr', async () => {
    const result = await runCli(['ip', '8.8.8.8', '-f', 'json']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout.endsWith('}\n')).toBe(true);
    expect(JSON.parse(result.stdout)).toEqual(lookupIp(createEngineContext(), '8.8.8.8'));
    expect(JSON.parse(result.stdout)).toMatchObject({ ip: '8.8.8.8', network: { asn: 15169, organization: 'Google LLC' } });
  });

  it('prints a JSON array for several addresses, in argument order', async () => {
    const result = await runCli(['ip', '8.8.8.8', '2001:4860:4860::8888', '1.1.1.1', '-f', 'json']);
    expect(result.code).toBe(0);
    const records = JSON.parse(result.stdout) as Array<{ ip: string; network: { asn: number } }>;
    expect(records.map((record) => [record.ip, record.network.asn])).toEqual([
      ['8.8.8.8', 15169],
      ['2001:4860:4860::8888', 15169],
      ['1.1.1.1', 13335],
    ]);
  });

  it('prints the exact ndjson record of a private address', async () => {
    const result = await runCli(['ip', '10.0.0.1', '-f', 'ndjson']);
    expect(result).toEqual({ code: 0, stdout: `${JSON.stringify(PRIVATE)}\n`, stderr: '' });
  });

  it('exits 7 and still prints the good rows when one of three targets is invalid', async () => {
    const result = await runCli(['ip', '8.8.8.8', '1.2.3', '10.0.0.1', '-f', 'csv']);
    expect(result.code).toBe(7);
    expect(result.stderr).toBe(`netintel: ${INVALID('1.2.3')}\n`);
    const rows = parseCsv(result.stdout);
    expect(rows[0]).toEqual(['query', ...IP_SCHEMA.columns, 'error.code', 'error.message']);
    expect(rows.map((row) => [row[0], row[1], row.at(-2), row.at(-1)])).toEqual([
      ['query', 'ip', 'error.code', 'error.message'],
      ['8.8.8.8', '8.8.8.8', '', ''],
      ['1.2.3', '', 'invalid_input', INVALID('1.2.3')],
      ['10.0.0.1', '10.0.0.1', '', ''],
    ]);
  });

  it('prints an invalid single target as a JSON error record on stdout and the message on stderr, exit 2', async () => {
    const result = await runCli(['ip', '1.2.3', '-f', 'json']);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toEqual({ query: '1.2.3', error: { code: 'invalid_input', message: INVALID('1.2.3'), details: { input: '1.2.3' } } });
    expect(result.stderr).toBe(`netintel: ${INVALID('1.2.3')}\n`);
  });

  it('prints nothing on stdout for an invalid single target in the table view', async () => {
    expect(await runCli(['ip', '256.1.1.1'])).toEqual({ code: 2, stdout: '', stderr: `netintel: ${INVALID('256.1.1.1')}\n` });
  });

  it('exits 2 (invalid_input) when every target is invalid, one stderr line each', async () => {
    const result = await runCli(['ip', '1.2.3', '::g', 'fe80::1%eth0', '-f', 'ndjson']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe([INVALID('1.2.3'), INVALID('::g'), INVALID('fe80::1%eth0')].map((m) => `netintel: ${m}\n`).join(''));
    expect(result.stdout.trimEnd().split('\n').map((line) => (JSON.parse(line) as { query: string }).query)).toEqual(['1.2.3', '::g', 'fe80::1%eth0']);
  });

  it('prints the verdict for one address, without the DB-IP credit (stdout is not a terminal) and without colour', async () => {
    const result = await runCli(['ip', '10.0.0.1']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('10.0.0.1  private address (RFC 1918), not routed on the internet\n');
    expect(result.stderr).not.toContain(CREDIT);
    // eslint-disable-next-line no-control-regex
    expect(result.stdout).not.toMatch(/\u001b\[/);
  });

  it('colours the table on a terminal unless NO_COLOR is set', async () => {
    const tty = await runCli(['ip', '10.0.0.1'], { stdoutIsTty: true });
    expect(tty.stdout).toMatch(/\u001b\[1m10\.0\.0\.1\u001b\[22m {2}\u001b\[33m\u001b\[1mprivate address/);
    const noColor = await runCli(['ip', '10.0.0.1'], { stdoutIsTty: true, env: { NO_COLOR: '1' } });
    // eslint-disable-next-line no-control-regex
    expect(noColor.stdout).not.toMatch(/\u001b\[/);
    // eslint-disable-next-line no-control-regex
    expect(tty.stdout.replace(/\u001b\[\d+m/g, '')).toBe(noColor.stdout);
  });

  it('prints csv without a header and only the selected fields', async () => {
    const result = await runCli(['ip', '8.8.8.8', '10.0.0.1', '-f', 'csv', '--no-header', '--fields', 'network.asn,reserved']);
    expect(result).toEqual({ code: 0, stdout: '8.8.8.8,8.8.8.8,15169,,,\n10.0.0.1,10.0.0.1,,private (RFC 1918),,\n', stderr: '' });
  });

  it('projects json to the selected groups', async () => {
    const result = await runCli(['ip', '10.0.0.1', '-f', 'json', '--fields', 'security']);
    // --fields selects the schema's columns: the flat flags (evidence comes with the whole record).
    expect(JSON.parse(result.stdout)).toEqual({ ip: '10.0.0.1', security: { is_vpn: null, is_proxy: null, is_tor: null, is_hosting: null, threat_level: null } });
  });

  it('exits 2 naming an unknown field, with a JSON error record when the format is json', async () => {
    const table = await runCli(['ip', '8.8.8.8', '--fields', 'location,nope']);
    expect(table.code).toBe(2);
    expect(table.stdout).toBe('');
    expect(table.stderr).toBe('netintel: unknown field "nope" for ip records (see --help for the field list)\n');
    const json = await runCli(['ip', '8.8.8.8', '--fields', 'nope', '-f', 'json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: 'usage', details: { field: 'nope' } } });
  });

  it('reads targets from piped stdin, one row per line in order, with a summary on stderr', async () => {
    const result = await runCli(['ip', '-f', 'csv', '--fields', 'network.asn'], { stdin: '8.8.8.8\r\n\n# comment\n1.2.3\n10.0.0.1' });
    expect(result.code).toBe(7);
    expect(result.stdout).toBe(
      'query,ip,network.asn,error.code,error.message\n' +
        '8.8.8.8,8.8.8.8,15169,,\n' +
        `1.2.3,,,invalid_input,"${INVALID('1.2.3').replaceAll('"', '""')}"\n` +
        '10.0.0.1,10.0.0.1,,,\n',
    );
    expect(result.stderr).toBe('netintel: 3 rows, 2 ok, 1 failed (invalid_input: 1)\n');
  });

  it('exits 2 with usage for an unknown flag or format, printing nothing on stdout', async () => {
    const flag = await runCli(['ip', '8.8.8.8', '--bogus']);
    expect(flag.code).toBe(2);
    expect(flag.stdout).toBe('');
    expect(flag.stderr).toContain("unknown option '--bogus'");
    const format = await runCli(['ip', '8.8.8.8', '-f', 'yaml']);
    expect(format.code).toBe(2);
    expect(format.stdout).toBe('');
    expect(format.stderr).toBe("netintel: option '-f, --format <format>' argument 'yaml' is invalid (choose one of: table, json, ndjson, csv, xml, value)\n");
  });

  it('shows help with the DB-IP credit and exits 0', async () => {
    const result = await runCli(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: netintel [options] [command]');
    expect(result.stdout).toContain('IP geolocation by DB-IP (https://db-ip.com), CC BY 4.0');
    expect(result.stdout).toContain('(env: NETINTEL_FORMAT)');
    expect(result.stderr).toBe('');
  });

  it('prints the version and the datasets\' dates and exits 0', async () => {
    const result = await runCli(['--version']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^netintel 0\.2\.0\ndata: dbip-city \d{4}-\d{2} \(DB-IP Lite, CC BY 4\.0\), asn \d{4}-\d{2}-\d{2}, feeds: [^\n]+\n$/);
  });
});

describe('netintel ip with host names', () => {
  let server: DnsTestServer;
  beforeAll(async () => {
    server = await startDnsServer({
      records: [
        { name: 'dual.test', type: 'A', data: '8.8.8.8' },
        { name: 'dual.test', type: 'AAAA', data: '2001:4860:4860::8888' },
        { name: 'lan.test', type: 'A', data: '10.1.2.3' },
      ],
    });
  });
  afterAll(() => server.close());
  const dns = () => ['--resolver', server.address, '--retries', '0', '-t', '1000'];

  it('prints one row per address of a host name, each with the name as query', async () => {
    const result = await runCli(['ip', 'dual.test', 'lan.test', ...dns(), '-f', 'csv', '--fields', 'network.asn,reserved']);
    expect(result).toEqual({
      code: 0,
      stdout:
        'query,ip,network.asn,reserved,error.code,error.message\n' +
        'dual.test,8.8.8.8,15169,,,\n' +
        'dual.test,2001:4860:4860::8888,15169,,,\n' +
        'lan.test,10.1.2.3,,private (RFC 1918),,\n',
      stderr: '',
    });
  });

  it('prints a JSON array even for one host name, since a name may have several addresses', async () => {
    const result = await runCli(['ip', 'lan.test', ...dns(), '-f', 'json', '--fields', 'reserved']);
    expect(JSON.parse(result.stdout)).toEqual([{ ip: '10.1.2.3', reserved: 'private (RFC 1918)' }]);
  });

  it('exits 3 naming NXDOMAIN for a host name that does not exist, and 7 beside a good address', async () => {
    const missing = await runCli(['ip', 'missing.test', ...dns()]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toBe(`netintel: missing.test does not exist (NXDOMAIN) at ${server.address}\n`);
    const mixed = await runCli(['ip', 'missing.test', '8.8.8.8', ...dns(), '-f', 'ndjson']);
    expect(mixed.code).toBe(7);
    expect(mixed.stdout.trimEnd().split('\n')).toHaveLength(2);
  });
});
