/**
 * The human views (format table) of every command fit the width they are
 * given: each case of the golden corpus drawn at 80 columns, run as the
 * built program against the loopback peers, every stdout line measured in
 * display columns (East Asian wide characters count 2, colour codes 0).
 */
import stringWidth from 'string-width';
import stripAnsi from 'strip-ansi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnCli } from '../support/cli.js';
import { goldenCorpus } from './corpus.js';
import { startPeers, type Peers } from './peers.js';

let peers: Peers;

beforeAll(async () => {
  peers = await startPeers();
});

afterAll(async () => {
  await peers?.close();
});

const AT_80 = /^view\/.*(\.80|-all)$/;

describe('human views at 80 columns', () => {
  it('print no stdout line wider than 80 display columns, for every command', async () => {
    const cases = goldenCorpus(peers).filter((testCase) => AT_80.test(testCase.id));
    expect(cases.length).toBeGreaterThanOrEqual(20);
    for (const testCase of cases) {
      expect(testCase.env?.COLUMNS).toBe('80');
      const run = await spawnCli(testCase.argv, { input: testCase.stdin ?? '', env: { ...peers.env, ...testCase.env }, timeoutMs: 60_000 });
      expect(run.stdout, testCase.id).not.toBe('');
      const over = run.stdout.split('\n').filter((line) => stringWidth(stripAnsi(line)) > 80);
      expect(over, `${testCase.id}: lines over 80 columns`).toEqual([]);
    }
  }, 300_000);

  it('fits a narrower width given by COLUMNS too, wide characters counted twice', async () => {
    const run = await spawnCli(['dns', 'long.example.test', '--type', 'TXT', ...peers.dnsFlags, '-f', 'table'], { env: { COLUMNS: '40' }, timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    for (const line of lines) expect(stringWidth(line)).toBeLessThanOrEqual(40);
    // The long TXT string is broken hard, every character kept.
    const text = lines.join('').replace(/[│ ]/g, '');
    expect(text).toContain('a'.repeat(100));
  }, 60_000);

  it('fits summarize\'s tables and bars to 40, 60, 100 and 200 columns, the bars left out only when they cannot fit', async () => {
    for (const columns of [40, 60, 100, 200]) {
      const run = await spawnCli(['summarize', 'test/fixtures/summarize/access-log.txt', '-f', 'table'], { env: { COLUMNS: String(columns) }, timeoutMs: 30_000 });
      expect(run.code).toBe(0);
      const over = run.stdout.split('\n').filter((line) => stringWidth(line) > columns);
      expect(over, `summarize at ${columns} columns`).toEqual([]);
      expect(run.stdout.includes('█'), `bars at ${columns} columns`).toBe(columns >= 60);
    }
  }, 60_000);
});

describe('--all', () => {
  it('shows the fields the default view hides', async () => {
    const plain = await spawnCli(['ip', '10.1.2.3', '-f', 'table'], { env: { COLUMNS: '80' }, timeoutMs: 30_000 });
    const all = await spawnCli(['ip', '10.1.2.3', '--all', '-f', 'table'], { env: { COLUMNS: '80' }, timeoutMs: 30_000 });
    expect(plain.stdout).toContain('private address (RFC 1918)');
    expect(plain.stdout).not.toContain('Location city');
    expect(plain.stdout).not.toContain('Security threat level');
    expect(all.stdout).toMatch(/^Location city +-$/m);
    expect(all.stdout).toMatch(/^Security threat level +-$/m);
    expect(all.stdout).toMatch(/^Reserved +private \(RFC 1918\)$/m);
  }, 60_000);

  it('shows the Unicode domain and the passed checks the mx view leaves out', async () => {
    const argv = ['mx', 'good.test', ...peers.dnsFlags, '-f', 'table'];
    const plain = await spawnCli(argv, { env: { COLUMNS: '100' }, timeoutMs: 30_000 });
    const all = await spawnCli([...argv, '--all'], { env: { COLUMNS: '100' }, timeoutMs: 30_000 });
    expect(plain.stdout).not.toContain('Domain unicode');
    expect(plain.stdout).not.toContain('good.test has 2 MX records');
    expect(all.stdout).toMatch(/^Domain unicode +good\.test$/m);
    expect(all.stdout).toContain('good.test has 2 MX records');
  }, 60_000);
});

describe('on a terminal', () => {
  it("fits the terminal's width (a pseudo-terminal of 50 columns), whatever COLUMNS says", async () => {
    const { execFileSync } = await import('node:child_process');
    const { BIN, REPO_ROOT } = await import('../support/cli.js');
    // script(1) runs the program on a pseudo-terminal; stty sets that terminal's width.
    const command = `stty cols 50 rows 40; COLUMNS=200 NO_COLOR=1 '${process.execPath}' '${BIN}' ip 8.8.8.8 1.1.1.1 2>/dev/null`;
    const output = execFileSync('script', ['-qfec', command, '/dev/null'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 30_000,
      // No config file or NETINTEL_* variable of the machine's.
      env: { PATH: process.env.PATH, TERM: 'xterm', HOME: '/nonexistent', XDG_CONFIG_HOME: '/nonexistent' },
    });
    const lines = output.replaceAll('\r', '').trimEnd().split('\n');
    expect(lines[0]!.startsWith('┌')).toBe(true);
    expect(Math.max(...lines.map((line) => stringWidth(line)))).toBe(50);
    expect(output).toContain('8.8.8.8');
    expect(output).toContain('1.1.1.1');
  }, 60_000);
});
