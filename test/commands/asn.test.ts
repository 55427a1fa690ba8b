import { describe, expect, it } from 'vitest';
import { ASN_SCHEMA } from '../../src/output/schemas/asn-schema.js';
import { parseCsv } from '../output/parse-csv.js';
import { runCli } from '../support/cli.js';

describe('netintel asn', () => {
  it('prints one JSON object for AS15169 with its prefixes and counts', async () => {
    const result = await runCli(['asn', 'AS15169', '-f', 'json']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const record = JSON.parse(result.stdout) as { asn: number; organization: string; prefixes: { ipv4: string[] }; counts: { ipv4_prefixes: number } };
    expect(record).toMatchObject({ kind: 'asn', query: 'AS15169', asn: 15169, organization: 'Google LLC', ip: null, route: null });
    expect(record.prefixes.ipv4).toContain('8.8.8.0/24');
    expect(record.counts.ipv4_prefixes).toBe(record.prefixes.ipv4.length);
  });

  it('splits a comma-separated list mixing IPs and AS numbers, in order', async () => {
    const result = await runCli(['asn', '8.8.8.8,AS13335', '1.1.1.1', '-f', 'ndjson']);
    expect(result.code).toBe(0);
    const records = result.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { query: string; asn: number; route: string | null });
    expect(records.map((record) => [record.query, record.asn])).toEqual([
      ['8.8.8.8', 15169],
      ['AS13335', 13335],
      ['1.1.1.1', 13335],
    ]);
    expect(records[0]!.route).toBe('8.8.8.0/24');
  });

  it('keeps the prefix lists of a csv row inside their own quoted cells', async () => {
    const result = await runCli(['asn', 'AS15169', '8.8.8.8', '-f', 'csv']);
    expect(result.code).toBe(0);
    const rows = parseCsv(result.stdout);
    const width = ASN_SCHEMA.columns.length + 3;
    expect(rows.map((row) => row.length)).toEqual([width, width, width]);
    const byNumber = Object.fromEntries(rows[0]!.map((column, i) => [column, rows[1]![i]]));
    expect(byNumber.organization).toBe('Google LLC');
    expect(JSON.parse(byNumber['prefixes.ipv4']!)).toContain('8.8.8.0/24');
    const byIp = Object.fromEntries(rows[0]!.map((column, i) => [column, rows[2]![i]]));
    expect(byIp).toMatchObject({ query: '8.8.8.8', asn: '15169', ip: '8.8.8.8', route: '8.8.8.0/24', 'prefixes.ipv4': '' });
  });

  it('exits 3 (not_found) for an AS that announces nothing', async () => {
    const result = await runCli(['asn', 'AS4294967295']);
    expect(result).toEqual({ code: 3, stdout: '', stderr: 'netintel: AS4294967295 announces no prefix in the ASN data\n' });
  });

  it('exits 2 (invalid_input) for text that is neither an AS number nor an IP', async () => {
    const result = await runCli(['asn', 'garbage', '-f', 'json']);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toEqual({
      query: 'garbage',
      error: {
        code: 'invalid_input',
        message: '"garbage" is neither an AS number (AS15169, 15169) nor an IP address',
        details: { input: 'garbage' },
      },
    });
  });

  it('exits 7 when some targets fail, naming each failure on stderr', async () => {
    const result = await runCli(['asn', 'AS13335,10.0.0.1', '-f', 'ndjson']);
    expect(result.code).toBe(7);
    expect(result.stderr).toBe('netintel: 10.0.0.1 is private (RFC 1918): no autonomous system announces it\n');
    expect(result.stdout.trimEnd().split('\n')).toHaveLength(2);
  });

  it('exits with the most frequent failure code when every target fails', async () => {
    const result = await runCli(['asn', '10.0.0.1', 'garbage', 'AS4294967295', '-f', 'csv']);
    expect(result.code).toBe(3);
    expect(parseCsv(result.stdout).map((row) => row.at(-2))).toEqual(['error.code', 'not_found', 'invalid_input', 'not_found']);
  });

  it('exits 2 when no target is given', async () => {
    const result = await runCli(['asn']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("missing required argument 'targets'");
  });
});
