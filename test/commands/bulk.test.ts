import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { rowsShowEvidence } from '../../src/operations/bulk-threads.js';
import { BULK_SCHEMA } from '../../src/output/schemas/bulk-schema.js';
import { parseCsv } from '../output/parse-csv.js';
import { runCli, tempDir } from '../support/cli.js';
import { writeFixtureIndex } from '../engine/security/fixtures.js';

const INVALID = (input: string) => `${JSON.stringify(input)} is not a valid IPv4 or IPv6 address`;
const scratch = tempDir();
afterAll(() => scratch.remove());

const MIXED = ['# resolvers', '8.8.8.8', '', 'AS15169', 'bad', '  1.1.1.1  ', '# private', '10.0.0.1'].join('\r\n');

describe('netintel bulk', () => {
  it('exits with the same code whatever the order of the lines when every line fails as often with two codes (the lowest exit code)', async () => {
    const forward = await runCli(['bulk', '-q', '-f', 'ndjson'], { stdin: 'bad\nAS0\n' });
    const backward = await runCli(['bulk', '-q', '-f', 'ndjson'], { stdin: 'AS0\nbad\n' });
    expect(forward.stdout.trimEnd().split('\n').map((line) => (JSON.parse(line) as { error: { code: string } }).error.code)).toEqual(['invalid_input', 'not_found']);
    expect([forward.code, backward.code]).toEqual([2, 2]);
  });

  it('prints one row per non-comment line in input order, error rows included, with line numbers', async () => {
    const result = await runCli(['bulk', '-f', 'csv'], { stdin: MIXED });
    expect(result.code).toBe(7);
    const rows = parseCsv(result.stdout);
    expect(rows[0]).toEqual(['query', ...BULK_SCHEMA.columns, 'error.code', 'error.message']);
    const column = (name: string) => rows[0]!.indexOf(name);
    expect(rows.slice(1).map((row) => [row[0], row[column('kind')], row[column('network.asn')], row[column('reserved')], row.at(-1)])).toEqual([
      ['8.8.8.8', 'ip', '15169', '', ''],
      ['AS15169', 'asn', '15169', '', ''],
      ['bad', '', '', '', `line 5: ${INVALID('bad')}`],
      ['1.1.1.1', 'ip', '13335', '', ''],
      ['10.0.0.1', 'ip', '', 'private (RFC 1918)', ''],
    ]);
    expect(result.stderr).toBe('netintel: 5 rows, 4 ok, 1 failed (invalid_input: 1)\n');
  });

  it('silences the summary with -q and with NETINTEL_QUIET', async () => {
    const quiet = await runCli(['bulk', '-q', '-f', 'ndjson'], { stdin: MIXED });
    expect(quiet.code).toBe(7);
    expect(quiet.stderr).toBe('');
    expect(quiet.stdout.trimEnd().split('\n')).toHaveLength(5);
    expect((await runCli(['bulk', '-f', 'ndjson'], { stdin: MIXED, env: { NETINTEL_QUIET: '1' } })).stderr).toBe('');
    expect((await runCli(['bulk', '-f', 'ndjson'], { stdin: MIXED, env: { NETINTEL_QUIET: '0' } })).stderr).not.toBe('');
  });

  it('names each failed line on stderr with -v, before the summary', async () => {
    const result = await runCli(['bulk', '-v', '-f', 'ndjson'], { stdin: '8.8.8.8\nbad\nworse\n' });
    expect(result.stderr).toBe(
      `netintel: line 2: ${INVALID('bad')}\nnetintel: line 3: ${INVALID('worse')}\nnetintel: 3 rows, 1 ok, 2 failed (invalid_input: 2)\n`,
    );
  });

  it('prints error rows as JSON records with the line in their details', async () => {
    const result = await runCli(['bulk', '-f', 'json', '-q'], { stdin: '10.0.0.1\nnope\n' });
    expect(result.code).toBe(7);
    expect(JSON.parse(result.stdout)).toEqual([
      expect.objectContaining({ ip: '10.0.0.1', reserved: 'private (RFC 1918)' }),
      { query: 'nope', error: { code: 'invalid_input', message: `line 2: ${INVALID('nope')}`, details: { input: 'nope', line: 2 } } },
    ]);
  });

  it('exits 0 when every line succeeds', async () => {
    const result = await runCli(['bulk', '-f', 'ndjson'], { stdin: '8.8.8.8\nAS13335\n' });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('netintel: 2 rows, 2 ok, 0 failed\n');
  });

  it('exits 2 when every line is invalid, and 3 when every line is not found', async () => {
    expect((await runCli(['bulk', '-q', '-f', 'csv'], { stdin: 'a\nb\n' })).code).toBe(2);
    const notFound = await runCli(['bulk', '-f', 'csv'], { stdin: 'AS4294967295\nAS4200000000\n' });
    expect(notFound.code).toBe(3);
    expect(notFound.stderr).toBe('netintel: 2 rows, 0 ok, 2 failed (not_found: 2)\n');
  });

  it('prints only the header and exits 0 for input with no targets', async () => {
    const result = await runCli(['bulk', '-f', 'csv'], { stdin: '# nothing\n\n' });
    expect(result).toEqual({
      code: 0,
      stdout: `${['query', ...BULK_SCHEMA.columns, 'error.code', 'error.message'].join(',')}\n`,
      stderr: 'netintel: 0 rows, 0 ok, 0 failed\n',
    });
  });

  it('reads files in order, counting lines within each file and naming it', async () => {
    const a = join(scratch.path, 'a.txt');
    const b = join(scratch.path, 'b.txt');
    writeFileSync(a, '8.8.8.8\nbad'); // no final newline
    writeFileSync(b, '1.1.1.1\nworse\n');
    const result = await runCli(['bulk', a, b, '-f', 'ndjson', '-q']);
    expect(result.code).toBe(7);
    const lines = result.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { ip?: string; error?: { message: string; details: unknown } });
    expect(lines.map((line) => line.ip ?? line.error!.message)).toEqual(['8.8.8.8', `${a} line 2: ${INVALID('bad')}`, '1.1.1.1', `${b} line 2: ${INVALID('worse')}`]);
    expect(lines[3]!.error!.details).toEqual({ input: 'worse', file: b, line: 2 });
  });

  it('reads stdin where a file is named "-"', async () => {
    const a = join(scratch.path, 'one.txt');
    writeFileSync(a, '8.8.8.8\n');
    const result = await runCli(['bulk', a, '-', '-f', 'csv', '--no-header', '--fields', 'network.asn'], { stdin: '1.1.1.1\n' });
    expect(result.stdout).toBe('8.8.8.8,ip,8.8.8.8,15169,,\n1.1.1.1,ip,1.1.1.1,13335,,\n');
  });

  it('exits 2 naming a file it cannot read', async () => {
    const missing = join(scratch.path, 'missing.txt');
    const result = await runCli(['bulk', missing, '-f', 'csv']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`netintel: cannot read ${missing}: no such file or directory (check the path and its permissions)\n`);
    // The JSON error record says it in the same words: the message is made where the file is read.
    const json = await runCli(['bulk', missing, '-f', 'json']);
    expect(JSON.parse(json.stdout).error).toEqual({
      code: 'usage',
      message: `cannot read ${missing}: no such file or directory (check the path and its permissions)`,
      details: { path: missing },
    });
  });

  it('refuses to wait on a terminal: exits 2 when neither a file nor piped input is given', async () => {
    const result = await runCli(['bulk']);
    expect(result).toEqual({ code: 2, stdout: '', stderr: 'netintel: bulk reads targets from files or stdin: give a file, or pipe the list in\n' });
  });

  it('gives the same rows whatever the concurrency', async () => {
    const input = Array.from({ length: 300 }, (_, i) => (i % 7 === 0 ? `bad${i}` : `${1 + (i % 200)}.${i % 256}.${(i * 7) % 256}.1`)).join('\n');
    const one = await runCli(['bulk', '--concurrency', '1', '-f', 'ndjson', '-q'], { stdin: input });
    const many = await runCli(['bulk', '--concurrency', '64', '-f', 'ndjson', '-q'], { stdin: input });
    expect(one.stdout.split('\n')).toHaveLength(301);
    expect(many.stdout).toBe(one.stdout);
  });

  it('keeps one row per line in input order across many input chunks and the switch to in-memory datasets', async () => {
    const lines = Array.from({ length: 6000 }, (_, i) =>
      i % 997 === 0 ? `nope${i}` : i % 1009 === 0 ? 'AS13335' : `${1 + ((i * 37) % 223)}.${(i * 11) % 256}.${(i * 7) % 256}.${i % 256}`,
    );
    const text = `${lines.join('\n')}\n`;
    const chunks = Array.from({ length: Math.ceil(text.length / 4096) }, (_, i) => text.slice(i * 4096, (i + 1) * 4096));
    const result = await runCli(['bulk', '-f', 'csv', '-q'], { stdin: chunks });
    expect(result.code).toBe(7);
    const rows = parseCsv(result.stdout).slice(1);
    expect(rows.map((row) => row[0])).toEqual(lines);
    const column = (name: string) => ['query', ...BULK_SCHEMA.columns, 'error.code', 'error.message'].indexOf(name);
    expect(rows.filter((row) => row[column('error.code')] === 'invalid_input').map((row) => row[0])).toEqual(lines.filter((line) => line.startsWith('nope')));
    const single = await runCli(['bulk', '-f', 'csv', '-q', '--no-header'], { stdin: `${lines[5999]}\n` });
    expect(result.stdout.endsWith(single.stdout)).toBe(true);
  });

  it('selects columns for ASN lines too, filling kind and the IP columns as in csv', async () => {
    const result = await runCli(['bulk', '-f', 'ndjson', '-q', '--fields', 'network.asn'], { stdin: '8.8.8.8\nAS15169\n' });
    expect(result.stdout).toBe('{"kind":"ip","ip":"8.8.8.8","network":{"asn":15169}}\n{"kind":"asn","ip":null,"network":{"asn":15169}}\n');
  });
});

describe('netintel bulk with feeds installed', () => {
  const dataDir = join(scratch.path, 'feeds');
  mkdirSync(dataDir, { recursive: true });
  writeFixtureIndex(dataDir);
  const LISTED = ['185.220.101.1', '45.83.104.20', '8.8.8.8', '3.5.140.1'].join('\n');

  it('prints the same flags in csv (looked up without evidence) as the records in ndjson (with it)', async () => {
    const csv = await runCli(['bulk', '-f', 'csv', '--data-dir', dataDir, '-q'], { stdin: LISTED });
    const ndjson = await runCli(['bulk', '-f', 'ndjson', '--data-dir', dataDir, '-q'], { stdin: LISTED });
    expect([csv.code, ndjson.code]).toEqual([0, 0]);
    const records = ndjson.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { security: Record<string, unknown> & { evidence: unknown[] } });
    expect(records.every((record) => record.security.evidence.length > 0)).toBe(true);
    const rows = parseCsv(csv.stdout);
    const flags = ['is_vpn', 'is_proxy', 'is_tor', 'is_hosting', 'threat_level'];
    const fromCsv = rows.slice(1).map((row) => flags.map((flag) => row[rows[0]!.indexOf(`security.${flag}`)]));
    const fromRecords = records.map((record) => flags.map((flag) => (record.security[flag] === null ? '' : String(record.security[flag]))));
    expect(fromCsv).toEqual(fromRecords);
    expect(fromCsv[0]).toEqual(['true', 'false', 'true', 'false', 'high']);
  });

  it('keeps the evidence in json, ndjson and xml records, and leaves it out of a --fields selection', async () => {
    for (const format of ['json', 'xml']) {
      const whole = await runCli(['bulk', '-f', format, '--data-dir', dataDir, '-q'], { stdin: '185.220.101.1' });
      expect(whole.stdout).toContain('tor-exit-addresses');
    }
    const chosen = await runCli(['bulk', '-f', 'json', '--data-dir', dataDir, '-q', '--fields', 'security'], { stdin: '185.220.101.1' });
    expect(JSON.parse(chosen.stdout)[0].security).toEqual({ is_vpn: true, is_proxy: false, is_tor: true, is_hosting: false, threat_level: 'high' });
  });
});

describe('rowsShowEvidence', () => {
  it.each([
    ['csv', null, false],
    ['table', null, false],
    ['csv', ['location', 'security'], false],
    ['json', null, true],
    ['ndjson', null, true],
    ['xml', null, true],
    ['json', ['ip', 'security'], false],
  ] as const)('%s with fields %j: %s', (format, fields, shows) => {
    expect(rowsShowEvidence(format, fields)).toBe(shows);
  });
});
