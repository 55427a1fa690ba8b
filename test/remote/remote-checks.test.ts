/**
 * Remote mode of the check commands (vpn, blacklist, smtp, mx, spf, email)
 * against the server `netintel serve` runs, on 127.0.0.1:0, allowed to
 * probe loopback (--allow-private-targets) and the test SMTP server's port.
 * The server and the local CLI share one DNS server, one SMTP server, one
 * data dir and the same deadline, so each run must print what the local
 * run prints (times and timestamps aside).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import type net from 'node:net';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { listedName, zoneRecords } from '../engine/blacklist/dnsbl-fixtures.js';
import { MAIL_BEHAVIOURS, MAIL_ZONE } from '../engine/mail/mail-zone.js';
import { writeFixtureIndex } from '../engine/security/fixtures.js';
import { startTestServer, type TestServer } from '../server/harness.js';
import { runCli, tempDir, type RunResult } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';

const fixture = (name: string) => readFileSync(new URL(`../engine/mail/fixtures/${name}`, import.meta.url));
const TIMEOUT_MS = 1000;
const realFetch = globalThis.fetch;

const scratch = tempDir('netintel-remote-checks-');
const DATA = join(scratch.path, 'data');

let dns: DnsTestServer;
let smtp: SMTPServer;
let smtpPort: string;
let server: TestServer;
let url: string;
let pro: string;

beforeAll(async () => {
  mkdirSync(DATA);
  writeFixtureIndex(DATA);
  dns = await startDnsServer({
    records: [
      ...MAIL_ZONE,
      { name: 'tor.example.test', type: 'A', data: '185.220.101.1' },
      { name: 'tor.example.test', type: 'A', data: '8.8.8.8' },
      ...zoneRecords('bl.test.example', { '192.0.2.99': { a: ['127.0.0.2'], txt: 'spam source' } }),
      ...zoneRecords('other.test.example', {}),
      ...zoneRecords('dbl.spamhaus.org', { 'bad.example': { a: ['127.0.1.2'] } }, { kind: 'domain', canaryName: 'dbltest.com' }),
      { name: 'bad.example', type: 'MX', data: { preference: 10, exchange: 'mx.bad.example' } },
      { name: 'mx.bad.example', type: 'A', data: '192.0.2.99' },
    ],
    behaviours: { ...MAIL_BEHAVIOURS, [listedName('192.0.2.1', 'quiet.test.example')]: 'silent' },
  });
  smtp = new SMTPServer({ name: 'mx.mailhost.test', key: fixture('mta-sts.key'), cert: fixture('mta-sts.pem'), authOptional: true, disableReverseLookup: true, logger: false });
  smtp.on('error', () => {});
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
  smtpPort = String((smtp.server.address() as net.AddressInfo).port);
  server = await startTestServer({
    clock: { now: Date.now, advance: () => {}, set: () => {} },
    engine: { resolvers: [parseResolverAddress(dns.address)], timeoutMs: TIMEOUT_MS, dnsRetries: 0, dataDir: DATA },
    allowPrivateTargets: true,
    smtpPorts: [25, Number(smtpPort)],
  });
  url = await server.app.listen({ host: '127.0.0.1', port: 0 });
  pro = await server.key('pro');
});

afterAll(async () => {
  await server.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
  await dns.close();
  scratch.remove();
});

const local = (args: string[], stdin?: string) =>
  runCli([...args, '--resolver', dns.address, '--timeout', String(TIMEOUT_MS), '--retries', '0', '--data-dir', DATA], { stdin });
const remote = (args: string[], key: string | null = pro, stdin?: string) => runCli([...args, '--server', url, ...(key ? ['--api-key', key] : [])], { stdin });

/** Times and timestamps differ from run to run; everything else must not. */
function steady(text: string): string {
  return text
    .replace(/"(\w*(?:Ms|_ms))": ?[\d.]+/g, '"$1":0')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, 'T')
    .replace(/\d+(\.\d+)? ms\b/g, 'N ms')
    .replace(/((?:Ms|_ms)\s+│\s+)[\d.]+/g, '$1N')
    .replace(/ +/g, ' ');
}

function same(a: RunResult, b: RunResult, label = ''): void {
  expect(steady(b.stdout), label).toBe(steady(a.stdout));
  expect(b.stderr, label).toBe(a.stderr);
  expect(b.code, label).toBe(a.code);
}

describe('remote vpn', () => {
  it('prints the same verdicts for addresses, a host name, a missing name and bad input', async () => {
    const args = ['vpn', '185.220.101.1', '8.8.8.8', 'tor.example.test', 'missing.test', '1.2.3', '-f', 'ndjson'];
    const a = await local(args);
    expect(a.code).toBe(7);
    expect(a.stdout).toContain('"is_tor":true');
    same(a, await remote(args));
    for (const single of [['vpn', '185.220.101.1'], ['vpn', '8.8.8.8', '-f', 'json'], ['vpn', '185.220.101.1', '-f', 'csv']]) {
      same(await local(single), await remote(single), single.join(' '));
    }
  });

  it('reads targets from stdin in order, a bad line as an error row', async () => {
    const input = '8.8.8.8\nnot an address\n# comment\n185.220.101.1\n';
    const a = await local(['vpn', '-f', 'csv'], input);
    expect(a.code).toBe(7);
    same(a, await remote(['vpn', '-f', 'csv'], pro, input));
  });

  it('checks the caller\'s own address as the server sees it when no target is given', async () => {
    const mine = await remote(['vpn', '-f', 'json']);
    expect(mine.code).toBe(0);
    same(await local(['vpn', '127.0.0.1', '-f', 'json']), mine);
  });

  it('needs a plan with premium fields: the free tier exits 8', async () => {
    const free = await remote(['vpn', '8.8.8.8', '-f', 'json'], null);
    expect(free.code).toBe(8);
    expect(JSON.parse(free.stdout).error.code).toBe('unauthorized');
    expect((await remote(['vpn', '8.8.8.8', '-f', 'json'], await server.key('starter'))).code).toBe(0);
  });
});

describe('remote blacklist', () => {
  const zones = ['--zones', 'bl.test.example,other.test.example,dbl.spamhaus.org'];

  it('prints the same zone rows and verdicts for addresses and a domain, and exits 10 under --fail-on', async () => {
    const args = ['blacklist', '192.0.2.99', '192.0.2.1', 'bad.example', ...zones, '-f', 'ndjson', '--fail-on', 'error'];
    const a = await local(args);
    expect(a.code).toBe(10);
    same(a, await remote(args));
    const table = ['blacklist', '192.0.2.99', '--zones', 'bl.test.example'];
    same(await local(table), await remote(table));
  });

  it('checks stdin in order with a failing line', async () => {
    const input = '192.0.2.1\nnot a target!\nbad.example\n';
    const a = await local(['blacklist', ...zones, '-f', 'json'], input);
    expect(a.code).toBe(7);
    same(a, await remote(['blacklist', ...zones, '-f', 'json'], pro, input));
  });

  it('refuses --list-zones, which lists this machine\'s registry', async () => {
    const result = await remote(['blacklist', '--list-zones']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--list-zones');
  });
});

describe('remote smtp', () => {
  it('prints the same probe records for an address and for each address of a host name', async () => {
    for (const args of [
      ['smtp', '127.0.0.1', '-p', smtpPort, '-f', 'json'],
      ['smtp', 'mx.mailhost.test', '-p', smtpPort, '-f', 'json', '--transcript'],
      ['smtp', 'mx.mailhost.test', '-p', smtpPort, '--quit-after', 'ehlo', '--no-ptr', '--ehlo', 'client.example', '-f', 'json'],
      ['smtp', 'mx.mailhost.test', '-p', smtpPort, '--ip', '127.0.0.1', '--tls', '--fail-on', 'warning'],
      ['smtp', '127.0.0.1', '-p', smtpPort, '--transcript'],
    ]) {
      const a = await local(args);
      same(a, await remote(args), args.join(' '));
    }
    const timed = JSON.parse((await remote(['smtp', 'mx.mailhost.test', '-p', smtpPort, '-f', 'json'])).stdout);
    expect(timed.timings.dns_ms).toEqual(expect.any(Number));
  });

  it('says the same errors: a name without addresses, a closed port', async () => {
    for (const args of [['smtp', 'missing.test', '-p', smtpPort, '-f', 'json'], ['smtp', '127.0.0.1', '-p', '25', '-f', 'json']]) {
      same(await local(args), await remote(args), args.join(' '));
    }
  });

  it('refuses what the API cannot carry, naming the option', async () => {
    for (const [args, option] of [
      [['--auth-user', 'me', '--auth-pass', 'secret'], '--auth-user'],
      [['--relay-test'], '--relay-test'],
      [['--greeting-timeout', '5000'], '--greeting-timeout'],
      [['--tls-on-connect'], '--tls-on-connect'],
    ] as const) {
      const result = await remote(['smtp', '127.0.0.1', '-p', smtpPort, ...args]);
      expect(result.code, option).toBe(2);
      expect(result.stderr, option).toContain(option);
    }
  });
});

describe('remote mx and spf', () => {
  it('mx: the same records, findings and errors (bad name, SERVFAIL, timeout)', async () => {
    const args = ['mx', 'good.test', 'nullmx.test', 'bad name', 'servfail.test', 'silentmx.test', '-f', 'ndjson', '--fields', 'domain,status,records,findings'];
    const a = await local(args);
    expect(a.code).toBe(7);
    // The server's report says a failed lookup by code and message only: its details stay on the server.
    const withoutDetails = (text: string) =>
      text.trimEnd().split('\n').map((line) => {
        const row = JSON.parse(line) as { error?: { details?: unknown } };
        delete row.error?.details;
        return row;
      });
    const b = await remote(args);
    expect(withoutDetails(b.stdout)).toEqual(withoutDetails(a.stdout));
    expect(withoutDetails(b.stdout).filter((row) => 'error' in row)).toHaveLength(3);
    // Locally the SERVFAIL line says to try another --resolver; the server, which resolves for a remote run, does not pass the resolver on.
    const step = ' (a broken or DNSSEC-bogus zone, or a server that cannot reach it: try another with --resolver)';
    expect(a.stderr).toContain(step);
    expect(b.stderr).toBe(a.stderr.replace(step, ''));
    expect(b.code).toBe(a.code);
    for (const single of [['mx', 'mailhost.test'], ['mx', 'good.test', '--fail-on', 'warning', '-f', 'csv']]) same(await local(single), await remote(single), single.join(' '));
  });

  it('spf: the same records, and --fail-on exits 10', async () => {
    const args = ['spf', 'good.test', 'over.test', '-f', 'json', '--fail-on', 'error'];
    const a = await local(args);
    expect(a.code).toBe(10);
    same(a, await remote(args));
    same(await local(['spf', 'over.test']), await remote(['spf', 'over.test']));
  });

  it('spf: checks stdin in order with a failing line', async () => {
    const input = 'good.test\nbad name\nmailhost.test\n';
    same(await local(['spf', '-f', 'csv'], input), await remote(['spf', '-f', 'csv'], pro, input));
  });

  it('spf: refuses --ip (the evaluation), which the API does not take', async () => {
    const result = await remote(['spf', 'good.test', '--ip', '192.0.2.1']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--ip');
  });
});

describe('remote email', () => {
  it('the general test: the same report with the SMTP probe of each MX, and without', async () => {
    for (const args of [
      ['email', 'mailhost.test', '--port', smtpPort, '-f', 'json'],
      ['email', 'over.test', '--no-smtp', '--fail-on', 'error'],
      ['email', 'slowdmarc.test', '--no-smtp', '-f', 'json'],
      // Checked in part: the same record and the same exit code (7), from the record the server sent.
      ['email', 'slowdmarc.test', '--no-smtp'],
      ['email', 'mailhost.test', '--no-smtp', '--no-dnssec', '-f', 'json'],
    ]) {
      const a = await local(args);
      same(a, await remote(args), args.join(' '));
    }
    expect(JSON.parse((await remote(['email', 'mailhost.test', '--no-smtp', '--no-dnssec', '-f', 'json'])).stdout)).toMatchObject({ dnssec: null, dane: null });
  });

  it('--type mx, spf and smtp (a domain\'s MX hosts, or one server)', async () => {
    for (const args of [
      ['email', 'good.test', '--type', 'spf', '-f', 'json'],
      ['email', 'nullmx.test', '--type', 'mx', '-f', 'json'],
      ['email', 'mailhost.test', '--type', 'smtp', '--port', smtpPort, '-f', 'json'],
      ['email', '--type', 'smtp', '--host', '127.0.0.1', '--port', smtpPort, '-f', 'json'],
    ]) {
      const a = await local(args);
      expect(a.code, args.join(' ')).toBe(0);
      same(a, await remote(args), args.join(' '));
    }
  });

  it('stdin: POST /api/email-tests/bulk in batches of the plan\'s size, in order, a bad line as an error row', async () => {
    // 55 domains: a batch of 50 and one of 5 for a starter key.
    const domains = Array.from({ length: 55 }, (_, i) => (i === 3 ? 'bad name' : ['good.test', 'nullmx.test', 'over.test', 'mailhost.test'][i % 4]!));
    const input = `${domains.join('\n')}\n`;
    const args = ['email', '--no-smtp', '-f', 'ndjson'];
    const a = await local(args, input);
    expect(a.code).toBe(7);
    const sent: number[] = [];
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    fetchSpy.mockImplementation(async (input, init) => {
      if (String(input).endsWith('/api/email-tests/bulk')) sent.push((JSON.parse(String(init?.body)) as { domains: string[] }).domains.length);
      return realFetch(input, init);
    });
    let b: RunResult;
    try {
      b = await remote(args, await server.key('starter'), input);
    } finally {
      fetchSpy.mockRestore();
    }
    same(a, b);
    expect(b.stdout.trimEnd().split('\n')).toHaveLength(55);
    expect(sent).toEqual([50, 5]);
  });

  it('stdin with --type: one request per domain, in order', async () => {
    const input = 'good.test\nbad name\nover.test\n';
    const args = ['email', '--type', 'spf', '-f', 'ndjson'];
    same(await local(args, input), await remote(args, pro, input));
  });
});

/**
 * A server in front of the real one that answers another question than the
 * one asked: it rewrites the request (`ask`) and may rewrite the answer
 * (`answer`), as a compromised or buggy server could. The CLI must refuse
 * every record that is not about the target it asked about (exit 5).
 */
async function lyingServer(ask: (url: URL, body: string) => { url: URL; body: string }, answer: (json: unknown) => unknown = (json) => json): Promise<{ url: string; close(): Promise<void> }> {
  const { createServer } = await import('node:http');
  const front = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const asked = ask(new URL(request.url ?? '/', url), Buffer.concat(chunks).toString());
    const headers: Record<string, string> = {};
    for (const name of ['x-api-key', 'content-type', 'accept']) if (typeof request.headers[name] === 'string') headers[name] = request.headers[name];
    const real = await realFetch(asked.url, { method: request.method, headers, ...(request.method === 'POST' ? { body: asked.body } : {}) });
    const text = await real.text();
    const type = real.headers.get('content-type') ?? 'application/json';
    response.writeHead(real.status, { 'content-type': type });
    response.end(type.includes('json') && real.ok ? JSON.stringify(answer(JSON.parse(text))) : text);
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const { port } = front.address() as net.AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => front.close(() => resolve())) };
}

/** The request with one query parameter's value replaced. */
const withParam = (name: string, from: string, to: string) => (url: URL, body: string) => {
  if (url.searchParams.get(name) === from) url.searchParams.set(name, to);
  return { url, body };
};

/** A bulk answer whose first two items' records are swapped, each left under its own query. */
function swapRecords(json: unknown): unknown {
  const answer = json as { results?: Array<{ record?: unknown }> };
  if (!Array.isArray(answer.results) || answer.results.length < 2) return json;
  const [first, second] = answer.results;
  [first!.record, second!.record] = [second!.record, first!.record];
  return json;
}

describe('remote mode against a server that answers another target', () => {
  const refused = (run: RunResult, asked: string, answered: string) => {
    expect(run.code, run.stderr + run.stdout).toBe(5);
    expect(run.stderr + run.stdout).toContain(`asked about ${JSON.stringify(asked)}, the record is for ${JSON.stringify(answered)}`);
  };
  const remoteAt = (front: { url: string }, args: string[], stdin?: string) => runCli([...args, '--server', front.url, '--api-key', pro], { stdin });

  it('refuses one target\'s record given as another\'s: vpn, ptr, blacklist, mx, spf, email', async () => {
    const cases: Array<{ args: string[]; param: string; asked: string; answered: string }> = [
      { args: ['vpn', '8.8.8.8'], param: 'ip', asked: '8.8.8.8', answered: '185.220.101.1' },
      { args: ['ptr', '192.0.2.99'], param: 'ip', asked: '192.0.2.99', answered: '192.0.2.1' },
      { args: ['blacklist', '192.0.2.99', '--zones', 'bl.test.example'], param: 'ip', asked: '192.0.2.99', answered: '192.0.2.1' },
      { args: ['mx', 'mailhost.test'], param: 'domain', asked: 'mailhost.test', answered: 'good.test' },
      { args: ['spf', 'mailhost.test'], param: 'domain', asked: 'mailhost.test', answered: 'good.test' },
      { args: ['email', 'mailhost.test', '--no-smtp'], param: 'domain', asked: 'mailhost.test', answered: 'good.test' },
    ];
    for (const { args, param, asked, answered } of cases) {
      const front = await lyingServer(withParam(param, asked, answered));
      try {
        const run = await remoteAt(front, [...args, '-f', 'json']);
        refused(run, asked, answered);
        expect(run.stdout, args.join(' ')).not.toContain(`"${answered}"`);
      } finally {
        await front.close();
      }
    }
  });

  it('refuses a bulk answer whose records were swapped under the right queries: asn and email', async () => {
    const front = await lyingServer((url, body) => ({ url, body }), swapRecords);
    try {
      const asn = await remoteAt(front, ['asn', 'AS15169', 'AS13335', '-f', 'csv']);
      expect(asn.code, asn.stderr).toBe(5);
      expect(asn.stdout + asn.stderr).toContain('asked about "AS15169", the record is for "AS13335"');
      expect(asn.stdout).not.toContain('Cloudflare');
      const email = await remoteAt(front, ['email', '--no-smtp', '-f', 'csv'], 'mailhost.test\ngood.test\n');
      expect(email.code, email.stderr).toBe(5);
      // CSV doubles the quotes of the message in its cell.
      expect(email.stdout).toContain('asked about ""mailhost.test"", the record is for ""good.test""');
    } finally {
      await front.close();
    }
  });

  it('lets no record choose one of the run\'s own exit codes, and calls a report without its record the server\'s failure (exit 5)', async () => {
    for (const code of ['findings', 'output_failed', 'partial']) {
      const front = await lyingServer(
        (url, body) => ({ url, body }),
        (json) => ({ ...(json as object), checked: 'none', failure: { code, reason: 'x', message: 'the server says so' } }),
      );
      try {
        const run = await remoteAt(front, ['email', 'mailhost.test', '--no-smtp', '-f', 'csv']);
        expect(run.code, `${code}: ${run.stderr}`).toBe(5);
      } finally {
        await front.close();
      }
    }
    const empty = await lyingServer((url, body) => ({ url, body }), (json) => ({ ...(json as object), mx: null, errors: [] }));
    try {
      const run = await remoteAt(empty, ['mx', 'mailhost.test', '-f', 'json']);
      expect(run.code, run.stderr).toBe(5);
      expect(run.stdout + run.stderr).toContain("the server's mx report holds no mx record");
    } finally {
      await empty.close();
    }
  });

  it('refuses a dns answer that leaves a type out, repeats one, or gives another type\'s records', async () => {
    const cases: Array<{ types: string; sent: string; reason: string }> = [
      { types: 'A,MX,TXT', sent: 'A,MX', reason: 'asked for A,MX,TXT, it gave 2 items' },
      { types: 'A,MX,TXT', sent: 'A,TXT,MX', reason: 'item 2 holds "TXT" records, not the MX records asked' },
      { types: 'MX', sent: 'A', reason: 'item 1 holds "A" records, not the MX records asked' },
    ];
    for (const { types, sent, reason } of cases) {
      const front = await lyingServer(withParam('type', types, sent));
      try {
        const run = await remoteAt(front, ['dns', 'mailhost.test', '--type', types, '-f', 'json']);
        expect(run.code, run.stderr + run.stdout).toBe(5);
        expect(run.stderr + run.stdout).toContain(`the server's answer is not a valid dns answer: ${reason}`);
      } finally {
        await front.close();
      }
    }
    // The honest answer through the same front passes.
    const honest = await lyingServer((url, body) => ({ url, body }));
    try {
      same(await local(['dns', 'mailhost.test', '--type', 'A,MX,TXT', '-f', 'json']), await remoteAt(honest, ['dns', 'mailhost.test', '--type', 'A,MX,TXT', '-f', 'json']));
    } finally {
      await honest.close();
    }
  });
});
