/**
 * The built program as users run it: `node bin/netintel.js` in a child
 * process, real pipes, real exit codes. Needs `npm run build` first (the
 * `test` script builds).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, isolatedEnv, REPO_ROOT, spawnCli, tempDir } from '../support/cli.js';

const scratch = tempDir();
afterAll(() => scratch.remove());

beforeAll(() => {
  if (!existsSync(join(REPO_ROOT, 'dist'))) throw new Error('dist/ is missing: run `npm run build` before the process tests');
});

/** Lines a failed Node process or an unhandled stream error would leave on stderr. */
const CRASH_SIGNS = /EPIPE|Error:|Unhandled|\n\s+at /;

describe('netintel as a process', () => {
  it('prints one csv row without header for `ip 8.8.8.8 -f csv --no-header` and exits 0', async () => {
    const result = await spawnCli(['ip', '8.8.8.8', '-f', 'csv', '--no-header']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const lines = result.stdout.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe('');
    expect(lines[0]!.startsWith('8.8.8.8,8.8.8.8,ipv4,United States,US,')).toBe(true);
    expect(lines[0]).toContain(',Google LLC,Google LLC,15169,,unknown,no_dataset,false,,,true,unknown,,,');
  });

  it('exits 7 with good rows on stdout and the failure on stderr when one of three targets is invalid', async () => {
    const result = await spawnCli(['ip', '8.8.8.8', 'not/an/ip', '1.1.1.1', '-f', 'ndjson']);
    expect(result.code).toBe(7);
    expect(result.stderr).toBe('netintel: "not/an/ip" is not a valid IPv4 or IPv6 address\n');
    const rows = result.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { ip?: string; query?: string });
    expect(rows.map((row) => row.ip ?? row.query)).toEqual(['8.8.8.8', 'not/an/ip', '1.1.1.1']);
  });

  it('exits 3 with nothing on stdout for an AS that announces nothing', async () => {
    const result = await spawnCli(['asn', 'AS4294967295']);
    expect(result).toMatchObject({ code: 3, stdout: '', stderr: 'netintel: AS4294967295 announces no prefix in the ASN data\n' });
  });

  it('exits 2 for a usage error, the message on stderr only', async () => {
    const result = await spawnCli(['ip', '8.8.8.8', '--format', 'yaml']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("argument 'yaml' is invalid");
  });

  it('takes a /dev/null stdin (cron, services) as no list: ip asks for the public address, dns wants a domain', async () => {
    const ip = await spawnCli(['ip', '-t', '300', '-f', 'json'], { devNullStdin: true });
    expect(ip.stderr).not.toMatch(/0 rows/);
    // Offline (as here) the public-address lookup fails with its own message; online it answers.
    if (ip.code === 0) expect(JSON.parse(ip.stdout)).toMatchObject({ ip: expect.any(String) });
    else expect(ip.stderr).toContain('cannot find your public IP');
    const dns = await spawnCli(['dns'], { devNullStdin: true });
    expect(dns).toMatchObject({ code: 2, stdout: '' });
    expect(dns.stderr).toContain('dns needs a domain or an IP address');
    // An empty pipe is still a list: no rows, exit 0.
    const piped = await spawnCli(['ip', '-f', 'csv', '--no-header'], { input: '' });
    expect(piped).toMatchObject({ code: 0, stdout: '' });
  });

  it('shows the DB-IP credit in --help', async () => {
    const result = await spawnCli(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('IP geolocation by DB-IP (https://db-ip.com), CC BY 4.0');
    expect(result.stderr).toBe('');
  });

  it('reads bulk input from a pipe, one row per line, summary on stderr', async () => {
    const result = await spawnCli(['bulk', '-f', 'csv', '--fields', 'network.asn', '--no-header'], { input: '8.8.8.8\r\n# c\nAS13335\nbad\n' });
    expect(result.code).toBe(7);
    expect(result.stdout).toBe('8.8.8.8,ip,8.8.8.8,15169,,\nAS13335,asn,,13335,,\nbad,,,,invalid_input,"line 4: ""bad"" is not a valid IPv4 or IPv6 address"\n');
    expect(result.stderr).toBe('netintel: 3 rows, 2 ok, 1 failed (invalid_input: 1)\n');
  });

  it('ends quietly and quickly when `netintel bulk` of 20,000 lines is piped into `head -5`', async () => {
    const input = join(scratch.path, 'ips.txt');
    const errors = join(scratch.path, 'stderr.txt');
    const lines = Array.from({ length: 20_000 }, (_, i) => `${1 + (i % 223)}.${(i >> 8) & 255}.${i & 255}.${1 + (i % 250)}`);
    writeFileSync(input, `${lines.join('\n')}\n`);
    const started = Date.now();
    const shell = spawn('bash', ['-c', 'node "$0" bulk -f csv < "$1" 2> "$2" | head -5; echo "netintel-status=${PIPESTATUS[0]}"', BIN, input, errors], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, ...isolatedEnv() },
    });
    let stdout = '';
    shell.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => shell.on('close', resolve));
    const elapsedMs = Date.now() - started;

    expect(code).toBe(0);
    const out = stdout.split('\n');
    expect(out.slice(0, 5)).toHaveLength(5);
    expect(out[0]!.startsWith('query,kind,ip,')).toBe(true);
    expect(out.slice(1, 5).map((line) => line.split(',')[0])).toEqual(lines.slice(0, 4));
    expect(out[5]).toBe('netintel-status=0');
    const stderr = readFileSync(errors, 'utf8');
    expect(stderr).not.toMatch(CRASH_SIGNS);
    // A reader gone: no summary (docs/exit-codes.md).
    expect(stderr).toBe('');
    expect(elapsedMs).toBeLessThan(10_000);
  });

  it('stops reading when its reader goes away, even with stdin left open', async () => {
    const child = spawn(process.execPath, [BIN, 'bulk', '-f', 'ndjson'], { cwd: REPO_ROOT, env: { PATH: process.env.PATH, ...isolatedEnv() } });
    const line = '8.8.8.8\n';
    child.stdin.on('error', () => {});
    child.stdin.write(line.repeat(20_000)); // and never end it
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let seen = '';
    child.stdout.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.split('\n').length > 5) child.stdout.destroy();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('exit', (c, s) => resolve([c, s])));
    clearTimeout(timer);
    expect(signal).toBeNull();
    expect(code).toBe(0);
    expect(stderr).not.toMatch(CRASH_SIGNS);
  });
});
