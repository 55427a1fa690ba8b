import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, REPO_ROOT, runCli, spawnCli, tempDir } from '../support/cli.js';

const fixture = (name: string) => join(REPO_ROOT, 'test', 'fixtures', 'grep', name);
const scratch = tempDir();
afterAll(() => scratch.remove());

describe('netintel grep', () => {
  it('reads a 20 MB line of colons and digits in a small heap: no run that long is read as address groups', async () => {
    const path = join(scratch.path, 'colons.log');
    writeFileSync(path, `${'1:'.repeat(10_000_000)}1\nhost 192.0.2.7 up\n`);
    // Reading every group of the run took about 14 bytes of heap per byte of it: V8 gave up (exit 133 with a native stack).
    const small = { env: { NODE_OPTIONS: '--max-old-space-size=40' }, timeoutMs: 60_000 };
    const grep = await spawnCli(['grep', '-o', path], small);
    expect(grep.stderr).toBe('');
    expect(grep).toMatchObject({ code: 0, stdout: '192.0.2.7\n' });
    const summary = await spawnCli(['summarize', path, '-f', 'json'], small);
    expect(summary.code, summary.stderr).toBe(0);
    expect(JSON.parse(summary.stdout)).toMatchObject({ totals: { lines: 2, addresses: 1, unique: 1 } });
  });

  it('finds the addresses of real-looking mail headers, with line numbers, and nothing else', async () => {
    const result = await runCli(['grep', '-on', fixture('mail-headers.txt')]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(readFileSync(fixture('mail-headers.expected'), 'utf8'));
  });

  // The log and its expected addresses: node bench/grep-log.js 2000 20261127 test/fixtures/grep/access-log.expected > test/fixtures/grep/access-log.txt
  it('finds every address of a generated web-server log, in order', async () => {
    const result = await runCli(['grep', '-o', fixture('access-log.txt')]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(readFileSync(fixture('access-log.expected'), 'utf8'));
  });

  it('prints whole matching lines by default, file names with several inputs, from stdin too', async () => {
    const text = 'no address\nhost 192.0.2.1 up\r\nalso none 1.2.3\n[2001:db8::1]:443';
    const path = join(scratch.path, 'a.txt');
    writeFileSync(path, text);
    expect((await runCli(['grep'], { stdin: text })).stdout).toBe('host 192.0.2.1 up\n[2001:db8::1]:443\n');
    const two = await runCli(['grep', '-n', path, '-'], { stdin: text });
    expect(two.stdout).toBe(`${path}:2:host 192.0.2.1 up\n${path}:4:[2001:db8::1]:443\n(standard input):2:host 192.0.2.1 up\n(standard input):4:[2001:db8::1]:443\n`);
    expect((await runCli(['grep', '--no-filename', '-o', path, path])).stdout).toBe('192.0.2.1\n2001:db8::1\n192.0.2.1\n2001:db8::1\n');
  });

  it('filters by version, reserved ranges and first occurrence; takes CIDRs with --cidr', async () => {
    const text = '8.8.8.8 10.0.0.1 2606:4700::1111 ::1\n8.8.8.8 10.0.0.0/8 2001:db8::/32 9.9.9.0/24\n';
    expect((await runCli(['grep', '-o', '--v4'], { stdin: text })).stdout).toBe('8.8.8.8\n10.0.0.1\n8.8.8.8\n10.0.0.0\n9.9.9.0\n');
    expect((await runCli(['grep', '-o', '--v6'], { stdin: text })).stdout).toBe('2606:4700::1111\n::1\n2001:db8::\n');
    expect((await runCli(['grep', '--unique', '--exclude-reserved'], { stdin: text })).stdout).toBe('8.8.8.8\n2606:4700::1111\n9.9.9.0\n');
    expect((await runCli(['grep', '-o', '--cidr', '--exclude-reserved'], { stdin: text })).stdout).toBe('8.8.8.8\n2606:4700::1111\n8.8.8.8\n9.9.9.0/24\n');
  });

  it('finds an IPv4-mapped address followed by a port with --v6, as IPv6 text', async () => {
    const text = 'tcp6 0 0 ::ffff:1.2.3.4:80 ::ffff:198.51.100.7:51234 ESTABLISHED\n';
    expect(await runCli(['grep', '-o', '--v6'], { stdin: text })).toEqual({ code: 0, stdout: '::ffff:1.2.3.4\n::ffff:198.51.100.7\n', stderr: '' });
    const v4 = await runCli(['grep', '-o', '--v4'], { stdin: text });
    expect([v4.code, v4.stdout]).toEqual([3, '']);
  });

  it('treats a trailing :: alike after IPv4 and IPv6: part of the run, which is then no address', async () => {
    for (const text of ['peer 1.2.3.4::\n', 'peer 2001:db8::1::\n', 'peer ::ffff:1.2.3.4::\n']) {
      const result = await runCli(['grep', '-o'], { stdin: text });
      expect([result.code, result.stdout], text).toEqual([3, '']);
    }
    expect((await runCli(['grep', '-o'], { stdin: 'peer 1.2.3.4: and 2001:db8::1: up\n' })).stdout).toBe('1.2.3.4\n2001:db8::1\n');
  });

  it('works on this machine whatever NETINTEL_SERVER says: it makes no lookups', async () => {
    const result = await runCli(['grep', '-o'], { stdin: 'a 8.8.8.8\n', env: { NETINTEL_SERVER: 'http://127.0.0.1:9' } });
    expect([result.code, result.stdout, result.stderr]).toEqual([0, '8.8.8.8\n', '']);
  });

  it('gives each address as a record in data formats', async () => {
    const result = await runCli(['grep', '-f', 'ndjson', '--cidr'], { stdin: 'a\nb 10.0.0.0/8 and ::FFFF:8.8.8.8\n' });
    expect(result.code).toBe(0);
    expect(result.stdout.trimEnd().split('\n').map((line) => JSON.parse(line))).toEqual([
      { address: '10.0.0.0/8', canonical: '10.0.0.0/8', version: 4, prefix_length: 8, reserved: 'private (RFC 1918)', file: null, line: 2, column: 3 },
      { address: '::FFFF:8.8.8.8', canonical: '8.8.8.8', version: 6, prefix_length: null, reserved: null, file: null, line: 2, column: 18 },
    ]);
  });

  it('counts with -c as grep -c does: matching lines per input, named with several; addresses with -o or -u', async () => {
    const text = 'one 192.0.2.1 and 192.0.2.1\nnone\n[2001:db8::1]:443 198.51.100.7\n';
    const path = join(scratch.path, 'count.txt');
    const empty = join(scratch.path, 'count-none.txt');
    writeFileSync(path, text);
    writeFileSync(empty, 'no address here\n');
    expect(await runCli(['grep', '-c', path])).toEqual({ code: 0, stdout: '2\n', stderr: '' });
    expect((await runCli(['grep', '--count'], { stdin: text })).stdout).toBe('2\n');
    expect((await runCli(['grep', '-c', path, empty])).stdout).toBe(`${path}:2\n${empty}:0\n`);
    expect((await runCli(['grep', '-co', path])).stdout).toBe('4\n');
    expect((await runCli(['grep', '-cu', path, '-'], { stdin: text })).stdout).toBe(`${path}:3\n(standard input):0\n`);
    expect((await runCli(['grep', '-c', '--v6', '--no-filename', path, path])).stdout).toBe('1\n1\n');
    // Nothing found: the count, and the exit and line of a grep that found nothing.
    const none = await runCli(['grep', '-c', empty]);
    expect(none).toMatchObject({ code: 3, stdout: '0\n' });
    expect(none.stderr).toContain('no IPv4 or IPv6 address in the input');
    const json = await runCli(['grep', '-c', '-f', 'csv', path]);
    expect(json.code).toBe(2);
    expect(json.stderr).toContain('--count prints counts as text');
  });

  it('leaves -c to grep: concurrency is --concurrency only, which grep and every command still take', async () => {
    const text = '192.0.2.1\n';
    expect((await runCli(['grep', '-c', '--concurrency', '3'], { stdin: text })).stdout).toBe('1\n');
    expect((await runCli(['--concurrency', '3', 'grep', '-o'], { stdin: text })).stdout).toBe('192.0.2.1\n');
    const ip = await runCli(['ip', '192.0.2.1', '-c', '3']);
    expect(ip.code).toBe(2);
    expect(ip.stderr).toContain("unknown option '-c'");
    expect((await runCli(['ip', '192.0.2.1', '--concurrency', '3', '-f', 'value', '--fields', 'ip'])).stdout).toBe('192.0.2.1\n');
  });

  it('exits 3 when no address is found, and 2 with one line for a file it cannot read', async () => {
    const message = 'netintel: no IPv4 or IPv6 address in the input (see netintel grep --help for what counts as one)\n';
    const none = await runCli(['grep'], { stdin: 'nothing 1.2.3.4.5 here\n' });
    expect([none.code, none.stdout, none.stderr]).toEqual([3, '', message]);
    const noneJson = await runCli(['grep', '-f', 'json'], { stdin: 'nothing\n' });
    expect([noneJson.code, JSON.parse(noneJson.stdout), noneJson.stderr]).toEqual([3, [], message]);
    const missing = await runCli(['grep', join(scratch.path, 'missing.txt')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^netintel: cannot read .*missing\.txt: no such file or directory \(check the path and its permissions\)\n$/);
  });

  it('shows the control characters of a whole line escaped, on a terminal with the addresses in colour', () => {
    const path = join(scratch.path, 'control.txt');
    writeFileSync(path, 'host 192.0.2.1 \u001b[31mred\n');
    const onTerminal = (env: Record<string, string>) =>
      spawnSync('script', ['-qfec', `node "${BIN}" grep -n "${path}"`, '/dev/null'], { encoding: 'utf8', env: { ...process.env, ...env } }).stdout;
    const plain = onTerminal({ NO_COLOR: '1' });
    expect(plain).toContain('1:host 192.0.2.1 \\x1b[31mred');
    expect(plain).not.toContain('\u001b');
    // With colour: the line number green, the address bold red, the line's own escape still escaped.
    const colored = onTerminal({ TERM: 'xterm' });
    expect(colored).toContain('\u001b[32m1\u001b[39m\u001b[36m:\u001b[39mhost \u001b[31m\u001b[1m192.0.2.1\u001b[22m\u001b[39m \\x1b[31mred');
    const pipe = spawnSync(process.execPath, [BIN, 'grep', path], { encoding: 'utf8' });
    expect(pipe.stdout).toBe('host 192.0.2.1 \\x1b[31mred\n');
  });

  it('stops quietly when the reader goes away (| head), having read only part of a large input', () => {
    const path = join(scratch.path, 'big.log');
    writeFileSync(path, 'client 203.0.113.5 GET /\n'.repeat(400_000));
    const run = spawnSync('bash', ['-c', `node "${BIN}" grep -o "${path}" | head -2; echo "status \${PIPESTATUS[0]}"`], { encoding: 'utf8' });
    expect(run.stdout).toBe('203.0.113.5\n203.0.113.5\nstatus 0\n');
    expect(run.stderr).toBe('');
  });
});
