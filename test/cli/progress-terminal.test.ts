/**
 * The spinner and the progress line on a real pseudo-terminal: util-linux
 * `script -qfec` gives `node bin/netintel.js` a TTY on stdin, stdout and
 * stderr, and copies what the program draws on it to script's stdout. The
 * run asks a loopback DNS server that answers each question late, so every
 * lookup is a slow network wait. Needs `npm run build` (the built program).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { BIN, isolatedEnv, tempDir } from '../support/cli.js';
import { EXAMPLE_ZONE } from '../engine/dns/example-zone.js';
import { MAIL_ZONE } from '../engine/mail/mail-zone.js';
import { writeFixtureIndex } from '../engine/security/fixtures.js';

const HAS_SCRIPT = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;
if (!HAS_SCRIPT) {
  // Said out loud: a silently skipped terminal test would read as a pass.
  console.warn('SKIPPED: util-linux `script` is not installed; the pseudo-terminal tests of the spinner did not run');
}

const DELAY_MS = 900;
const scratch = tempDir('netintel-progress-');
let dns: DnsTestServer;
let dnsFlags: string[];
/** An SMTP server that greets late and answers every command late. */
let slowSmtp: Server;

beforeAll(async () => {
  dns = await startDnsServer({
    records: [...MAIL_ZONE, ...EXAMPLE_ZONE, ...Array.from({ length: 8 }, (_, i) => ({ name: `host${i}.example.test`, type: 'A' as const, data: `192.0.2.${i + 1}` }))],
    delayMs: DELAY_MS,
    behaviours: { 'silent.example.test': 'silent' },
  });
  dnsFlags = ['--resolver', dns.address, '--retries', '0', '--timeout', '10000'];
  slowSmtp = createServer((socket) => {
    socket.on('error', () => {});
    setTimeout(() => socket.write('220 slow.example.test ESMTP\r\n'), 1200);
    socket.on('data', (data) => {
      const line = data.toString('latin1');
      setTimeout(() => {
        if (/^EHLO/i.test(line)) socket.write('250-slow.example.test\r\n250 PIPELINING\r\n');
        else if (/^QUIT/i.test(line)) socket.end('221 bye\r\n');
        else socket.write('250 ok\r\n');
      }, 300);
    });
  });
  await new Promise<void>((resolve) => slowSmtp.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await new Promise((resolve) => slowSmtp?.close(resolve));
  await dns?.close();
  scratch.remove();
});

interface TerminalRun {
  /** Everything drawn on the terminal (stdout and stderr of the program, as the terminal got them). */
  screen: string;
  code: number | null;
}

const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

/**
 * Runs a shell command line on a pseudo-terminal. `interruptAfterMs`: Ctrl-C is typed then (a SIGINT to
 * the terminal's foreground process group).
 */
function onTerminal(commandLine: string, options: { env?: Record<string, string>; interruptAfterMs?: number; cols?: number } = {}): Promise<TerminalRun> {
  const env = { PATH: process.env.PATH, TERM: 'xterm', ...isolatedEnv(options.env) };
  return new Promise((resolve, reject) => {
    // A fresh pseudo-terminal may report no size; a spinner needs a width to redraw its line.
    const child = spawn('script', ['-qfec', `stty cols ${options.cols ?? 120} rows 40; ${commandLine}`, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    if (options.interruptAfterMs !== undefined) setTimeout(() => child.stdin.write('\u0003'), options.interruptAfterMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ screen: Buffer.concat(chunks).toString('utf8'), code });
    });
  });
}

/**
 * The shell words of `node bin/netintel.js ARGS`, killed if it outlives the
 * test (a killed `script` may leave it running); --foreground keeps it in
 * the terminal's process group, where Ctrl-C reaches it.
 */
const netintel = (args: string[]) => ['timeout', '--foreground', '-s', 'KILL', '40', process.execPath, BIN, ...args].map(quote).join(' ');
const HIDE_CURSOR = '\u001b[?25l';
const SHOW_CURSOR = '\u001b[?25h';

describe.skipIf(!HAS_SCRIPT)('progress on a terminal', () => {
  it('names the DNS question a slow lookup waits on, then erases the spinner and shows the cursor again', async () => {
    const run = await onTerminal(netintel(['dns', 'example.test', '--type', 'MX', ...dnsFlags]));
    expect(run.code).toBe(0);
    expect(run.screen).toContain('resolving example.test MX...');
    expect(run.screen).toContain(HIDE_CURSOR);
    expect(run.screen.lastIndexOf(SHOW_CURSOR)).toBeGreaterThan(run.screen.lastIndexOf('resolving example.test'));
    // The answer is there, and no spinner frame is drawn after the cursor came back.
    expect(run.screen).toContain('mx1.example.test');
    expect(run.screen.slice(run.screen.lastIndexOf(SHOW_CURSOR))).not.toContain('resolving');
  });

  it('names the SMTP stage a probe waits on, not the reverse lookup beside it', async () => {
    const port = (slowSmtp.address() as AddressInfo).port;
    const run = await onTerminal(netintel(['smtp', '127.0.0.1', '--port', String(port), '-f', 'json', ...dnsFlags]));
    expect(run.screen).toContain(`probing 127.0.0.1:${port} (greeting)...`);
    expect(run.screen).not.toContain('PTR...');
  });

  it('colours the spinner symbol, and not under NO_COLOR', async () => {
    const coloured = await onTerminal(netintel(['dns', 'example.test', '--type', 'MX', ...dnsFlags]));
    expect(coloured.screen).toMatch(/\u001b\[36m[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]\u001b\[39m resolving/);
    const plain = await onTerminal(netintel(['dns', 'example.test', '--type', 'MX', '-f', 'json', ...dnsFlags]), { env: { NO_COLOR: '1' } });
    expect(plain.screen).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] resolving example\.test MX\.\.\./);
    expect(plain.screen).not.toMatch(/\u001b\[3\dm/);
  });

  it('shows nothing when stderr is not the terminal, and nothing under -q', async () => {
    const stderrFile = join(scratch.path, 'stderr.txt');
    const piped = await onTerminal(`${netintel(['dns', 'example.test', '--type', 'MX', ...dnsFlags])} 2>${quote(stderrFile)}`);
    expect(piped.code).toBe(0);
    expect(piped.screen).toContain('mx1.example.test');
    expect(piped.screen).not.toContain('resolving');
    expect(piped.screen).not.toContain(HIDE_CURSOR);
    expect(readFileSync(stderrFile, 'utf8')).toBe('');

    const quiet = await onTerminal(netintel(['dns', 'example.test', '--type', 'MX', '-q', ...dnsFlags]));
    expect(quiet.screen).toContain('mx1.example.test');
    expect(quiet.screen).not.toContain('resolving');
    expect(quiet.screen).not.toContain(HIDE_CURSOR);
  });

  it('erases the spinner before each diagnostic line and draws it again below', async () => {
    const run = await onTerminal(netintel(['mx', 'good.test', '-v', '-f', 'json', ...dnsFlags]));
    expect(run.code).toBe(0);
    const diagnostics = [...run.screen.matchAll(/netintel: mail dns: /g)].map((match) => match.index!);
    expect(diagnostics.length).toBeGreaterThan(1);
    expect(run.screen).toContain('resolving ');
    for (const at of diagnostics) {
      // What precedes a line is the erase of the spinner's line (ESC [0K after ESC [1G), or the end of another line.
      expect(run.screen.slice(at - 12, at), JSON.stringify(run.screen.slice(at - 60, at + 20))).toMatch(/(\u001b\[0K(\u001b\[1G)?|\n)$/);
    }
  });

  it('never writes the spinner to stdout', async () => {
    const stdoutFile = join(scratch.path, 'stdout.json');
    const run = await onTerminal(`${netintel(['dns', 'example.test', '--type', 'MX', '-f', 'json', ...dnsFlags])} >${quote(stdoutFile)}`);
    expect(run.screen).toContain('resolving example.test MX...');
    const stdout = readFileSync(stdoutFile, 'utf8');
    expect(stdout).not.toContain('resolving');
    expect(JSON.parse(stdout)).toMatchObject({ domain: 'example.test' });
  });

  it('shows nothing for an answer faster than the spinner delay', async () => {
    const run = await onTerminal(netintel(['ip', '8.8.8.8', '-f', 'json']));
    expect(run.code).toBe(0);
    expect(run.screen).not.toContain(HIDE_CURSOR);
  });

  it('draws a progress line for a slow list read from a file (rows, rate, ETA) and erases it, the summary staying', async () => {
    const list = join(scratch.path, 'hosts.txt');
    writeFileSync(list, Array.from({ length: 6 }, (_, i) => `host${i}.example.test\n`).join(''));
    const stdoutFile = join(scratch.path, 'rows.csv');
    const run = await onTerminal(`${netintel(['ip', '-f', 'csv', '--concurrency', '1', ...dnsFlags])} <${quote(list)} >${quote(stdoutFile)}`);
    expect(run.code).toBe(0);
    expect(run.screen).toMatch(/\d rows?, [\d.]+\/s, \d+%, ETA \d+s/);
    expect(readFileSync(stdoutFile, 'utf8').trimEnd().split('\n')).toHaveLength(7);
    expect(run.screen).toMatch(/(\n|\u001b\[0K(\u001b\[1G)?)netintel: 6 rows, 6 ok/);
    // Erased: after the last progress line only erasing, the cursor and the summary come.
    const tail = run.screen.slice(run.screen.lastIndexOf('/s, '));
    expect(tail).toContain(SHOW_CURSOR);
    const afterShow = run.screen.slice(run.screen.lastIndexOf(SHOW_CURSOR) + SHOW_CURSOR.length);
    expect(afterShow).not.toMatch(/rows?, /);
  });

  it('draws the progress line of a long bulk run, rows made lazily or on worker threads, and leaves the summary', async () => {
    const list = join(scratch.path, 'ips.txt');
    writeFileSync(list, Array.from({ length: 60_000 }, (_, i) => `${(i % 200) + 1}.${i % 251}.${(i >> 8) % 256}.${i % 199}\n`).join(''));
    const run = await onTerminal(`${netintel(['bulk', list, '-f', 'csv', '--threads', '2'])} >/dev/null`);
    expect(run.code).toBe(0);
    const lines = [...run.screen.matchAll(/([\d,]+) rows, [\d,.]+\/s, (\d+)%, ETA \d+(m\d\ds|s)/g)];
    expect(lines.length).toBeGreaterThan(0);
    const counts = lines.map((line) => Number(line[1]!.replace(/,/g, '')));
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(counts.at(-1)).toBeLessThanOrEqual(60_000);
    const summary = run.screen.lastIndexOf('netintel: 60000 rows, 60000 ok');
    expect(summary).toBeGreaterThan(run.screen.indexOf(lines[0]![0]));
    // Erased at the end: the cursor comes back after the last progress line.
    expect(run.screen.lastIndexOf(SHOW_CURSOR)).toBeGreaterThan(run.screen.lastIndexOf('rows, '));
  });

  it('restores the cursor when the run is interrupted with Ctrl-C', async () => {
    const started = Date.now();
    // The name is never answered: the run waits for its 20 s deadline unless interrupted.
    const run = await onTerminal(netintel(['dns', 'silent.example.test', '--type', 'MX', '--resolver', dns.address, '--retries', '0', '--timeout', '20000']), {
      interruptAfterMs: 2000,
    });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(run.code).toBe(130);
    expect(run.screen).toContain('resolving silent.example.test MX...');
    expect(run.screen.lastIndexOf(SHOW_CURSOR)).toBeGreaterThan(run.screen.lastIndexOf(HIDE_CURSOR));
  });

  it('erases the spinner before data written to a pipe whose reader prints on the same terminal (| jq)', async () => {
    // stdout a pipe into cat, which copies the JSON onto the terminal the spinner is drawn on.
    const run = await onTerminal(`${netintel(['dns', 'example.test', '--type', 'MX', '-j', ...dnsFlags])} | cat`);
    expect(run.code).toBe(0);
    expect(run.screen).toContain('resolving example.test MX...');
    const data = run.screen.indexOf('{');
    expect(data).toBeGreaterThan(0);
    // Between the last frame and the data: the line erased (ESC [0K), the cursor back, no frame after.
    const before = run.screen.slice(run.screen.lastIndexOf('resolving', data), data);
    expect(before, JSON.stringify(before)).toMatch(/\u001b\[0K(\u001b\[1G)?(\u001b\[\?25h)*$/);
    expect(run.screen.slice(data)).not.toContain('resolving');
    expect(run.screen.slice(data)).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
    expect(JSON.parse(run.screen.slice(data).replace(/\u001b\[[?\d;]*[A-Za-z]/g, ''))).toMatchObject({ domain: 'example.test' });
  });

  it('erases the spinner and shows the cursor before a crash is reported', async () => {
    const fault = join(scratch.path, 'fault.cjs');
    writeFileSync(fault, "setTimeout(() => { throw new Error('planted fault'); }, 1500);");
    const run = await onTerminal(netintel(['dns', 'silent.example.test', '--type', 'MX', '--resolver', dns.address, '--retries', '0', '--timeout', '20000']), {
      env: { NODE_OPTIONS: `--require ${fault}` },
    });
    expect(run.code).toBe(1);
    expect(run.screen).toContain('resolving silent.example.test MX...');
    const report = run.screen.indexOf('netintel: internal error: planted fault');
    expect(report).toBeGreaterThan(0);
    // The cursor is back and the line cleared before the report; no frame is drawn after it.
    expect(run.screen.lastIndexOf(SHOW_CURSOR, report)).toBeGreaterThan(run.screen.lastIndexOf('resolving', report));
    expect(run.screen.slice(report)).not.toContain('resolving');
  });
});

describe.skipIf(!HAS_SCRIPT)('the server on a terminal', () => {
  it('shows no spinner while it serves a request that waits on DNS', async () => {
    const env = { PATH: process.env.PATH, TERM: 'xterm', ...isolatedEnv() };
    const db = join(scratch.path, 'serve-keys.db');
    const line = netintel(['serve', '--port', '0', '--no-accounts', '--db', db, ...dnsFlags]);
    const child = spawn('script', ['-qfec', `stty cols 120 rows 40; ${line}`, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let screen = '';
    const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.on('error', reject);
        child.stdout.on('data', (chunk: Buffer) => {
          screen += chunk.toString('utf8');
          const listening = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(screen);
          if (listening) resolve(listening[1]!);
        });
      });
      // The lookup waits DELAY_MS on the DNS server: a CLI run would show its spinner by then.
      const response = await fetch(`${url}/api/dns-lookup?domain=example.test&type=MX`);
      expect(response.status, await response.text()).toBe(200);
      child.stdin.write('\u0003');
      await closed;
    } finally {
      clearTimeout(killer);
    }
    expect(screen).toContain('GET /api/dns-lookup');
    expect(screen).not.toContain('resolving');
    expect(screen).not.toContain(HIDE_CURSOR);
  });
});

describe.skipIf(!HAS_SCRIPT)('the missing-feeds hint', () => {
  const HINT = 'netintel: Tor and proxy feeds are not installed: run "netintel data update" for a complete verdict';
  let homes = 0;
  /** A data home of its own: the hint's daily stamp lives in the data dir. */
  const freshDataHome = () => {
    const dir = join(scratch.path, `data-home-${++homes}`);
    mkdirSync(dir);
    return { XDG_DATA_HOME: dir };
  };

  it('says once per run that Tor and proxy feeds are missing', async () => {
    const run = await onTerminal(netintel(['vpn', '185.220.101.1', '8.8.8.8', '-f', 'csv']), { env: freshDataHome() });
    expect(run.code).toBe(0);
    expect(run.screen.split(HINT)).toHaveLength(2);
  });

  it('says it at most once a day: a stamp in the data dir', async () => {
    const env = freshDataHome();
    expect((await onTerminal(netintel(['ip', '8.8.8.8']), { env })).screen).toContain('not installed');
    const stamp = join(env.XDG_DATA_HOME, 'netintel', 'feeds-hint.stamp');
    expect(existsSync(stamp)).toBe(true);
    expect((await onTerminal(netintel(['vpn', '185.220.101.1']), { env })).screen).not.toContain('not installed');
    // A day later it is due again.
    const dayAgo = new Date(Date.now() - 25 * 60 * 60 * 1000);
    utimesSync(stamp, dayAgo, dayAgo);
    expect((await onTerminal(`echo 185.220.101.1 | ${netintel(['summarize'])}`, { env })).screen).toContain('not installed');
  });

  it('says nothing with a usage error, or when the verdict is not shown', async () => {
    const usage = await onTerminal(netintel(['ip', '8.8.8.8', '--fields', 'nope']), { env: freshDataHome() });
    expect(usage.code).toBe(2);
    expect(usage.screen).toContain('unknown field "nope"');
    expect(usage.screen).not.toContain('not installed');
    const city = await onTerminal(netintel(['ip', '8.8.8.8', '--fields', 'location.city']), { env: freshDataHome() });
    expect(city.code).toBe(0);
    expect(city.screen).not.toContain('not installed');
    expect((await onTerminal(netintel(['ip', '8.8.8.8', '--fields', 'security.is_tor']), { env: freshDataHome() })).screen).toContain('not installed');
  });

  it('fits the width of the terminal', async () => {
    const run = await onTerminal(netintel(['vpn', '185.220.101.1', '-f', 'csv']), { env: freshDataHome(), cols: 60 });
    const lines = run.screen.split(/\r?\n/).filter((line) => line.includes('not installed') || line.includes('complete verdict'));
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(60);
  });

  it('says nothing under -q, when stderr is not the terminal, or with the feeds installed', async () => {
    expect((await onTerminal(netintel(['vpn', '185.220.101.1', '-q']), { env: freshDataHome() })).screen).not.toContain('not installed');
    expect((await onTerminal(`${netintel(['vpn', '185.220.101.1'])} 2>/dev/null`, { env: freshDataHome() })).screen).not.toContain('not installed');
    const data = join(scratch.path, 'feeds');
    mkdirSync(data);
    writeFixtureIndex(data);
    expect((await onTerminal(netintel(['vpn', '185.220.101.1', '--data-dir', data]))).screen).not.toContain('not installed');
  });
});
