/**
 * End-to-end goldens of every command: the built program (`node
 * bin/netintel.js`, run `npm run build` first) as a child process, against
 * loopback DNS, DNSBL and SMTP peers and a `netintel serve` of its own.
 * Each run's command line, exit code, stdout and stderr are compared with
 * test/e2e/golden/; UPDATE_GOLDEN=1 rewrites them (review the diff).
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnCli, tempDir } from '../support/cli.js';
import { serve, type Served } from '../support/served.js';
import { goldenCorpus, type GoldenCase } from './corpus.js';
import { expectGolden, goldenText, normalise, type Replacement } from './golden.js';
import { startPeers, type Peers } from './peers.js';

let peers: Peers;

beforeAll(async () => {
  peers = await startPeers();
});

/**
 * The placeholders of a run: the CA file, and the ports of the peers its
 * command line names (only those: a port number can also be an AS number or
 * a postal code in another run's output).
 */
function replacementsFor(argv: readonly string[], stdin = ''): Replacement[] {
  // Ports named by the targets of a list read from stdin (host:port lines) are replaced too; a number
  // elsewhere in a long list (a group of an IPv6 address) that happens to equal a peer's port is not one.
  const line = argv.join(' ');
  const named = (port: number) => new RegExp(`\\b${port}\\b`).test(line) || new RegExp(`^[^:\\s]+:${port}$`, 'm').test(stdin);
  return [
    { pattern: new RegExp(escapeRegExp(peers.caFile), 'g'), with: '<ca.pem>' },
    { pattern: new RegExp(escapeRegExp(peers.rdapCaFile), 'g'), with: '<rdap-ca.pem>' },
    // The RDAP server's port is in the URLs the bootstrap files give, not in the command line.
    { pattern: new RegExp(`(?<=127\\.0\\.0\\.1:)${peers.rdap.port}\\b`, 'g'), with: '<rdap-port>' },
    { pattern: new RegExp(`${escapeRegExp(join(tmpdir(), 'netintel-rdap-'))}\\w+`, 'g'), with: '<rdap-data-dir>' },
    { pattern: new RegExp(escapeRegExp(peers.rpkiDataDir), 'g'), with: '<rpki-data>' },
    // The closed port also shows where a run was sent to it without naming it (a well-known port diverted).
    { pattern: new RegExp(`(?<=(?:127\\.0\\.0\\.1|\\[::1\\]|::1):)${peers.closedPort}\\b`, 'g'), with: '<closed-port>' },
    ...peers.ports.filter(({ port }) => named(port)).map(({ port, name }) => ({ pattern: new RegExp(`\\b${port}\\b`, 'g'), with: name })),
  ];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

afterAll(async () => {
  await peers?.close();
});

async function runCase(testCase: GoldenCase): Promise<string> {
  const run = await spawnCli(testCase.argv, { input: testCase.stdin ?? '', devNullStdin: testCase.devNullStdin, env: { ...peers.env, ...testCase.env }, timeoutMs: 60_000 });
  expect(run.signal, `killed by ${run.signal}: ${run.stderr}`).toBeNull();
  return goldenText({ argv: testCase.argv, code: run.code, stdout: run.stdout, stderr: run.stderr }, replacementsFor(testCase.argv, testCase.stdin), testCase.digestStdout);
}

describe('every command, end to end', () => {
  // The corpus needs the peers' ports; a placeholder list of the same ids names the tests.
  const ids = goldenCorpus(PLACEHOLDER_PEERS).map((testCase) => testCase.id);
  for (const [index, id] of ids.entries()) {
    // The SMTP conversations run one at a time: a stage that takes seconds on a loaded machine is a finding of its own.
    const test = /^(smtp|email\/general|email\/type-smtp|view\/(smtp|email)(?!-no-smtp))/.test(id) ? it : it.concurrent;
    test(`${id} prints its golden output and exit code`, async () => {
      const testCase = goldenCorpus(peers)[index]!;
      expectGolden(id, await runCase(testCase));
    }, 90_000);
  }
});

describe('keys, serve and quota, end to end', () => {
  const scratch = tempDir('netintel-e2e-keys-');
  let served: Served | undefined;
  afterAll(async () => {
    served?.child.kill('SIGTERM');
    if (served) await served.exit;
    scratch.remove();
  });

  it('creates and lists keys, serves the API with them and reports the quota', async () => {
    const db = `${scratch.path}/keys.db`;
    const texts: string[] = [];
    const fixed: Replacement[] = [
      { pattern: new RegExp(escapeRegExp(scratch.path), 'g'), with: '<tmp>' },
      // The burst allowance refills continuously: what remains depends on the time the requests took
      { pattern: /(burst\.remaining\s*│\s*)\d+/g, with: '$1<n>' },
      { pattern: /("uptime_seconds":)\d+/g, with: '$1<n>' },
    ];
    // `columns`: the width the human view (format table) is fitted to, written above the run.
    const record = async (argv: string[], columns?: number) => {
      const run = await spawnCli(argv, { timeoutMs: 30_000, env: columns ? { COLUMNS: String(columns) } : {} });
      texts.push((columns ? `# COLUMNS=${columns}\n` : '') + goldenText({ argv, ...run }, [...fixed, ...replacementsFor(argv)]));
      return run;
    };
    const createArgv = ['keys', 'create', '--db', db, '--plan', 'pro', '--label', 'e2e', '-f', 'json'];
    const created = await spawnCli(createArgv, { timeoutMs: 30_000 });
    const { key, id } = JSON.parse(created.stdout) as { key: string; id: string };
    fixed.push({ pattern: new RegExp(`\\b${id}\\b`, 'g'), with: '<key-id>' });
    texts.push(goldenText({ argv: createArgv, ...created }, fixed));
    await record(['keys', 'list', '--db', db, '-f', 'table'], 80);
    await record(['keys', 'list', '--db', db, '-f', 'table'], 120);
    served = await serve(['--db', db, '--allow-private-targets', '--log-level', 'silent']);
    fixed.push({ pattern: new RegExp(escapeRegExp(served.url), 'g'), with: '<server>' });
    const requests: Array<{ path: string; key?: boolean; method?: string; body?: unknown }> = [
      { path: '/api/ipinfo?ip=8.8.8.8' },
      { path: '/api/ipinfo?ip=8.8.8.8', key: true },
      { path: '/api/ipinfo?ip=8.8.8.8&format=csv', key: true },
      { path: '/api/ipinfo?ip=8.8.8.8&format=xml', key: true },
      { path: '/api/ipinfo?ip=not-an-ip' },
      { path: '/api/asn-lookup?asn=13335', key: true },
      { path: '/api/asn-lookup?bulk=8.8.8.8,AS13335,bogus', key: true },
      { path: '/api/vpn-check?ip=185.220.101.1', key: true },
      { path: `/api/dns-lookup?domain=example.test&type=A&resolver=${peers.dns.address}` },
      { path: '/api/bulk', key: true, method: 'POST', body: { ips: ['8.8.8.8', '1.1.1.1', 'bogus'], fields: ['location'] } },
      { path: '/api/bulk', method: 'POST', body: { ips: ['8.8.8.8'] } },
      { path: '/api/no-such-endpoint' },
      { path: '/healthz' },
    ];
    for (const request of requests) {
      const response = await fetch(`${served.url}${request.path}`, {
        method: request.method ?? 'GET',
        headers: { ...(request.key ? { 'x-api-key': key } : {}), ...(request.body ? { 'content-type': 'application/json' } : {}) },
        body: request.body ? JSON.stringify(request.body) : undefined,
      });
      const shownHeaders = ['content-type', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-retryafter']
        .map((name) => [name, response.headers.get(name)] as const)
        .filter(([, value]) => value !== null)
        .map(([name, value]) => `${name}: ${value}`);
      const body = await response.text();
      texts.push(
        normalise(
          [`> ${request.method ?? 'GET'} ${request.path}${request.key ? ' (with key)' : ''}`, `< ${response.status}`, ...shownHeaders, '', body, ''].join('\n'),
          [...fixed, ...replacementsFor([request.path])],
        ),
      );
    }
    await record(['quota', '--server', served.url, '--api-key', key, '-f', 'table'], 80);
    await record(['quota', '--server', served.url, '--api-key', key, '-f', 'table'], 120);
    await record(['quota', '--server', served.url, '--api-key', 'ni_wrong', '-f', 'json']);
    expectGolden('serve/session', texts.join('\n'));
  }, 120_000);
});

/** Stand-ins with the shape of the peers, so the test names can be listed before the peers start. */
const PLACEHOLDER_PEERS: Peers = {
  dns: { address: '127.0.0.1:0' } as Peers['dns'],
  smtp: { port: 0 } as Peers['smtp'],
  relay: { port: 0 } as Peers['relay'],
  rdap: { port: 0 } as Peers['rdap'],
  rdapDataDir: () => '',
  rdapCaFile: '',
  caFile: '',
  closedPort: 0,
  env: {},
  dnsFlags: [],
  silentFlags: [],
  ports: [],
  close: async () => {},
};
