/**
 * A reader that goes away (`| head`) ends a run quietly: no summary on
 * stderr and exit 0, whatever the rows it never read would have said
 * (docs/exit-codes.md). Each command runs as a process writing into a real
 * pipe whose reader takes the first lines and then closes its end while
 * the command still has much more to write. Needs `npm run build` first.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, isolatedEnv, REPO_ROOT, tempDir } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { zoneRecords } from '../engine/blacklist/dnsbl-fixtures.js';

const scratch = tempDir();
let dns: DnsTestServer;

beforeAll(async () => {
  dns = await startDnsServer({ records: zoneRecords('bl.example.test', { '192.0.2.99': { a: ['127.0.0.2'], txt: 'listed' } }) });
});

afterAll(async () => {
  await dns?.close();
  scratch.remove();
});

interface ClosedRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  lines: string[];
  stderr: string;
}

/**
 * Runs netintel with `stdinFile` as stdin; reads `keep` lines of its stdout
 * and then closes the pipe's reading end, as `head -n keep` does.
 */
async function runIntoClosedPipe(argv: string[], stdinFile: string, keep: number): Promise<ClosedRun> {
  const { openSync, closeSync } = await import('node:fs');
  const input = openSync(stdinFile, 'r');
  const child = spawn(process.execPath, [BIN, ...argv], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, ...isolatedEnv(), NETINTEL_RESOLVER: dns.address, NETINTEL_RETRIES: '0' },
    stdio: [input, 'pipe', 'pipe'],
  });
  closeSync(input);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  let seen = '';
  let lines: string[] = [];
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    if (lines.length > 0) return;
    seen += text;
    const parts = seen.split('\n');
    if (parts.length > keep) {
      lines = parts.slice(0, keep);
      child.stdout.destroy();
    }
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])));
  clearTimeout(timer);
  return { code, signal, lines, stderr };
}

/** Lines of a list, every tenth one not an address (so that a whole run would exit 7). */
function listWithFailures(count: number, address: (index: number) => string): string {
  return `${Array.from({ length: count }, (_, i) => (i % 10 === 9 ? `bad-${i}` : address(i))).join('\n')}\n`;
}

describe('a reader that goes away', () => {
  it('bulk: no summary, exit 0, though failed rows were among those it never read', async () => {
    const list = join(scratch.path, 'bulk.txt');
    writeFileSync(list, listWithFailures(20_000, (i) => `${1 + (i % 223)}.${(i >> 8) & 255}.${i & 255}.${1 + (i % 250)}`));
    for (const threads of ['1', '2']) {
      const run = await runIntoClosedPipe(['bulk', '-f', 'csv', '--threads', threads], list, 2);
      expect(run.lines[0]!.startsWith('query,kind,ip,')).toBe(true);
      expect(run.lines[1]!.startsWith('1.0.0.1,ip,1.0.0.1,')).toBe(true);
      expect({ code: run.code, signal: run.signal, stderr: run.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
    }
  });

  it('the whole run, had its reader stayed, would have exited 7 with a summary', async () => {
    const list = join(scratch.path, 'short.txt');
    writeFileSync(list, listWithFailures(10, (i) => `192.0.2.${i + 1}`));
    const child = spawn(process.execPath, [BIN, 'bulk', '-f', 'csv'], { cwd: REPO_ROOT, env: { PATH: process.env.PATH, ...isolatedEnv() }, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.end(await import('node:fs').then((fs) => fs.readFileSync(list)));
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.stdout.resume();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(7);
    expect(stderr).toBe('netintel: 10 rows, 9 ok, 1 failed (invalid_input: 1)\n');
  });

  it('blacklist of a list: no summary, exit 0', async () => {
    const list = join(scratch.path, 'blacklist.txt');
    writeFileSync(list, listWithFailures(3000, (i) => `192.0.2.${(i % 250) + 1}`));
    const run = await runIntoClosedPipe(['blacklist', '--zones', 'bl.example.test:ip', '-f', 'ndjson'], list, 1);
    expect(JSON.parse(run.lines[0]!)).toMatchObject({ kind: 'blacklist', target: '192.0.2.1' });
    expect({ code: run.code, signal: run.signal, stderr: run.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
  });

  it('grep, as text and as records: exit 0, nothing on stderr', async () => {
    const log = join(scratch.path, 'access.log');
    writeFileSync(log, Array.from({ length: 40_000 }, (_, i) => `198.51.100.${i % 256} - - [27/Nov/2026:10:00:00 +0000] "GET /${i} HTTP/1.1" 200 512\n`).join(''));
    for (const format of ['table', 'ndjson']) {
      const run = await runIntoClosedPipe(['grep', '-o', '-f', format], log, 2);
      expect(run.lines[0]).toMatch(/198\.51\.100\.0/);
      expect({ format, code: run.code, signal: run.signal, stderr: run.stderr }).toEqual({ format, code: 0, signal: null, stderr: '' });
    }
  });

  it('summarize: a report larger than the pipe holds, cut short: exit 0, nothing on stderr', async () => {
    const list = join(scratch.path, 'summarize.txt');
    // Many networks, so that the CSV report of every one (--top large) is far over a pipe's 64 KiB.
    writeFileSync(list, listWithFailures(20_000, (i) => `${1 + (i % 223)}.${(i * 7) & 255}.${(i >> 3) & 255}.1`));
    const run = await runIntoClosedPipe(['summarize', '-f', 'csv', '--top', '1000'], list, 1);
    expect(run.lines).toHaveLength(1);
    expect({ code: run.code, signal: run.signal, stderr: run.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
  });
});
