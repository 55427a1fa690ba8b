/**
 * The README's recipes, run as a reader would run them: each shell line of
 * a recipe in a bash of its own, in one scratch directory per recipe, with
 * `netintel` on PATH (the built CLI). The names the recipes use resolve at
 * a DNS server on 127.0.0.1 (NETINTEL_RESOLVER): example.com and
 * example.org with MX (on 127.0.0.1, where no SMTP server is expected),
 * SPF and DMARC records, and a blocklist zone that lists 192.0.2.99. The serve recipe's port is replaced by a free one, and
 * a line ending in `&` runs in the background until the recipe ends; the
 * next line starts once its port answers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { BIN, REPO_ROOT, tempDir } from '../support/cli.js';
import { findExecutable, freePort } from '../support/peers.js';
import { zoneRecords } from '../engine/blacklist/dnsbl-fixtures.js';
import { startTestRelay, type TestRelay } from '../accounts/relay.js';
import { findRedisServer, startRedisServer } from '../server/redis-server.js';
import { findPostgres, startPostgresServer } from '../support/postgres.js';
import { CLIENT_ID, CLIENT_SECRET, startIssuer } from '../support/oidc-provider.js';
import { PageClient } from '../web/page-client.js';
import { simpleParser } from 'mailparser';
import pg from 'pg';

interface Recipe {
  title: string;
  lines: string[];
}

/** The `sh` blocks under each `###` heading of the README's Recipes section. */
function readmeRecipes(): Recipe[] {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readme.split(/^## Recipes$/m)[1]?.split(/^## /m)[0] ?? '';
  return section
    .split(/^### /m)
    .slice(1)
    .map((part) => ({
      title: part.slice(0, part.indexOf('\n')).trim(),
      lines: [...part.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((block) => block[1]!.split('\n').filter((line) => line.trim() !== '')),
    }));
}

interface LineResult {
  line: string;
  code: number | null;
  stdout: string;
  stderr: string;
}

const curl = findExecutable('curl');
let dns: DnsTestServer;
let shims: { path: string; remove: () => void };

beforeAll(async () => {
  dns = await startDnsServer({
    records: [
      ...['example.com', 'example.org'].flatMap((domain) => [
        { name: domain, type: 'MX' as const, data: { preference: 10, exchange: `mx.${domain}` } },
        { name: `mx.${domain}`, type: 'A' as const, data: '127.0.0.1' },
        { name: domain, type: 'TXT' as const, data: ['v=spf1 mx -all'] },
        { name: `_dmarc.${domain}`, type: 'TXT' as const, data: ['v=DMARC1; p=reject; rua=mailto:dmarc@' + domain] },
      ]),
      { name: '1.0.0.127.in-addr.arpa', type: 'PTR', data: 'mx.example.com' },
      ...zoneRecords('zen.spamhaus.org', { '192.0.2.99': { a: ['127.0.0.2'], txt: 'listed for the recipe' } }),
    ],
  });
  shims = tempDir('netintel-recipes-bin-');
  const shim = join(shims.path, 'netintel');
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(shim, 0o755);
});

afterAll(async () => {
  await dns?.close();
  shims?.remove();
});

interface RecipeRun {
  /** Text replaced in every line before it runs: the recipe's hosts by the test's peers. */
  replace?: Record<string, string>;
  prepare?: (dir: string) => void;
  /** Runs while the recipe's background lines still run: `port` is the one that replaced 8080. */
  during?: (port: number, env: Record<string, string>, dir: string) => Promise<void>;
}

/** Runs a recipe's lines in order in a new directory; background lines are stopped at the end. */
async function runRecipe(recipe: Recipe, prepareOrRun: ((dir: string) => void) | RecipeRun = {}): Promise<{ results: LineResult[]; dir: string }> {
  const run: RecipeRun = typeof prepareOrRun === 'function' ? { prepare: prepareOrRun } : prepareOrRun;
  const prepare = run.prepare ?? (() => {});
  const scratch = tempDir('netintel-recipe-');
  const home = join(scratch.path, 'home');
  mkdirSync(home);
  const port = await freePort();
  const env = {
    PATH: `${shims.path}:${process.env.PATH ?? ''}`,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    NETINTEL_RESOLVER: dns.address,
    NETINTEL_RETRIES: '0',
  };
  const dir = join(scratch.path, 'work');
  mkdirSync(dir);
  prepare(dir);
  const background: ChildProcess[] = [];
  const results: LineResult[] = [];
  try {
    for (const written of recipe.lines) {
      const line = Object.entries(run.replace ?? {}).reduce((text, [from, to]) => text.replaceAll(from, to), written.replaceAll('8080', String(port)));
      if (line.trimEnd().endsWith('&')) {
        background.push(spawn('bash', ['-c', `exec env ${line.trimEnd().slice(0, -1)}`], { cwd: dir, env, stdio: 'ignore' }));
        await waitForPort(port);
        continue;
      }
      results.push({ line: written, ...(await runLine(line, dir, env)) });
    }
    await run.during?.(port, env, dir);
  } finally {
    for (const child of background) child.kill('SIGTERM');
  }
  return { results, dir };
}

/** One line in bash, asynchronously: the DNS server answers from this process meanwhile. */
function runLine(line: string, cwd: string, env: Record<string, string>): Promise<Omit<LineResult, 'line'>> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', line], { cwd, env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function waitForPort(port: number): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)));
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    await sleep(100);
  }
  throw new Error(`nothing listens on port ${port}`);
}

/** The recipes' sample log, where they read it: examples/access.log of the repository. */
function withExamples(dir: string): void {
  mkdirSync(join(dir, 'examples'));
  copyFileSync(join(REPO_ROOT, 'examples', 'access.log'), join(dir, 'examples', 'access.log'));
}

const recipes = readmeRecipes();
const recipe = (title: string): Recipe => {
  const found = recipes.find((candidate) => candidate.title === title);
  if (!found) throw new Error(`the README has no recipe "${title}"`);
  return found;
};

/** No recipe line may crash or print a stack trace. */
function expectClean(result: LineResult): void {
  expect(result.stderr, result.line).not.toMatch(/internal error|\n\s+at /);
}

describe('README recipes', () => {
  it('are all covered here', () => {
    expect(recipes.map((r) => r.title)).toEqual([
      "Check my domain's mail",
      'Is this IP listed?',
      'Enrich a log file',
      'Summarize a log',
      'A cron job that writes CSV and fails on problems',
      'Get a single value for a script',
      'Run the API and use a key',
      'Run the API for a team',
    ]);
  });

  it("check my domain's mail: a report on the terminal view and one in JSON", async () => {
    const { results, dir } = await runRecipe(recipe("Check my domain's mail"));
    for (const result of results) expectClean(result);
    expect(results[0]!.code, results[0]!.stderr).toBe(0);
    expect(results[0]!.stdout).toContain('example.com');
    expect(results[1]!.code, results[1]!.stderr).toBe(0);
    const report = JSON.parse(readFileSync(join(dir, 'mail-report.json'), 'utf8')) as { domain: string };
    expect(report.domain).toBe('example.com');
  });

  it('is this IP listed: the listing is found, in the view and in JSON', async () => {
    const { results } = await runRecipe(recipe('Is this IP listed?'));
    for (const result of results) expectClean(result);
    expect(results[0]!.stdout).toMatch(/listed/i);
    const record = JSON.parse(results[1]!.stdout) as { zones: Array<{ zone: string; status: string }> };
    expect(record.zones.find((zone) => zone.zone === 'zen.spamhaus.org')?.status).toBe('listed');
  });

  it('enrich a log file: one CSV row per unique address of the example log', async () => {
    const { results, dir } = await runRecipe(recipe('Enrich a log file'), withExamples);
    expectClean(results[0]!);
    expect(results[0]!.code, results[0]!.stderr).toBe(0);
    expect(results[0]!.stderr).toBe('netintel: 36 rows, 36 ok, 0 failed\n');
    const rows = readFileSync(join(dir, 'visitors.csv'), 'utf8').trimEnd().split('\n');
    expect(rows[0]).toMatch(/^query,/);
    const unique = [...new Set(readFileSync(join(REPO_ROOT, 'examples', 'access.log'), 'utf8').trimEnd().split('\n').map((line) => line.split(' ')[0]!))].sort();
    expect(rows.slice(1).map((row) => row.split(',')[0])).toEqual(unique);
    expect(rows.find((row) => row.startsWith('8.8.8.8,'))).toContain(',Google LLC,');
  });

  it('summarize a log: the report of the example log, the map, and each address once through grep', async () => {
    const { results, dir } = await runRecipe(recipe('Summarize a log'), withExamples);
    for (const result of results) expectClean(result);
    expect(results.map((result) => result.code)).toEqual([0, 0]);
    expect(results[0]!.stdout.split('\n')[0]).toBe('300 addresses from 300 lines · 36 unique · 5 countries');
    expect(results[0]!.stdout).toContain('AS15169 Google LLC');
    expect(results[0]!.stderr).toBe('netintel: map of 5 countries written to visitors.svg\n');
    const svg = readFileSync(join(dir, 'visitors.svg'), 'utf8');
    expect(svg).toContain('<title>United States (US): 98</title>');
    expect(svg).toContain('<title>Canada (CA): 21</title>');
    expect(results[1]!.stdout.split('\n')[0]).toBe('36 addresses from 36 lines · 36 unique · 5 countries');
  });

  it('cron CSV: one line per domain with flat findings columns', async () => {
    const { results, dir } = await runRecipe(recipe('A cron job that writes CSV and fails on problems'));
    expectClean(results[0]!);
    const lines = readFileSync(join(dir, 'mail.csv'), 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toContain('findings.max_severity');
    expect(lines.slice(1).map((line) => line.split(',')[0])).toEqual(['example.com', 'example.org']);
  });

  it('a single value: bare values, tab-separated', async () => {
    const { results } = await runRecipe(recipe('Get a single value for a script'));
    for (const result of results) expectClean(result);
    expect(results.map((result) => result.code)).toEqual([0, 0]);
    expect(results[0]!.stdout).toBe('Mountain View\n');
    expect(results[1]!.stdout).toBe('US\t15169\n');
  });

  it.skipIf(curl === null)('the API: a key, a server, curl and the CLI in remote mode agree', async () => {
    const { results, dir } = await runRecipe(recipe('Run the API and use a key'));
    for (const result of results) expectClean(result);
    expect(results.map((result) => result.code)).toEqual([0, 0, 0]);
    expect(readFileSync(join(dir, 'key.txt'), 'utf8')).toMatch(/^ni_\S+\n$/);
    const viaCurl = JSON.parse(results[1]!.stdout) as { ip: string; location: { city: string }; network?: { asn: number }; note?: string };
    const viaCli = JSON.parse(results[2]!.stdout) as { ip: string; location: { city: string }; network?: { asn: number } };
    expect(viaCurl.ip).toBe('8.8.8.8');
    expect(viaCli.location.city).toBe(viaCurl.location.city);
    // The key is worth more than none: the network group that a call without a key leaves out.
    expect(viaCurl.network?.asn).toBe(15169);
    expect(viaCurl.note).toBeUndefined();
    expect(viaCli.network?.asn).toBe(15169);
    expect(results[2]!.stderr).not.toContain('left out');
  });
});

const postgresPrograms = findPostgres();
const redisBinary = findRedisServer();
const teamPeers = curl !== null && postgresPrograms !== null && redisBinary !== null;

describe.skipIf(!teamPeers)('README recipe: run the API for a team', () => {
  it('two servers on one PostgreSQL and Redis, mail through the relay, OIDC buttons: an account made on one works on the other', async () => {
    const [postgres, redis, relay] = await Promise.all([startPostgresServer(postgresPrograms!), startRedisServer(redisBinary!), startTestRelay({ plain: true }) as Promise<TestRelay>]);
    const issuer = await startIssuer({ claimsInIdToken: true, redirectUris: ['https://api.example.com/login/google/callback'] });
    try {
      const db = await postgres.createDatabase('team');
      const recipeLine = recipe('Run the API for a team').lines[0]!;
      const replace = {
        'postgres://netintel:secret@db.internal:5432/netintel': db,
        'redis://cache.internal:6379': redis.url,
        'smtps://mailer:secret@smtp.example.com:465': `smtp://127.0.0.1:${relay.port}`,
      };
      // The README's oidc.json names Google; here the same file names the local provider.
      const oidc = { providers: [{ id: 'google', name: 'Google', issuer: issuer.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET }] };
      const { results } = await runRecipe(recipe('Run the API for a team'), {
        replace,
        prepare: (dir) => writeFileSync(join(dir, 'oidc.json'), JSON.stringify(oidc)),
        during: async (port, env, dir) => {
          // A second server from the same line, as on the next machine behind the balancer.
          const second = await freePort();
          const line = Object.entries(replace).reduce((text, [from, to]) => text.replaceAll(from, to), recipeLine.replaceAll('8080', String(second))).trimEnd().slice(0, -1);
          const other = spawn('bash', ['-c', `exec env ${line}`], { cwd: dir, env, stdio: 'ignore' });
          try {
            await waitForPort(second);
            const [one, two] = [`http://127.0.0.1:${port}`, `http://127.0.0.1:${second}`];
            const browser = new PageClient(one, { 'x-forwarded-for': '10.1.2.3' });
            const login = await browser.get('/login');
            expect(login.body).toContain('Log in with Google');
            await browser.get('/signup');
            expect((await browser.post('/signup', { email: 'ada@example.com', password: 'correct horse battery' })).status).toBe(200);
            for (let waited = 0; relay.received.length === 0 && waited < 100; waited++) await sleep(50);
            const mail = await simpleParser(relay.received[0]!.raw);
            expect(mail.from?.value).toEqual([{ name: 'netintel', address: 'no-reply@example.com' }]);
            const link = /https:\/\/api\.example\.com(\/verify\/[\w-]{43})/.exec(mail.text ?? '')![1]!;
            // The link opened on the other server, the log-in on the first, the key made on the other.
            browser.use(two);
            await browser.get(link);
            expect((await browser.post('/verify', { token: link.split('/').at(-1)! })).status).toBe(303);
            browser.use(one);
            await browser.get('/login');
            expect((await browser.post('/login', { email: 'ada@example.com', password: 'correct horse battery' })).status).toBe(303);
            browser.use(two);
            await browser.get('/dashboard');
            const made = await browser.post('/dashboard/keys', { label: 'team' });
            expect(made.status).toBe(201);
            const key = /id="new-key-value">(ni_[\w-]+)</.exec(made.body)![1]!;
            const answer = await fetch(`${one}/api/ipinfo?ip=8.8.8.8`, { headers: { 'x-api-key': key } });
            expect(answer.status).toBe(200);
            expect(((await answer.json()) as { network: { asn: number } }).network.asn).toBe(15169);
            // Secure cookies: the public URL is https.
            expect(String(login.headers['set-cookie'])).toContain('__Host-netintel-session=');
            const client = new pg.Client({ connectionString: db });
            await client.connect();
            try {
              expect((await client.query('SELECT email, plan FROM accounts')).rows).toEqual([{ email: 'ada@example.com', plan: 'free-account' }]);
            } finally {
              await client.end();
            }
          } finally {
            other.kill('SIGTERM');
          }
        },
      });
      for (const result of results) expectClean(result);
      expect(results[0]!.code, results[0]!.stderr).toBe(0);
      expect(JSON.parse(results[0]!.stdout)).toMatchObject({ status: 'ok', limits: { store: 'redis', ok: true } });
    } finally {
      await issuer.close();
      await relay.close();
      await redis.stop();
      await postgres.stop();
    }
  }, 90_000);
});

if (!teamPeers) {
  console.warn('README recipes: the team recipe is SKIPPED: it needs curl, postgresql and redis-server (apt-get install -y curl postgresql redis-server)');
}

if (curl === null) {
  console.warn('README recipes: curl is not installed; the API recipe is SKIPPED (apt-get install -y curl)');
}
