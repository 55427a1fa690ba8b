/**
 * Remote mode against a server that answers with another target's record:
 * 8.8.8.8's IP record for 1.1.1.1, evil.example's DNS record for
 * example.com, a bulk answer whose records are swapped under their `query`
 * labels. Each must fail as `upstream` (exit 5) naming what was asked and
 * what came back; a record of the target asked passes, however the target
 * was written (IPv6 text forms, an IPv4-mapped address, case, a trailing
 * dot, an IDN's U-label).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseIpAddress } from '../../src/engine/address/ip-address.js';
import { runCli } from '../support/cli.js';
import { hostileHttpPeer, type HostilePeer } from './hostile-peer.js';

const peers: HostilePeer[] = [];
async function peer(handler: (request: IncomingMessage, response: ServerResponse, body: string) => void): Promise<HostilePeer> {
  const started = await hostileHttpPeer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => handler(request, response, Buffer.concat(chunks).toString('utf8')));
  });
  peers.push(started);
  return started;
}
afterEach(async () => {
  await Promise.all(peers.splice(0).map((item) => item.close()));
});

function json(response: ServerResponse, body: unknown): void {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

const QUOTA = {
  kind: 'quota',
  plan: 'pro',
  title: 'Pro',
  key_id: 'k1',
  client: '127.0.0.1',
  features: ['premium', 'bulk'],
  daily: { limit: 1000, remaining: 1000, reset_at: '2030-01-02T00:00:00.000Z' },
  burst: { capacity: 10, remaining: 10, per_minute: 10 },
  batch: 100,
  bulk_max: 100,
};

function dnsRecord(domain: string, unicode = domain, target = domain): Record<string, unknown> {
  return {
    kind: 'dns',
    target,
    domain,
    domain_unicode: unicode,
    type: 'A',
    status: 'answer',
    rcode: 'NOERROR',
    answers: [{ name: domain, type: 'A', ttl_seconds: 60, data: '192.0.2.7' }],
    ignored_answers: 0,
    resolver: '192.0.2.53:53',
    transport: 'udp',
    latency_ms: 1,
  };
}

/** What a run showed: its error rows (stdout) and messages (stderr). */
const shown = (run: { stdout: string; stderr: string }) => `${run.stdout}\n${run.stderr}`;

/** Every row of a CSV run is an error row: no record was printed. */
function onlyErrorRows(csv: string): void {
  const [, ...rows] = csv.trim().split('\n');
  expect(rows.length).toBeGreaterThan(0);
  for (const row of rows) expect(row).toMatch(/,upstream,/);
}

describe('remote mode checks that a record answers the target asked', () => {
  /** Real IP records, as the local engine gives them (and an honest server would), by canonical address. */
  const records = new Map<string, Record<string, unknown>>();
  beforeAll(async () => {
    for (const ip of ['8.8.8.8', '1.1.1.1', '2001:4860:4860::8888']) {
      const run = await runCli(['ip', ip, '-f', 'json']);
      expect(run.code, run.stderr).toBe(0);
      records.set(ip, JSON.parse(run.stdout) as Record<string, unknown>);
    }
  });
  const honest = (ip: string) => records.get(parseIpAddress(ip).text)!;
  const asked = (request: IncomingMessage, name: string) => new URL(request.url!, 'http://x').searchParams.get(name)!;

  it('refuses 8.8.8.8\'s record given for 1.1.1.1 (exit 5, one line per target)', async () => {
    const liar = await peer((request, response) => json(response, records.get('8.8.8.8')));
    const run = await runCli(['ip', '1.1.1.1', '--server', liar.url, '--api-key', 'K']);
    expect(run.code, run.stderr).toBe(5);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('the server\'s answer is not a valid ip record: asked about "1.1.1.1", the record is for "8.8.8.8"');

    const two = await runCli(['ip', '1.1.1.1', '9.9.9.9', '--server', liar.url, '--api-key', 'K', '-f', 'csv', '--fields', 'ip,location.city']);
    expect(two.code, two.stderr).toBe(5);
    onlyErrorRows(two.stdout);
    expect(shown(two)).toContain('asked about ""1.1.1.1"", the record is for ""8.8.8.8""');
    expect(shown(two)).toContain('asked about ""9.9.9.9"", the record is for ""8.8.8.8""');
  });

  it('takes the record of the address asked, in any text form of it', async () => {
    const server = await peer((request, response) => json(response, honest(asked(request, 'ip'))));
    for (const [target, ip] of [
      ['8.8.8.8', '8.8.8.8'],
      ['::ffff:8.8.8.8', '8.8.8.8'],
      ['2001:4860:4860:0:0:0:0:8888', '2001:4860:4860::8888'],
      ['2001:4860:4860:0000::8888', '2001:4860:4860::8888'],
      ['2001:4860:4860::8888', '2001:4860:4860::8888'],
    ]) {
      const run = await runCli(['ip', target!, '--server', server.url, '--api-key', 'K', '-f', 'json']);
      expect(run.code, `${target}: ${run.stderr}`).toBe(0);
      expect((JSON.parse(run.stdout) as { ip: string }).ip).toBe(ip);
    }
    // An answer naming the address asked in another text form is the same address.
    const loose = await peer((request, response) => json(response, { ...honest(asked(request, 'ip')), ip: '2001:4860:4860:0:0:0:0:8888' }));
    const run = await runCli(['ip', '2001:4860:4860::8888', '--server', loose.url, '--api-key', 'K', '-f', 'json']);
    expect(run.code, run.stderr).toBe(0);
  });

  it('refuses a DNS record of another name, and takes one of the name asked however it was written', async () => {
    const liar = await peer((_request, response) => json(response, dnsRecord('evil.example')));
    const run = await runCli(['dns', 'example.com', '--server', liar.url, '--api-key', 'K']);
    expect(run.code, run.stderr).toBe(5);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('the server\'s answer is not a valid dns answer: asked about "example.com", the record is for "evil.example"');
    const csv = await runCli(['dns', 'example.com', '--server', liar.url, '--api-key', 'K', '-f', 'csv', '--fields', 'domain,answers']);
    expect(csv.code, csv.stderr).toBe(5);
    onlyErrorRows(csv.stdout);

    // The ASCII name right but the Unicode name (what the views print) another's.
    const twoFaced = await peer((_request, response) => json(response, dnsRecord('xn--bcher-kva.example', 'evil.example', 'xn--bcher-kva.example')));
    const faced = await runCli(['dns', 'bücher.example', '--server', twoFaced.url, '--api-key', 'K']);
    expect(faced.code, faced.stderr).toBe(5);
    expect(faced.stdout).toBe('');
    expect(faced.stderr).toContain('the record is for "evil.example" (its domain_unicode)');

    const honestDns = await peer((_request, response) => json(response, dnsRecord('xn--bcher-kva.example', 'bücher.example', 'xn--bcher-kva.example')));
    for (const name of ['bücher.example', 'BÜCHER.example.', 'xn--bcher-kva.example', 'XN--BCHER-KVA.EXAMPLE']) {
      const ok = await runCli(['dns', name, '--server', honestDns.url, '--api-key', 'K', '-f', 'json']);
      expect(ok.code, `${name}: ${ok.stderr}`).toBe(0);
    }
    const plain = await peer((_request, response) => json(response, dnsRecord('example.com')));
    const ok = await runCli(['dns', 'Example.COM.', '--server', plain.url, '--api-key', 'K', '-f', 'json']);
    expect(ok.code, ok.stderr).toBe(0);
  });

  it('refuses a bulk answer whose records are swapped under their query labels, and takes an honest one', async () => {
    const bulkServer = (swap: boolean) =>
      peer((request, response, body) => {
        if (request.url!.startsWith('/api/quota')) return json(response, QUOTA);
        const { ips } = JSON.parse(body) as { ips: string[] };
        const results = ips.map((ip) => ({ query: ip, record: honest(ip) }));
        if (swap) [results[0]!.record, results[1]!.record] = [results[1]!.record, results[0]!.record];
        json(response, { results, summary: { total: results.length, succeeded: results.length, failed: 0, errors: {} } });
      });
    const swapped = await bulkServer(true);
    const input = '8.8.8.8\n1.1.1.1\n2001:4860:4860:0:0::8888\n';
    const run = await runCli(['bulk', '--server', swapped.url, '--api-key', 'K', '-f', 'csv', '--fields', 'ip,location.city'], { stdin: input });
    expect(run.code, run.stderr).toBe(5);
    onlyErrorRows(run.stdout);
    expect(shown(run)).toContain('the server\'s answer is not a valid ip bulk answer: item 1: asked about ""8.8.8.8"", the record is for ""1.1.1.1""');

    const fair = await bulkServer(false);
    const ok = await runCli(['bulk', '--server', fair.url, '--api-key', 'K', '-f', 'csv', '--fields', 'ip'], { stdin: input });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('8.8.8.8');
    expect(ok.stdout).toContain('1.1.1.1');
    expect(ok.stdout).toContain('2001:4860:4860::8888');
  });

  it('refuses a swapped record in bulk on a plan without the bulk form too, where each address is one GET /api/ipinfo', async () => {
    const oneByOne = await peer((request, response) => {
      if (request.url!.startsWith('/api/quota')) return json(response, { ...QUOTA, bulk_max: null });
      // 1.1.1.1's record for 8.8.8.8, the others honest.
      const ip = asked(request, 'ip');
      json(response, honest(ip === '8.8.8.8' ? '1.1.1.1' : ip));
    });
    const run = await runCli(['bulk', '--server', oneByOne.url, '--api-key', 'K', '-f', 'csv', '--fields', 'ip'], { stdin: '8.8.8.8\n1.1.1.1\n' });
    expect(run.code, run.stderr).toBe(7);
    expect(shown(run)).toContain('the server\'s answer is not a valid ip record: asked about ""8.8.8.8"", the record is for ""1.1.1.1""');
    expect(run.stdout.trimEnd().split('\n').at(-1)).toMatch(/^1\.1\.1\.1/);
  });
});

