/**
 * The command pages under docs/commands/ quote each command's `--help`
 * ("As `--help` prints it:"); the quotes must be what the CLI prints today,
 * so that a page's synopsis and options stay true when an option changes.
 * After changing an option, `UPDATE_GOLDEN=1 npx vitest run test/docs` writes
 * today's help into the pages, as it does for the end-to-end goldens.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const PAGES: Record<string, string[][]> = {
  ip: [['ip']],
  asn: [['asn']],
  bulk: [['bulk']],
  grep: [['grep']],
  summarize: [['summarize']],
  range: [['range']],
  vpn: [['vpn']],
  dns: [['dns']],
  ptr: [['ptr']],
  mx: [['mx']],
  spf: [['spf']],
  dkim: [['dkim']],
  headers: [['headers']],
  bimi: [['bimi']],
  email: [['email']],
  'dmarc-report': [['dmarc-report']],
  smtp: [['smtp']],
  tls: [['tls']],
  blacklist: [['blacklist']],
  rdap: [['rdap']],
  data: [['data'], ['data', 'update'], ['data', 'status']],
  keys: [['keys'], ['keys', 'create'], ['keys', 'list'], ['keys', 'revoke']],
  accounts: [['accounts'], ['accounts', 'list'], ['accounts', 'show'], ['accounts', 'create'], ['accounts', 'set-plan'], ['accounts', 'disable'], ['accounts', 'delete']],
  quota: [['quota']],
  serve: [['serve']],
  config: [[]],
};

const UPDATE = process.env.UPDATE_GOLDEN === '1';
const QUOTE = /```text\n([\s\S]*?)\n```/g;
const pagePath = (page: string) => new URL(`../../docs/commands/${page}.md`, import.meta.url);

/** The page's text split around its "Synopsis" section. */
function synopsisOf(page: string): { before: string; section: string; after: string } {
  const text = readFileSync(pagePath(page), 'utf8');
  const start = text.indexOf('\n## Synopsis');
  const end = text.indexOf('\n## ', start + 1);
  return { before: text.slice(0, start), section: text.slice(start, end === -1 ? undefined : end), after: end === -1 ? '' : text.slice(end) };
}

/** The ```text blocks of the page's "Synopsis" section, in order. */
function quotedHelp(page: string): string[] {
  return [...synopsisOf(page).section.matchAll(QUOTE)].map((match) => match[1]!);
}

/** Writes `helps` into the page's quoted blocks, in order. */
function writeQuotedHelp(page: string, helps: readonly string[]): void {
  const { before, section, after } = synopsisOf(page);
  let index = 0;
  writeFileSync(pagePath(page), before + section.replace(QUOTE, (block) => (index < helps.length ? `\`\`\`text\n${helps[index++]}\n\`\`\`` : block)) + after);
}

describe('command pages', () => {
  it.each(Object.entries(PAGES))('docs/commands/%s.md quotes the --help of today', async (page, commands) => {
    const quoted = quotedHelp(page);
    expect(quoted).toHaveLength(commands.length);
    const helps: string[] = [];
    for (const argv of commands) {
      const result = await runCli([...argv, '--help']);
      expect(result.code).toBe(0);
      helps.push(result.stdout.trimEnd());
    }
    if (UPDATE) writeQuotedHelp(page, helps);
    for (const [index, argv] of commands.entries()) expect(UPDATE ? helps[index] : quoted[index], `netintel ${argv.join(' ')} --help`).toBe(helps[index]);
  });
});
