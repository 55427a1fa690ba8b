/**
 * `netintel range`, and ranges given to `ip` and `bulk`: the real program,
 * in process (runCli) and, for the bulk worker threads, as a child process
 * of the built CLI (spawnCli).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expandRangeTargets } from '../../src/engine/ip/ip-range-expand.js';
import { parseCsv } from '../output/parse-csv.js';
import { runCli, spawnCli } from '../support/cli.js';
import { fuzz } from '../engine/hostile-inputs.js';

describe('netintel range', () => {
  it('prints first, last, count and the network facts of a CIDR as one JSON object', async () => {
    const result = await runCli(['range', '10.0.0.0/8', '-f', 'json']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({
      kind: 'range',
      input: '10.0.0.0/8',
      version: 4,
      form: 'cidr',
      first: '10.0.0.0',
      last: '10.255.255.255',
      count: '16777216',
      cidrs: ['10.0.0.0/8'],
      network: {
        cidr: '10.0.0.0/8',
        prefix_length: 8,
        netmask: '255.0.0.0',
        hostmask: '0.255.255.255',
        broadcast: '10.255.255.255',
        hosts: '16777214',
        first_host: '10.0.0.1',
        last_host: '10.255.255.254',
      },
    });
  });

  it('gives the minimal CIDR list of an a-b range, space-separated in csv and alone with -f value', async () => {
    const csv = await runCli(['range', '192.0.2.5-192.0.2.77', '2001:db8::/32', '-f', 'csv']);
    expect(csv.code).toBe(0);
    const rows = parseCsv(csv.stdout);
    const column = (name: string) => rows[0]!.indexOf(name);
    expect(rows.slice(1).map((row) => [row[column('count')], row[column('cidrs')], row[column('network.broadcast')]])).toEqual([
      ['73', '192.0.2.5/32 192.0.2.6/31 192.0.2.8/29 192.0.2.16/28 192.0.2.32/27 192.0.2.64/29 192.0.2.72/30 192.0.2.76/31', ''],
      ['79228162514264337593543950336', '2001:db8::/32', ''],
    ]);
    const value = await runCli(['range', '2001:db8::5-2001:db8::8', '-f', 'value']);
    expect(value.stdout).toBe('2001:db8::5/128 2001:db8::6/127 2001:db8::8/128\n');
  });

  it('shows a verdict headline, the facts and the blocks in the human view, within 80 columns', async () => {
    const result = await runCli(['range', '192.0.2.5-192.0.2.77']);
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('192.0.2.5-192.0.2.77  73 addresses · 8 CIDR blocks');
    expect(result.stdout).toContain('CIDR blocks (8)');
    expect(result.stdout).toContain('192.0.2.76/31');
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThanOrEqual(80);
  });

  it('refuses a start after its end with one line and exit 2, and goes on past it over several ranges', async () => {
    const bad = await runCli(['range', '192.0.2.9-192.0.2.1']);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toBe('netintel: "192.0.2.9-192.0.2.1" is not a valid range (its start is after its end; write the lower address first: 192.0.2.1-192.0.2.9)\n');
    const some = await runCli(['range', '192.0.2.0/24', '192.0.2.0/33', '-f', 'ndjson']);
    expect(some.code).toBe(7);
    expect(some.stdout.trimEnd().split('\n')).toHaveLength(2);
  });

  it('is arithmetic on this machine: a server named by --server or NETINTEL_SERVER is not asked', async () => {
    const flag = await runCli(['range', '10.0.0.0/30', '-f', 'value', '--server', 'http://127.0.0.1:9']);
    expect([flag.code, flag.stdout, flag.stderr]).toEqual([0, '10.0.0.0/30\n', '']);
    const env = await runCli(['range', '10.0.0.0/30', '-f', 'value'], { env: { NETINTEL_SERVER: 'http://127.0.0.1:9' } });
    expect([env.code, env.stdout]).toEqual([0, '10.0.0.0/30\n']);
  });

  it('reads ranges from stdin, one per line, and asks for one when given nothing', async () => {
    const piped = await runCli(['range', '-f', 'ndjson'], { stdin: '# blocks\n10.0.0.0/30\n\n::/0\n' });
    expect(piped.code).toBe(0);
    expect(piped.stdout.trimEnd().split('\n').map((line) => (JSON.parse(line) as { count: string }).count)).toEqual(['4', '340282366920938463463374607431768211456']);
    const none = await runCli(['range']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^netintel: range needs a CIDR or an a-b range/);
  });
});

describe('ranges in ip and bulk', () => {
  it('ip expands a small CIDR to one row per address, in order, in a JSON array', async () => {
    const result = await runCli(['ip', '192.0.2.0/30', '2001:db8::fffe-2001:db8::1:1', '-f', 'json']);
    expect(result.code).toBe(0);
    const records = JSON.parse(result.stdout) as Array<{ query: string; ip: string }>;
    expect(records.map((record) => record.ip)).toEqual(['192.0.2.0', '192.0.2.1', '192.0.2.2', '192.0.2.3', '2001:db8::fffe', '2001:db8::ffff', '2001:db8::1:0', '2001:db8::1:1']);
  });

  it('ip refuses a range over --max-expand with one line naming the range and its size, exit 2', async () => {
    const result = await runCli(['ip', '10.0.0.0/8']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'netintel: range 10.0.0.0/8 holds 16777216 addresses, more than --max-expand 256 (raise --max-expand up to 16777216, or list its blocks with netintel range 10.0.0.0/8)\n',
    );
    const raised = await runCli(['ip', '192.0.2.0/23', '--max-expand', '512', '-f', 'csv', '--fields', 'ip']);
    expect(raised.code).toBe(0);
    expect(parseCsv(raised.stdout)).toHaveLength(513);
    const bad = await runCli(['ip', '192.0.2.0/30', '--max-expand', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--max-expand must be an integer from 1 to 16777216, not "0"');
  });

  it('ip expands ranges piped on stdin as well', async () => {
    const result = await runCli(['ip', '-f', 'csv', '--fields', 'ip'], { stdin: '8.8.8.8\n192.0.2.1-192.0.2.3\n' });
    expect(result.code).toBe(0);
    expect(parseCsv(result.stdout).slice(1).map((row) => row[1])).toEqual(['8.8.8.8', '192.0.2.1', '192.0.2.2', '192.0.2.3']);
  });

  it('bulk gives a range line its addresses\' rows in place, and one error row with its line number above the cap', async () => {
    const input = ['8.8.8.8', '1.1.1.0/31', '10.0.0.0/23', '8.8.4.4-8.8.4.5', '9.9.9.9-1.1.1.1', 'AS13335'].join('\n');
    const result = await runCli(['bulk', '-f', 'csv', '--fields', 'network.asn'], { stdin: input });
    expect(result.code).toBe(7);
    const rows = parseCsv(result.stdout);
    expect(rows.slice(1).map((row) => [row[0], row.at(-1)])).toEqual([
      ['8.8.8.8', ''],
      ['1.1.1.0', ''],
      ['1.1.1.1', ''],
      ['10.0.0.0/23', 'line 3: range 10.0.0.0/23 holds 512 addresses, more than --max-expand 256 (raise --max-expand up to 16777216, or list its blocks with netintel range 10.0.0.0/23)'],
      ['8.8.4.4', ''],
      ['8.8.4.5', ''],
      ['9.9.9.9-1.1.1.1', 'line 5: "9.9.9.9-1.1.1.1" is not a valid range (its start is after its end; write the lower address first: 1.1.1.1-9.9.9.9)'],
      ['AS13335', ''],
    ]);
    expect(result.stderr).toBe('netintel: 8 rows, 6 ok, 2 failed (invalid_input: 2)\n');
  });

  it('bulk worker threads make the same rows for ranges past the first targets, the cap named in their errors', async () => {
    // 8192 targets run on the main thread; what follows goes to the worker threads.
    const input = ['10.0.0.0/19', '192.0.2.0/30', '10.1.0.0/16', '8.8.8.8'].join('\n');
    const result = await spawnCli(['bulk', '--threads', '2', '--max-expand', '8192', '-f', 'csv', '--fields', 'ip', '-v'], { input, timeoutMs: 60_000 });
    expect(result.code).toBe(7);
    expect(result.stderr).toContain('bulk: 1 worker thread from target 8193 on');
    const [header, ...rows] = parseCsv(result.stdout);
    const ip = header!.indexOf('ip');
    expect(rows).toHaveLength(8192 + 4 + 1 + 1);
    expect(rows[8191]![ip]).toBe('10.0.31.255');
    expect(rows.slice(8192).map((row) => [row[ip], row.at(-1)])).toEqual([
      ['192.0.2.0', ''],
      ['192.0.2.1', ''],
      ['192.0.2.2', ''],
      ['192.0.2.3', ''],
      ['', 'line 3: range 10.1.0.0/16 holds 65536 addresses, more than --max-expand 8192 (raise --max-expand up to 16777216, or list its blocks with netintel range 10.1.0.0/16)'],
      ['8.8.8.8', ''],
    ]);
  }, 90_000);

  it('expandRangeTargets: rows are predictable (a range within the cap gives its size, anything else one) and keep their line', async () => {
    const line = fc.oneof(
      fc.constantFrom('8.8.8.8', 'AS15169', 'bogus', '2001:db8::1', '192.0.2.9-192.0.2.1', '10.0.0.0/8'),
      fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 24, max: 32 })).map(([octet, prefix]) => `198.51.${octet}.0/${prefix}`),
      fc.tuple(fc.integer({ min: 0, max: 0xffff - 600 }), fc.integer({ min: 0, max: 600 })).map(([start, length]) => `2001:db8::${start.toString(16)}-2001:db8::${(start + length).toString(16)}`),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(line, { maxLength: 20 }), fc.integer({ min: 1, max: 512 }), async (lines, cap) => {
        const targets = lines.map((text, i) => ({ text, line: i + 1 }));
        const out: Array<{ text: string; line: number }> = [];
        for await (const batch of expandRangeTargets([targets], cap)) out.push(...batch);
        const expected = targets.flatMap((target) => {
          const cidr = /\/(\d+)$/.exec(target.text);
          const dash = /^2001:db8::([0-9a-f]+)-2001:db8::([0-9a-f]+)$/.exec(target.text);
          const size = cidr && target.text.startsWith('198.51.') ? 2 ** (32 - Number(cidr[1])) : dash ? parseInt(dash[2]!, 16) - parseInt(dash[1]!, 16) + 1 : 0;
          return size > 0 && size <= cap ? Array.from({ length: size }, () => target.line) : [target.line];
        });
        expect(out.map((target) => target.line)).toEqual(expected);
      }),
      fuzz(200),
    );
  });
});
