/**
 * Every shell command block of README.md, docs/*.md and the command pages
 * docs/commands/*.md (shell-blocks.ts) runs as a reader would run it and
 * exits as the text says: 0, or the statuses of an `exits` comment before
 * the block. A block is either run here, run by recipes.test.ts (the
 * README's Recipes, with their peers: PostgreSQL, Redis, a mail relay, an
 * OpenID provider), or marked `<!-- not run: REASON -->` in the document;
 * none is left out otherwise.
 *
 * Each block runs in a scratch directory of its own holding the files the
 * pages name, against the peers of docs-peers.ts (DNS, DoH and DoT
 * resolvers, SMTP servers, each standing in for the host a page names),
 * blocks in parallel. Placeholders of the documents are filled in:
 *
 * - a block that talks to a server at 127.0.0.1:8080 without starting one
 *   talks to a `netintel serve` the blocks share, on a free port, with a
 *   key of the pro plan standing for the document's `ni_…`; a block that starts
 *   `netintel serve` has it run in the background on a free port, and its
 *   `ni_…` is the key a line of the block printed;
 * - `abcdefghijkl`, the id of a key or account, is the id of the first one
 *   that `netintel keys list` (or `accounts list`) gives at that line.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, type ExpectStatic } from 'vitest';
import { BIN } from '../support/cli.js';
import { againOnPeerExit, findExecutable, freePort } from '../support/peers.js';
import { serve, type Served } from '../support/served.js';
import { problemsOf, runLine, waitForPort } from './readme-shell.js';
import { docsScratch, startDocsPeers, type DocsPeers } from './docs-peers.js';
import { documentFiles, shellBlocks, shellBlocksIn, type ShellBlock } from './shell-blocks.js';

const blocks = shellBlocks();
const isRecipe = (block: ShellBlock) => block.file === 'README.md' && block.section === 'Recipes';
const runnable = blocks.filter((block) => block.notRun === null && !isRecipe(block));
const curl = findExecutable('curl');
const startsServer = (command: string) => /^netintel serve\b/.test(command) && !command.trimEnd().endsWith('&');

let peers: DocsPeers;
beforeAll(async () => {
  peers = await startDocsPeers();
});
afterAll(async () => {
  const shared = await sharedServer;
  shared?.served.child.kill('SIGTERM');
  if (shared) await shared.served.exit;
  await peers?.close();
});

/** The `netintel serve` the blocks that talk to 127.0.0.1:8080 share, with a key of the pro plan; started by the first. */
let sharedServer: Promise<{ served: Served; key: string }> | undefined;
function sharedServe(blockEnv: Record<string, string>, dir: string): Promise<{ served: Served; key: string }> {
  sharedServer ??= (async () => {
    // Its home is its own directory: the block that starts it removes its scratch directory when done.
    const env = { ...blockEnv, HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), XDG_DATA_HOME: join(dir, 'data') };
    const db = join(dir, 'keys.db');
    const key = execFileSync(process.execPath, [BIN, 'keys', 'create', '--plan', 'pro', '--db', db, '--fields', 'key', '-f', 'value'], { env, encoding: 'utf8' }).trim();
    return { served: await serve(['--db', db, '--log-level', 'silent'], env), key };
  })();
  return sharedServer;
}

describe('the shell blocks of README.md, docs/*.md and docs/commands/*.md', () => {
  it('are found in every document, each with its commands', () => {
    expect(documentFiles()).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'docs/development.md', 'docs/commands/ip.md', 'docs/commands/smtp.md']));
    expect(blocks.length).toBeGreaterThanOrEqual(40);
    for (const block of blocks) expect(block.commands.length, `${block.file} § ${block.heading}`).toBeGreaterThan(0);
  });

  it('are each run here, run as a README recipe, or marked not run with the reason', () => {
    const handled = blocks.map((block) => ({
      block: `${block.file} § ${block.heading}`,
      how: isRecipe(block) ? 'recipes.test.ts' : block.notRun !== null ? 'not run' : 'run here',
      reason: block.notRun,
      commands: block.commands.length,
    }));
    for (const entry of handled.filter((item) => item.how === 'not run')) expect(entry.reason!.length, entry.block).toBeGreaterThan(20);
    // The recipes are the README's own section, run with their peers by recipes.test.ts.
    expect(handled.filter((item) => item.how === 'recipes.test.ts').length).toBeGreaterThanOrEqual(8);
    const count = (how: string) => handled.filter((item) => item.how === how).reduce((sum, item) => sum + item.commands, 0);
    // The command pages' commands are run here but for the few that need the internet or an operator's hosts.
    expect(count('run here')).toBeGreaterThanOrEqual(110);
    expect(count('not run')).toBeLessThanOrEqual(20);
  });

  it('refuse a block that shows commands with their output, in a shell block or a text one', () => {
    const shown = (lang: string) => `# Page\n\n\`\`\`${lang}\n$ netintel range 10.0.0.0/8\nfirst  10.0.0.0\n\`\`\`\n`;
    for (const lang of ['sh', 'text', '']) expect(() => shellBlocksIn('page.md', shown(lang)), lang).toThrow(/mixes commands/);
    // Prompts alone, and output alone, are fine.
    expect(shellBlocksIn('page.md', '```sh\n$ netintel range 10.0.0.0/8\n$ netintel ip 8.8.8.8 \\\n    -f json\n```\n').map((block) => block.commands)).toEqual([['netintel range 10.0.0.0/8', 'netintel ip 8.8.8.8      -f json']]);
    expect(shellBlocksIn('page.md', '```text\nfirst  10.0.0.0\n```\n')).toEqual([]);
  });

  for (const [index, block] of runnable.entries()) {
    const usesCurl = block.commands.some((command) => /^curl\b/.test(command));
    // Concurrent tests assert with their own context's expect, so that a failure is told to the right block.
    it.concurrent.skipIf(usesCurl && curl === null)(`${block.file} § ${block.heading} (block ${index + 1}) exits as the text says`, async ({ expect }) => {
      await runBlock(block, expect);
    }, 60_000);
  }
});

/** Runs a block's commands in order in a scratch directory of its own, checking each one's exit status. */
function runBlock(block: ShellBlock, expect: ExpectStatic): Promise<void> {
  // A block that starts its own server starts again, from a new scratch, when the server lost its port.
  return againOnPeerExit(() => runBlockOnce(block, expect));
}

async function runBlockOnce(block: ShellBlock, expect: ExpectStatic): Promise<void> {
  const scratch = await docsScratch(peers);
  const { dir, env } = scratch;
  const background: ChildProcess[] = [];
  const replace: Array<[string, string]> = [];
  const key = { value: '' };
  try {
    const ownServer = block.commands.some(startsServer);
    // A line sent to the background would outlive the block: only the README's recipes (recipes.test.ts) have them.
    if (block.commands.some((command) => command.trimEnd().endsWith('&'))) throw new Error(`${block.file} § ${block.heading}: a line runs in the background (&); write the server's line in the foreground`);
    const needsServer = block.commands.some((command) => command.includes('127.0.0.1:8080'));
    let port = 0;
    if (ownServer) {
      port = await freePort();
      replace.push(['127.0.0.1:8080', `127.0.0.1:${port}`]);
    } else if (needsServer) {
      const shared = await sharedServe(env, peers.serverDir);
      key.value = shared.key;
      replace.push(['http://127.0.0.1:8080', shared.served.url]);
    }
    for (const [line, command] of block.commands.entries()) {
      let text = replace.reduce((out, [from, to]) => out.replaceAll(from, to), command).replaceAll('ni_…', key.value || 'ni_…');
      if (text.includes('abcdefghijkl')) text = text.replaceAll('abcdefghijkl', await firstId(text, dir, env));
      if (startsServer(command)) {
        const server = spawn('bash', ['-c', `exec ${text.replace(/^netintel serve\b/, `netintel serve --port ${port}`)}`], { cwd: dir, env, stdio: 'ignore' });
        background.push(server);
        await waitForPort(port, server);
        continue;
      }
      // The page gives the AUTH password in NETINTEL_SMTP_PASS; without --auth-user it would be a usage error.
      const result = await runLine(text, dir, /--auth-user\b/.test(text) ? { ...env, NETINTEL_SMTP_PASS: peers.smtpPassword } : env);
      expect(problemsOf(result), `${command}\n${result.stderr}`).toEqual([]);
      expect(result.code, `${command}\n${result.stdout}\n${result.stderr}`).toBe(block.exits[line]);
      key.value ||= /\bni_[\w-]{12}_[\w-]+/.exec(result.stdout)?.[0] ?? '';
      // curl exits 0 on any HTTP answer: a JSON answer must not be a problem document (RFC 9457) either.
      if (/^curl\b/.test(command) && result.stdout.trimStart().startsWith('{')) {
        expect((JSON.parse(result.stdout) as { status?: number }).status ?? 200, `${command}\n${result.stdout}`).toBeLessThan(400);
      }
    }
  } finally {
    for (const child of background) child.kill('SIGTERM');
    await Promise.all(background.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.on('exit', resolve)))));
    scratch.remove();
  }
}

/** The id of the first key or account (`netintel keys ...` or `netintel accounts ...`) the scratch holds. */
async function firstId(command: string, dir: string, env: Record<string, string>): Promise<string> {
  const noun = command.split(/\s+/)[1]!;
  const listed = await runLine(`netintel ${noun} list -f json`, dir, env);
  const records = JSON.parse(listed.stdout) as Array<{ id: string }>;
  if (records.length === 0) throw new Error(`${command}: no ${noun} to stand for abcdefghijkl`);
  return records[0]!.id;
}

if (curl === null) console.warn('README and docs shell blocks: curl is not installed; the blocks that use it are SKIPPED (apt-get install -y curl)');
