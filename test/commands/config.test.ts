/**
 * Where settings come from: flag > environment (NETINTEL_*) > config file
 * ($XDG_CONFIG_HOME/netintel/config.json or $NETINTEL_CONFIG) > default.
 * The environment is the CLI's own (io.env), never the test runner's.
 */
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { runCli, tempDir, writeConfigFile } from '../support/cli.js';

const scratch = tempDir();
afterAll(() => scratch.remove());
afterEach(() => vi.unstubAllEnvs());

/** Which format a run printed 10.0.0.1 in. */
function formatOf(stdout: string): string {
  if (stdout.startsWith('query,')) return 'csv';
  if (stdout.startsWith('<?xml')) return 'xml';
  if (stdout.startsWith('{\n')) return 'json';
  if (stdout.startsWith('{"')) return 'ndjson';
  // The human view: a table of many records, or one record's headline (`10.0.0.1  private address ...`).
  if (stdout.startsWith('┌') || /^\S+ {2}\S/.test(stdout)) return 'table';
  return `unknown: ${JSON.stringify(stdout.slice(0, 40))}`;
}

describe('settings precedence', () => {
  const xdg = writeConfigFile(join(scratch.path, 'precedence'), { format: 'csv' });

  it('uses the default (table) with no flag, variable or config file', async () => {
    expect(formatOf((await runCli(['ip', '10.0.0.1'])).stdout)).toBe('table');
  });

  it('takes the config file over the default', async () => {
    expect(formatOf((await runCli(['ip', '10.0.0.1'], { env: { XDG_CONFIG_HOME: xdg } })).stdout)).toBe('csv');
  });

  it('takes the environment over the config file', async () => {
    const result = await runCli(['ip', '10.0.0.1'], { env: { XDG_CONFIG_HOME: xdg, NETINTEL_FORMAT: 'ndjson' } });
    expect(formatOf(result.stdout)).toBe('ndjson');
  });

  it('takes a flag over the environment and the config file', async () => {
    const result = await runCli(['ip', '10.0.0.1', '-f', 'xml'], { env: { XDG_CONFIG_HOME: xdg, NETINTEL_FORMAT: 'ndjson' } });
    expect(formatOf(result.stdout)).toBe('xml');
    expect(formatOf((await runCli(['ip', '10.0.0.1', '--format=json'], { env: { XDG_CONFIG_HOME: xdg } })).stdout)).toBe('json');
  });

  it('treats an empty variable as unset', async () => {
    expect(formatOf((await runCli(['ip', '10.0.0.1'], { env: { XDG_CONFIG_HOME: xdg, NETINTEL_FORMAT: '' } })).stdout)).toBe('csv');
  });

  it('reads the variables of its own environment, not of the process', async () => {
    vi.stubEnv('NETINTEL_FORMAT', 'xml');
    vi.stubEnv('NETINTEL_FIELDS', 'nope');
    const result = await runCli(['ip', '10.0.0.1']);
    expect(result.code).toBe(0);
    expect(formatOf(result.stdout)).toBe('table');
  });

  it('reads the file NETINTEL_CONFIG names instead of the XDG one', async () => {
    const path = join(scratch.path, 'custom.json');
    writeFileSync(path, JSON.stringify({ format: 'ndjson', fields: 'network' }));
    const result = await runCli(['ip', '10.0.0.1'], { env: { XDG_CONFIG_HOME: xdg, NETINTEL_CONFIG: path } });
    expect(result.stdout).toBe('{"ip":"10.0.0.1","network":{"isp":null,"organization":null,"asn":null,"domain":null,"rpki":null}}\n');
  });

  it('applies every kind of setting from the config file: fields, header, quiet, concurrency', async () => {
    const dir = writeConfigFile(join(scratch.path, 'all'), { format: 'csv', fields: 'network.asn', header: false, quiet: true, concurrency: 2, 'data-dir': scratch.path, resolver: '127.0.0.1' });
    const result = await runCli(['bulk'], { stdin: '8.8.8.8\n', env: { XDG_CONFIG_HOME: dir } });
    expect(result).toEqual({ code: 0, stdout: '8.8.8.8,ip,8.8.8.8,15169,,\n', stderr: '' });
  });
});

describe('invalid settings', () => {
  it('exits 2 with one line naming the config file and its limit when it is /dev/zero, without reading it all', async () => {
    const result = await runCli(['ip', '10.0.0.1'], { env: { NETINTEL_CONFIG: '/dev/zero' } });
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: 'netintel: the config file /dev/zero is larger than the limit of 1 MiB (1048576 bytes); fix or remove it (NETINTEL_CONFIG names another)\n',
    });
  });

  it('exits 2 the same way for a FIFO whose writer never stops, instead of reading for ever', async () => {
    const fifo = join(scratch.path, 'config.fifo');
    execFileSync('mkfifo', [fifo]);
    const writer = spawn('sh', ['-c', `exec yes '{"format": "csv",' > '${fifo}'`], { stdio: 'ignore' });
    try {
      const result = await runCli(['ip', '10.0.0.1'], { env: { NETINTEL_CONFIG: fifo } });
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(`netintel: the config file ${fifo} is larger than the limit of 1 MiB (1048576 bytes); fix or remove it (NETINTEL_CONFIG names another)\n`);
    } finally {
      writer.kill();
    }
  });

  it('exits 2 naming the config file when it is not valid JSON', async () => {
    const dir = writeConfigFile(join(scratch.path, 'broken'), '{"format": ');
    const path = join(dir, 'netintel', 'config.json');
    const result = await runCli(['ip', '10.0.0.1', '-f', 'csv'], { env: { XDG_CONFIG_HOME: dir } });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.startsWith(`netintel: the config file ${path} is not valid JSON: `)).toBe(true);
  });

  it('writes the config error as a JSON record on stdout when json is asked for by flag', async () => {
    const dir = writeConfigFile(join(scratch.path, 'broken-json'), '[1, 2]');
    const path = join(dir, 'netintel', 'config.json');
    const result = await runCli(['ip', '10.0.0.1', '-f', 'json'], { env: { XDG_CONFIG_HOME: dir } });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`netintel: the config file ${path} must hold a JSON object\n`);
    expect(JSON.parse(result.stdout)).toEqual({ error: { code: 'usage', message: `the config file ${path} must hold a JSON object`, details: { path } } });
  });

  it('writes the config error as a JSON record when ndjson comes from -fndjson or from NETINTEL_FORMAT', async () => {
    const dir = writeConfigFile(join(scratch.path, 'broken-ndjson'), '{');
    const short = await runCli(['ip', '10.0.0.1', '-fndjson'], { env: { XDG_CONFIG_HOME: dir } });
    expect(JSON.parse(short.stdout)).toMatchObject({ error: { code: 'usage' } });
    const fromEnv = await runCli(['ip', '10.0.0.1'], { env: { XDG_CONFIG_HOME: dir, NETINTEL_FORMAT: 'json' } });
    expect(JSON.parse(fromEnv.stdout)).toMatchObject({ error: { code: 'usage' } });
    const table = await runCli(['ip', '10.0.0.1', '--format=table'], { env: { XDG_CONFIG_HOME: dir, NETINTEL_FORMAT: 'json' } });
    expect(table.stdout).toBe('');
  });

  it('exits 2 naming the file and the key for a bad value', async () => {
    const dir = writeConfigFile(join(scratch.path, 'bad-format'), { format: 'yaml' });
    const path = join(dir, 'netintel', 'config.json');
    const result = await runCli(['ip', '10.0.0.1'], { env: { XDG_CONFIG_HOME: dir } });
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: `netintel: config file ${path}: "format": format must be one of table, json, ndjson, csv, xml, value, not "yaml"\n`,
    });
    const timeout = writeConfigFile(join(scratch.path, 'bad-timeout'), { timeout: 0 });
    const second = await runCli(['ip', '10.0.0.1'], { env: { XDG_CONFIG_HOME: timeout } });
    expect(second.code).toBe(2);
    expect(second.stderr).toContain('"timeout": timeout must be an integer from 1 to 600000, not "0"');
    // A path given as something else is not dropped unseen (the IANA root would then apply without a word).
    const anchor = writeConfigFile(join(scratch.path, 'bad-anchor'), { 'trust-anchor': 5 });
    const third = await runCli(['dns', 'example.com', '--dnssec'], { env: { XDG_CONFIG_HOME: anchor } });
    expect(third.code).toBe(2);
    expect(third.stderr).toBe(`netintel: config file ${join(anchor, 'netintel', 'config.json')}: "trust-anchor": trust-anchor must be a string, not 5\n`);
  });

  it('exits 2 naming the variable for a bad NETINTEL_* value', async () => {
    const format = await runCli(['ip', '10.0.0.1'], { env: { NETINTEL_FORMAT: 'yaml' } });
    expect(format).toEqual({ code: 2, stdout: '', stderr: 'netintel: NETINTEL_FORMAT: format must be one of table, json, ndjson, csv, xml, value, not "yaml"\n' });
    const concurrency = await runCli(['bulk'], { stdin: '', env: { NETINTEL_CONCURRENCY: '-3' } });
    expect(concurrency.code).toBe(2);
    expect(concurrency.stderr).toBe('netintel: NETINTEL_CONCURRENCY: concurrency must be an integer from 1 to 10000, not "-3"\n');
  });

  it('lets a valid flag stand in for nothing: a bad config fails even when the flag would override it', async () => {
    const dir = writeConfigFile(join(scratch.path, 'bad-but-overridden'), { format: 'yaml' });
    expect((await runCli(['ip', '10.0.0.1', '-f', 'csv'], { env: { XDG_CONFIG_HOME: dir } })).code).toBe(2);
  });
});
