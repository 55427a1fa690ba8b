/**
 * Help fits the terminal: every command's and subcommand's `--help` at
 * 60, 80, 120 and 200 columns has no line wider than the width, but for
 * one unbreakable word wider than it (a long URL in an example). A bare
 * `netintel` prints a short usage, one line a command, and exits 2.
 */
import { describe, expect, it } from 'vitest';
import { COMMAND_NAMES } from '../../src/app/main.js';
import { displayWidth } from '../../src/output/human/display-width.js';
import { wrapHelpText } from '../../src/cli/help-layout.js';
import { runCli } from '../support/cli.js';

const WIDTHS = [60, 80, 120, 200];

/** The subcommands a help lists under "Commands:" (`help` aside). */
function subcommandsIn(help: string): string[] {
  const section = help.split('\nCommands:\n')[1]?.split('\n\n')[0] ?? '';
  return section
    .split('\n')
    .map((line) => /^ {2}([a-z][\w-]*)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && name !== 'help');
}

/** The lines wider than `width` that are not one unbreakable word wider than it. */
function overflowing(text: string, width: number): string[] {
  return text.split('\n').filter((line) => displayWidth(line) > width && !(line.trim().split(' ').length === 1 && displayWidth(line.trim()) > width));
}

async function helpOf(path: string[], width: number): Promise<string> {
  const run = await runCli([...path, '--help'], { env: { COLUMNS: String(width) } });
  expect(run.code, run.stderr).toBe(0);
  return run.stdout;
}

describe('help at the width of the terminal', () => {
  it('fits every command and subcommand at 60, 80, 120 and 200 columns', async () => {
    const paths: string[][] = [[]];
    for (const name of COMMAND_NAMES) {
      paths.push([name]);
      for (const sub of subcommandsIn(await helpOf([name], 80))) paths.push([name, sub]);
    }
    // The commands with subcommands are among those checked.
    expect(paths).toContainEqual(['accounts', 'set-plan']);
    expect(paths).toContainEqual(['data', 'update']);
    for (const width of WIDTHS) {
      for (const path of paths) {
        const help = await helpOf(path, width);
        expect(overflowing(help, width), `netintel ${path.join(' ')} --help at ${width} columns`).toEqual([]);
      }
    }
  });

  it('uses the width it is given: a wide terminal gets long lines, not 80 columns', async () => {
    const wide = await helpOf(['serve'], 200);
    expect(Math.max(...wide.split('\n').map((line) => displayWidth(line)))).toBeGreaterThan(120);
  });

  it('wraps a long line under its description column, and never breaks a word', () => {
    const line = '  --db <path>   key database: a SQLite file, or postgres://user:password@host:port/db shared by several servers';
    expect(wrapHelpText(line, 60).split('\n')).toEqual([
      '  --db <path>   key database: a SQLite file, or',
      '                postgres://user:password@host:port/db shared',
      '                by several servers',
    ]);
    expect(wrapHelpText(`  netintel data update --feed azure=https://example.com/${'x'.repeat(60)}`, 40).split('\n')).toEqual([
      '  netintel data update --feed',
      `azure=https://example.com/${'x'.repeat(60)}`,
    ]);
  });
});

describe('help text refilled', () => {
  it('refills a paragraph at the margin that does not fit, a heading ending in a colon standing apart, and an indented list going on after commas', () => {
    const text = [
      'Each source updates on its own: one that fails keeps its installed version.',
      'Downloads honour HTTPS_PROXY.',
      'Examples:',
      '  netintel data update',
      'Fields:',
      '  source, type, status, url, path, version, updated, entries,',
      '  bytes, duration_ms',
    ].join('\n');
    expect(wrapHelpText(text, 40).split('\n')).toEqual([
      'Each source updates on its own: one that',
      'fails keeps its installed version.',
      'Downloads honour HTTPS_PROXY.',
      'Examples:',
      '  netintel data update',
      'Fields:',
      '  source, type, status, url, path,',
      '  version, updated, entries, bytes,',
      '  duration_ms',
    ]);
    // What fits stays as it was written.
    expect(wrapHelpText(text, 100)).toBe(text);
  });
});

describe('netintel without a command', () => {
  it('prints the commands one line each and where the whole help is, on stderr, and exits 2', async () => {
    const run = await runCli([], { env: { COLUMNS: '80' } });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines.length).toBeLessThan(COMMAND_NAMES.length + 10);
    for (const name of COMMAND_NAMES) expect(lines.filter((line) => line.startsWith(`  ${name} `))).toHaveLength(1);
    expect(run.stderr).toContain('netintel help <command>');
    expect(run.stderr).toContain('--help');
    for (const width of [60, 80]) expect(overflowing((await runCli([], { env: { COLUMNS: String(width) } })).stderr, width)).toEqual([]);
  });
});
