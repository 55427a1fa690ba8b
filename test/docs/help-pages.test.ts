/**
 * The command pages under docs/commands/ quote each command's `--help`
 * ("As `--help` prints it:"); the quotes must be what the CLI prints today,
 * so that a page's synopsis and options stay true when an option changes.
 * After changing an option, paste the new `netintel CMD --help` into the page.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const PAGES: Record<string, string[][]> = {
  ip: [['ip']],
  asn: [['asn']],
  bulk: [['bulk']],
  vpn: [['vpn']],
  dns: [['dns']],
  mx: [['mx']],
  spf: [['spf']],
  email: [['email']],
  smtp: [['smtp']],
  blacklist: [['blacklist']],
  data: [['data'], ['data', 'update'], ['data', 'status']],
  keys: [['keys'], ['keys', 'create'], ['keys', 'list'], ['keys', 'revoke']],
  quota: [['quota']],
  serve: [['serve']],
  config: [[]],
};

/** The ```text blocks of the page's "Synopsis" section, in order. */
function quotedHelp(page: string): string[] {
  const text = readFileSync(new URL(`../../docs/commands/${page}.md`, import.meta.url), 'utf8');
  const start = text.indexOf('\n## Synopsis');
  const section = text.slice(start, text.indexOf('\n## ', start + 1));
  return [...section.matchAll(/```text\n([\s\S]*?)\n```/g)].map((match) => match[1]!);
}

describe('command pages', () => {
  it.each(Object.entries(PAGES))('docs/commands/%s.md quotes the --help of today', async (page, commands) => {
    const quoted = quotedHelp(page);
    expect(quoted).toHaveLength(commands.length);
    for (const [index, argv] of commands.entries()) {
      const result = await runCli([...argv, '--help']);
      expect(result.code).toBe(0);
      expect(quoted[index], `netintel ${argv.join(' ')} --help`).toBe(result.stdout.trimEnd());
    }
  });
});
