/**
 * Every shell command block of README.md and docs/*.md (shell-blocks.ts)
 * runs as a reader would run it and exits as the text says: 0, or the
 * statuses of an `exits` comment before the block. A block is either run
 * here, run by recipes.test.ts (the README's Recipes, with their peers:
 * PostgreSQL, Redis, a mail relay, an OpenID provider), or marked
 * `<!-- not run: REASON -->` in the document; none is left out otherwise.
 *
 * The lines run against the DNS peer of readme-shell.ts. A block that
 * talks to a server at 127.0.0.1:8080 without starting one gets a
 * `netintel serve` of its own on a free port, with a key of the pro plan
 * standing for the document's `ni_…`.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';
import { findExecutable } from '../support/peers.js';
import { serve, type Served } from '../support/served.js';
import { problemsOf, runLine, scratchFor, startReadmePeers, type ReadmePeers } from './readme-shell.js';
import { documentFiles, shellBlocks, type ShellBlock } from './shell-blocks.js';

const blocks = shellBlocks();
const isRecipe = (block: ShellBlock) => block.file === 'README.md' && block.section === 'Recipes';
const runnable = blocks.filter((block) => block.notRun === null && !isRecipe(block));
const curl = findExecutable('curl');

let peers: ReadmePeers;
beforeAll(async () => {
  peers = await startReadmePeers();
});
afterAll(async () => {
  await peers?.close();
});

describe('the shell blocks of README.md and docs/*.md', () => {
  it('are found in every document, each with its commands', () => {
    expect(documentFiles()).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'docs/development.md']));
    expect(blocks.length).toBeGreaterThanOrEqual(12);
    for (const block of blocks) expect(block.commands.length, `${block.file} § ${block.heading}`).toBeGreaterThan(0);
  });

  it('are each run here, run as a README recipe, or marked not run with the reason', () => {
    const handled = blocks.map((block) => ({
      block: `${block.file} § ${block.heading}`,
      how: isRecipe(block) ? 'recipes.test.ts' : block.notRun !== null ? 'not run' : 'run here',
      reason: block.notRun,
    }));
    for (const entry of handled.filter((item) => item.how === 'not run')) expect(entry.reason!.length, entry.block).toBeGreaterThan(20);
    // The recipes are the README's own section, run with their peers by recipes.test.ts.
    expect(handled.filter((item) => item.how === 'recipes.test.ts').length).toBeGreaterThanOrEqual(8);
    expect(handled.filter((item) => item.how === 'run here').length).toBeGreaterThanOrEqual(2);
  });

  for (const [index, block] of runnable.entries()) {
    const needsServer = block.commands.some((command) => command.includes('127.0.0.1:8080')) && !block.commands.some((command) => command.trimEnd().endsWith('&'));
    const usesCurl = block.commands.some((command) => /^curl\b/.test(command));
    it.skipIf(usesCurl && curl === null)(`${block.file} § ${block.heading} (block ${index + 1}) exits as the text says`, async () => {
      const scratch = scratchFor(peers);
      let served: Served | undefined;
      const replace: Array<[string, string]> = [];
      try {
        if (needsServer) {
          const db = join(scratch.dir, 'keys.db');
          const created = execFileSync(process.execPath, [BIN, 'keys', 'create', '--plan', 'pro', '--db', db, '--fields', 'key', '-f', 'value'], { env: scratch.env, encoding: 'utf8' });
          served = await serve(['--db', db, '--log-level', 'silent'], scratch.env);
          replace.push(['http://127.0.0.1:8080', served.url], ['ni_…', created.trim()]);
        }
        for (const [line, command] of block.commands.entries()) {
          const text = replace.reduce((out, [from, to]) => out.replaceAll(from, to), command);
          const result = await runLine(text, scratch.dir, scratch.env);
          expect(problemsOf(result), `${command}\n${result.stderr}`).toEqual([]);
          expect(result.code, `${command}\n${result.stderr}`).toBe(block.exits[line]);
          // curl exits 0 on any HTTP answer: a JSON answer must not be a problem document (RFC 9457) either.
          if (/^curl\b/.test(command) && result.stdout.trimStart().startsWith('{')) {
            expect((JSON.parse(result.stdout) as { status?: number }).status ?? 200, `${command}\n${result.stdout}`).toBeLessThan(400);
          }
        }
      } finally {
        served?.child.kill('SIGTERM');
        if (served) await served.exit;
        scratch.remove();
      }
    }, 60_000);
  }
});

if (curl === null) console.warn('README and docs shell blocks: curl is not installed; the blocks that use it are SKIPPED (apt-get install -y curl)');
