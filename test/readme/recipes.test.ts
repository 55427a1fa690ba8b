/**
 * The README's recipes, run as a reader would run them: each shell line of
 * a recipe in a bash of its own, in one scratch directory per recipe
 * holding a copy of examples/, with `netintel` on PATH and the DNS peer of
 * readme-shell.ts. The serve recipe's port is replaced by a free one, and
 * a line ending in `&` runs in the background until the recipe ends; the
 * next line starts once its port answers. The other shell blocks of the
 * README, docs/*.md and docs/commands/*.md are run by shell-blocks.test.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';
import { againOnPeerExit, findExecutable, freePort } from '../support/peers.js';
import { startTestRelay, type TestRelay } from '../accounts/relay.js';
import { findRedisServer, startRedisServer } from '../server/redis-server.js';
import { findPostgres, startPostgresServer } from '../support/postgres.js';
import { parsePrometheusText } from '../support/prometheus-text.js';
import { CLIENT_ID, CLIENT_SECRET, startIssuer } from '../support/oidc-provider.js';
import { PageClient } from '../web/page-client.js';
import { createCertificateAuthority, daysFromNow, issueCertificate } from '../support/smtp-servers.js';
import { startTlsServer } from '../support/tls-servers.js';
import { parseCsv } from '../output/parse-csv.js';
import { simpleParser } from 'mailparser';
import pg from 'pg';
import { startRdapServer, writeBootstrap } from '../support/rdap-server.js';
import { shellBlocks } from './shell-blocks.js';
import { problemsOf, runLine, scratchFor, startReadmePeers, waitForPort, type LineResult, type ReadmePeers } from './readme-shell.js';

interface Recipe {
  title: string;
  lines: string[];
  /** The exit status the README gives each line (0 unless an `exits` comment says otherwise). */
  exits: number[];
}

/** The shell blocks under each `###` heading of the README's Recipes section (shell-blocks.ts reads them). */
function readmeRecipes(): Recipe[] {
  const recipes: Recipe[] = [];
  for (const block of shellBlocks(['README.md']).filter((candidate) => candidate.section === 'Recipes')) {
    const last = recipes.at(-1);
    if (last?.title === block.heading) {
      last.lines.push(...block.commands);
      last.exits.push(...block.exits);
    } else {
      recipes.push({ title: block.heading, lines: [...block.commands], exits: [...block.exits] });
    }
  }
  return recipes;
}

const curl = findExecutable('curl');
let peers: ReadmePeers;
const scratches: Array<{ remove(): void }> = [];

beforeAll(async () => {
  peers = await startReadmePeers();
});

afterAll(async () => {
  await peers?.close();
  for (const scratch of scratches.splice(0)) scratch.remove();
});

interface RecipeRun {
  /** Text replaced in every line before it runs: the recipe's hosts by the test's peers. */
  replace?: Record<string, string>;
  prepare?: (dir: string) => void;
  /** Variables added to the lines' environment. */
  env?: Record<string, string>;
  /** Runs while the recipe's background lines still run: `port` is the one that replaced 8080. */
  during?: (port: number, env: Record<string, string>, dir: string) => Promise<void>;
}

/**
 * Runs a recipe's lines in order in a new directory; background lines are
 * stopped at the end. A recipe whose server lost its port to another
 * process starts again, in a new directory, on another port.
 */
function runRecipe(recipe: Recipe, prepareOrRun: ((dir: string) => void) | RecipeRun = {}): Promise<{ results: LineResult[]; dir: string }> {
  return againOnPeerExit(() => runRecipeOnce(recipe, prepareOrRun));
}

async function runRecipeOnce(recipe: Recipe, prepareOrRun: ((dir: string) => void) | RecipeRun): Promise<{ results: LineResult[]; dir: string }> {
  const run: RecipeRun = typeof prepareOrRun === 'function' ? { prepare: prepareOrRun } : prepareOrRun;
  const scratch = scratchFor(peers);
  scratches.push(scratch);
  const { dir } = scratch;
  const env = { ...scratch.env, ...run.env };
  const port = await freePort();
  run.prepare?.(dir);
  const background: ChildProcess[] = [];
  const results: LineResult[] = [];
  try {
    for (const [index, written] of recipe.lines.entries()) {
      const line = Object.entries(run.replace ?? {}).reduce((text, [from, to]) => text.replaceAll(from, to), written.replaceAll('8080', String(port)));
      if (line.trimEnd().endsWith('&')) {
        const server = spawn('bash', ['-c', `exec env ${line.trimEnd().slice(0, -1)}`], { cwd: dir, env, stdio: 'ignore' });
        background.push(server);
        await waitForPort(port, server);
        continue;
      }
      const result = { ...(await runLine(line, dir, env)), line: written };
      // The exit status the README gives the line (shell-blocks.ts: 0 unless an `exits` comment says otherwise).
      expect(result.code, `${written}\n${result.stderr}`).toBe(recipe.exits[index]);
      results.push(result);
    }
    await run.during?.(port, env, dir);
  } finally {
    for (const child of background) child.kill('SIGTERM');
  }
  return { results, dir };
}

const recipes = readmeRecipes();
const recipe = (title: string): Recipe => {
  const found = recipes.find((candidate) => candidate.title === title);
  if (!found) throw new Error(`the README has no recipe "${title}"`);
  return found;
};

/** No recipe line may crash, print a stack trace or try to leave the machine. */
function expectClean(result: LineResult): void {
  expect(problemsOf(result), `${result.line}\n${result.stderr}`).toEqual([]);
}

describe('README recipes', () => {
  it('are all covered here', () => {
    expect(recipes.map((r) => r.title)).toEqual([
      "Check my domain's mail",
      'Is this IP listed?',
      'Whom do I report this address to?',
      'Enrich a log file',
      'Summarize a log',
      'Why did this message arrive late?',
      'Who sends mail as my domain?',
      'A cron job that writes CSV and fails on problems',
      'Warn me before my certificates expire',
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

  it('whom do I report this address to: the abuse contact from the local registry, in the view and as a bare value', async () => {
    const rdap = await startRdapServer();
    try {
      const caFile = join(rdap.dataDir, 'ca.pem');
      writeFileSync(caFile, rdap.ca);
      const { results } = await runRecipe(recipe('Whom do I report this address to?'), {
        // The bootstrap files of the default data dir send 192.0.2.0/24 to the local registry, whose CA the lines trust.
        prepare: (dir) => writeBootstrap(join(dir, '..', 'home', '.local', 'share', 'netintel'), rdap.registry),
        replace: { 'netintel rdap 192.0.2.1': `netintel rdap 192.0.2.1 --tls-ca ${caFile}` },
      });
      for (const result of results) expectClean(result);
      expect(results.map((result) => result.code)).toEqual([0, 0]);
      expect(results[0]!.stdout).toMatch(/abuse e-mail +abuse@example\.net/);
      expect(results[0]!.stdout).toContain('Example Networks B.V.');
      expect(results[1]!.stdout).toBe('abuse@example.net\n');
    } finally {
      await rdap.close();
    }
  });

  it('enrich a log file: one CSV row per unique address of the example log', async () => {
    const { results, dir } = await runRecipe(recipe('Enrich a log file'));
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
    const { results, dir } = await runRecipe(recipe('Summarize a log'));
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

  it('who sends mail as my domain: the summary of the example reports, and their records as CSV', async () => {
    const { results, dir } = await runRecipe(recipe('Who sends mail as my domain?'));
    for (const result of results) expectClean(result);
    expect(results.map((result) => result.code)).toEqual([0, 0]);
    expect(results[0]!.stdout.split('\n')[0]).toBe('12,485 messages from 6 sources; 3 sources fail DMARC: 0.9% of volume');
    expect(results[0]!.stdout).toContain('Google (US)');
    const rows = readFileSync(join(dir, 'dmarc-records.csv'), 'utf8').trimEnd().split('\n');
    expect(rows[0]).toMatch(/^query,file,org_name,report_id,/);
    expect(rows).toHaveLength(1 + 9);
  });

  it('cron CSV: one line per domain with flat findings columns', async () => {
    const { results, dir } = await runRecipe(recipe('A cron job that writes CSV and fails on problems'));
    expectClean(results[0]!);
    const lines = readFileSync(join(dir, 'mail.csv'), 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toContain('findings.max_severity');
    expect(lines.slice(1).map((line) => line.split(',')[0])).toEqual(['example.com', 'example.org']);
  });

  it('why did this message arrive late: the hop that held it, in the view and as CSV rows', async () => {
    const { results, dir } = await runRecipe(recipe('Why did this message arrive late?'));
    for (const result of results) expectClean(result);
    expect(results.map((result) => result.code)).toEqual([0, 0]);
    expect(results[0]!.stdout).toContain('+7 min 37 s');
    expect(results[0]!.stdout).toContain('headers_delay_large');
    const rows = readFileSync(join(dir, 'hops.csv'), 'utf8').trim().split('\n');
    expect(rows).toHaveLength(6);
  });

  it('certificate expiry: one CSV row per service, exit 10 for the one that expires within 21 days', async () => {
    const ca = createCertificateAuthority('netintel recipe CA');
    const issue = (days: number) => issueCertificate({ commonName: 'service.example', ipAddresses: ['127.0.0.1'], issuer: ca, notAfter: daysFromNow(days) });
    const good = await startTlsServer({ certificate: issue(200) });
    const expiring = await startTlsServer({ certificate: issue(10.5) });
    try {
      const { results, dir } = await runRecipe(recipe('Warn me before my certificates expire'), {
        prepare: (dir) => {
          writeFileSync(join(dir, 'tls-hosts.txt'), `127.0.0.1:${good.port}\n127.0.0.1:${expiring.port}\n`);
          writeFileSync(join(dir, 'ca.pem'), ca.cert);
        },
        // The services' CA stands for a public one: trusted as the bundled roots are.
        env: { NODE_EXTRA_CA_CERTS: 'ca.pem' },
      });
      expectClean(results[0]!);
      const [header, ...rows] = parseCsv(readFileSync(join(dir, 'tls.csv'), 'utf8'));
      expect(rows).toHaveLength(2);
      const cell = (row: string[], column: string) => row[header!.indexOf(column)];
      expect(cell(rows[0]!, 'certificate.trusted')).toBe('true');
      expect(cell(rows[0]!, 'findings')).toBe('');
      expect(cell(rows[1]!, 'certificate.days_left')).toBe('10');
      expect(cell(rows[1]!, 'findings')).toBe('tls_expires_soon');
    } finally {
      await Promise.all([good.close(), expiring.close()]);
    }
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
      // Each server's metrics on a free loopback port of this machine, where the recipe names a private address.
      const [metricsOne, metricsTwo] = [await freePort(), await freePort()];
      const replace = {
        '--metrics-host 10.0.0.5': '--metrics-host 127.0.0.1',
        '--metrics-port 9464': `--metrics-port ${metricsOne}`,
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
          const line = Object.entries(replace).reduce((text, [from, to]) => text.replaceAll(from, to), recipeLine.replaceAll('8080', String(second)).replace('--metrics-port 9464', `--metrics-port ${metricsTwo}`)).trimEnd().slice(0, -1);
          const other = spawn('bash', ['-c', `exec env ${line}`], { cwd: dir, env, stdio: 'ignore' });
          try {
            await waitForPort(second, other);
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
            // Each server counts its own requests; both reach the shared PostgreSQL and Redis.
            const [metricsOfOne, metricsOfTwo] = await Promise.all([metricsOne, metricsTwo].map(async (metricsPort) => parsePrometheusText(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text())));
            expect(metricsOfOne!.total('netintel_http_requests_total', { route: '/api/ipinfo', status: '200', plan: 'free-account' })).toBe(1);
            expect(metricsOfTwo!.total('netintel_http_requests_total', { route: '/api/ipinfo' })).toBe(0);
            for (const page of [metricsOfOne!, metricsOfTwo!]) {
              expect(page.total('netintel_store_up', { store: 'keys', backend: 'postgres' })).toBe(1);
              expect(page.total('netintel_store_up', { store: 'limits', backend: 'redis' })).toBe(1);
            }
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
