/**
 * The completion scripts in real shells: bash sources the generated script
 * and runs its completion function over a command line; zsh and fish (when
 * installed) parse theirs.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin/netintel.js');

function script(shell: string): string {
  return execFileSync(process.execPath, [BIN, 'completion', shell], { encoding: 'utf8' });
}

function installed(shell: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;
}

describe('netintel completion bash', () => {
  let path = '';
  beforeAll(() => {
    path = join(mkdtempSync(join(tmpdir(), 'netintel-completion-')), 'netintel.bash');
    writeFileSync(path, script('bash'));
  });

  /** What the completion function offers for the words (the last one is the word under the cursor). */
  function complete(...words: string[]): string[] {
    const quotedWords = words.map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
    const out = execFileSync('bash', ['-c', `source "$1"; COMP_WORDS=(${quotedWords}); COMP_CWORD=${words.length - 1}; _netintel; printf '%s\\n' "\${COMPREPLY[@]}"`, 'bash', path], {
      encoding: 'utf8',
    });
    return out.split('\n').filter((line) => line !== '');
  }

  it('offers the commands that start with the word', () => {
    expect(complete('netintel', 'i')).toEqual(['ip']);
    expect(complete('netintel', '')).toEqual(expect.arrayContaining(['ip', 'asn', 'dns', 'mx', 'email', 'completion']));
  });

  it('offers the output formats after -f, value and json among them, wherever -f stands', () => {
    expect(complete('netintel', 'ip', '8.8.8.8', '-f', '')).toEqual(['table', 'json', 'ndjson', 'csv', 'xml', 'value']);
    expect(complete('netintel', '-f', 'v')).toEqual(['value']);
  });

  it("offers the command's fields after --fields, item by item of a comma list", () => {
    expect(complete('netintel', 'ip', '--fields', 'location.ci')).toEqual(['location.city']);
    expect(complete('netintel', 'ip', '--fields', 'ip,location.ci')).toEqual(['ip,location.city']);
    expect(complete('netintel', 'dns', '--fields', 'answ')).toEqual(['answers']);
  });

  it('offers subcommands, and the options of the command the line names', () => {
    expect(complete('netintel', '-j', 'data', 's')).toEqual(['status']);
    expect(complete('netintel', 'mx', '--fail')).toEqual(['--fail-on']);
    expect(complete('netintel', 'mx', '--fail-on', '')).toEqual(['warning', 'error']);
    expect(complete('netintel', 'completion', '')).toEqual(['bash', 'zsh', 'fish']);
  });

  it('skips the value of an option when it works out the command (-f csv is not a command)', () => {
    expect(complete('netintel', '-f', 'csv', 'mx', '--fail-on', 'e')).toEqual(['error']);
  });
});

describe.each(['zsh', 'fish'])('netintel completion %s', (shell) => {
  const present = installed(shell);
  if (!present) console.warn(`SKIPPED: ${shell} is not installed; its completion script is not parsed`);
  it.skipIf(!present)('gives a script the shell parses', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'netintel-completion-')), `netintel.${shell}`);
    writeFileSync(path, script(shell));
    const result = spawnSync(shell, ['-n', path], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it(`gives a ${shell} script that names every command`, () => {
    const text = script(shell);
    for (const command of ['ip', 'asn', 'bulk', 'dns', 'smtp', 'mx', 'spf', 'email', 'vpn', 'data', 'blacklist', 'serve', 'keys', 'quota', 'completion']) {
      expect(text).toContain(command);
    }
  });
});

describe('netintel completion fish and zsh, read as text', () => {
  it('gives fish the -f values, the --fields of each command and the shells of completion', () => {
    const text = script('fish');
    expect(text).toContain("complete -c netintel -s f -l format -x -a 'table json ndjson csv xml value'");
    expect(text).toMatch(/-n '__fish_seen_subcommand_from ip' -l fields -x -a '[^']*location\.city[^']*'/);
    expect(text).toContain("complete -c netintel -f -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'");
  });

  it('gives zsh a #compdef script on the helpers bash uses', () => {
    const text = script('zsh');
    expect(text.startsWith('#compdef netintel\n')).toBe(true);
    expect(text).toContain('compdef _netintel netintel');
    expect(text).toContain("'ip|--fields'");
  });
});
