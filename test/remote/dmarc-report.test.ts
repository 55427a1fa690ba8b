/**
 * `dmarc-report`: the same rows and summary from the CLI, from POST
 * /api/dmarc-reports (under the OpenAPI contract), in remote mode and from
 * the library, with PTR names from a DNS server on 127.0.0.1.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { createNetintel, summarizeDmarcReports } from '../../src/lib/index.js';
import { expectSameRun as same, runCli } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { startRemoteServer, type TestServer } from '../server/harness.js';

const FIXTURES = 'test/fixtures/dmarc';
const FILES = ['google.xml', 'yahoo-dmarcbis.xml.gz', 'microsoft.zip', 'report.eml', 'reports.mbox', 'truncated.xml', 'not-a-report.txt'].map((name) => `${FIXTURES}/${name}`);

describe('dmarc-report', () => {
  let dns: DnsTestServer;
  let server: TestServer & { url: string; apiKey: string };

  beforeAll(async () => {
    dns = await startDnsServer({
      records: [
        { name: '41.220.85.209.in-addr.arpa', type: 'PTR', data: 'mail-sor-f41.google.test' },
        { name: '50.22.107.40.in-addr.arpa', type: 'PTR', data: 'mail-eopbgr.outlook.test' },
      ],
      behaviours: { '7.100.51.198.in-addr.arpa': 'servfail' },
    });
    server = await startRemoteServer({ engine: { resolvers: [parseResolverAddress(dns.address)], timeoutMs: 2000 } });
  });
  afterAll(async () => {
    await server.close();
    await dns.close();
  });

  const local = (args: string[], stdin?: string) => runCli(['dmarc-report', ...args, '--resolver', dns.address, '--retries', '0'], { stdin, env: { COLUMNS: '80' } });
  const remote = (args: string[], stdin?: string) => runCli(['dmarc-report', ...args, '--server', server.url, '--api-key', server.apiKey], { stdin, env: { COLUMNS: '80' } });

  it('looks the PTR name of each source up once; a failed lookup is unknown, never "no name"', async () => {
    const result = await local([`${FIXTURES}/google.xml`, '-f', 'ndjson']);
    expect(result.code).toBe(0);
    const rows = result.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(rows.map((row) => [row.source_ip, row.source.ptr, row.source.ptr_status])).toEqual([
      ['209.85.220.41', 'mail-sor-f41.google.test', 'answer'],
      ['40.107.22.50', 'mail-eopbgr.outlook.test', 'answer'],
      ['198.51.100.7', null, 'unknown'],
      ['185.230.63.107', null, 'nxdomain'],
      ['185.230.63.107', null, 'nxdomain'],
    ]);
  });

  it('counts a report sent twice in one mbox once in remote mode too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netintel-dmarc-remote-'));
    try {
      const inbox = readFileSync(`${FIXTURES}/reports.mbox`, 'utf8');
      writeFileSync(join(dir, 'twice.mbox'), `${inbox}\n${inbox}`);
      const [a, b] = [await local([join(dir, 'twice.mbox'), '--no-ptr']), await remote([join(dir, 'twice.mbox'), '--no-ptr'])];
      expect(a.stdout).toContain('(2 duplicates not counted)');
      same(a, b);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  for (const format of ['table', 'json', 'csv', 'ndjson']) {
    it(`prints the same ${format} in remote mode, hostile files and duplicates included`, async () => {
      const [a, b] = [await local([...FILES, '-f', format]), await remote([...FILES, '-f', format])];
      expect(a.code).toBe(7);
      same(a, b);
    });
  }

  it('sends a report in plain XML gzipped, so one several times the body limit gives the rows it gives locally', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netintel-dmarc-remote-'));
    try {
      const xml = readFileSync(`${FIXTURES}/google.xml`, 'utf8');
      const record = xml.slice(xml.indexOf('<record>'), xml.lastIndexOf('</record>') + '</record>'.length);
      const big = xml.replace('</feedback>', `${record.repeat(200)}</feedback>`).replace('17214528413271920373', 'big');
      expect(big.length).toBeGreaterThan(4 * 65536);
      writeFileSync(join(dir, 'big.xml'), big);
      const args = [join(dir, 'big.xml'), '--no-ptr', '-f', 'csv'];
      const [a, b] = [await local(args), await remote(args)];
      expect(a.code).toBe(0);
      expect(a.stdout.trimEnd().split('\n')).toHaveLength(1 + 5 * 201);
      same(a, b);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names a file too large for the server\'s body limit in remote mode, and reads the others', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netintel-dmarc-remote-'));
    try {
      // A mailbox goes as it is: 30 copies of one are over the limit however they would compress.
      writeFileSync(join(dir, 'big.mbox'), readFileSync(`${FIXTURES}/reports.mbox`, 'utf8').concat('\n').repeat(30));
      const result = await remote([join(dir, 'big.mbox'), `${FIXTURES}/microsoft.zip`, '--no-ptr', '-f', 'csv', '--fields', 'source_ip,count']);
      expect(result.code).toBe(7);
      const rows = result.stdout.trimEnd().split('\n');
      expect(rows.slice(1).map((row) => row.split(',')[0])).toEqual([join(dir, 'big.mbox'), `${FIXTURES}/microsoft.zip`, `${FIXTURES}/microsoft.zip`]);
      expect(rows[1]).toMatch(/big\.mbox: .*larger than 65536 bytes/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers POST /api/dmarc-reports with the summary and the rows, as the document says', async () => {
    const files = FILES.map((file) => ({ name: file.slice(FIXTURES.length + 1), content_base64: readFileSync(file).toString('base64') }));
    const response = await server.app.inject({ method: 'POST', url: '/api/dmarc-reports', headers: { 'x-api-key': server.apiKey }, payload: { files, reverse_dns: false } });
    expect(response.statusCode).toBe(200);
    const answer = JSON.parse(response.body);
    expect(answer.summary).toMatchObject({ kind: 'dmarc-summary', messages: 12_485, sources: 6, failing_sources: 3, reports: 4, duplicate_reports: 2, files: 7, files_failed: 2 });
    expect(answer.summary.headline).toBe('12,485 messages from 6 sources; 3 sources fail DMARC: 0.9% of volume');
    expect(answer.results.filter((item: { error?: unknown }) => item.error).map((item: { query: string }) => item.query)).toEqual(['truncated.xml', 'not-a-report.txt']);
    expect(server.contractViolations).toEqual([]);
    const bad = await server.app.inject({ method: 'POST', url: '/api/dmarc-reports', headers: { 'x-api-key': server.apiKey }, payload: { files: [] } });
    expect(bad.statusCode).toBe(400);
    const since = await server.app.inject({ method: 'POST', url: '/api/dmarc-reports', headers: { 'x-api-key': server.apiKey }, payload: { files: files.slice(0, 1), since: 'yesterday-ish' } });
    expect(since.statusCode).toBe(400);
  });

  it('reads no more XML for a request than 50 times what it sent (at least 1 MiB, at most 16 MiB): a 2 KB request of a 59 MB report is refused', async () => {
    const { gzipSync } = await import('node:zlib');
    const { zipSync } = await import('fflate');
    const xml = readFileSync(`${FIXTURES}/google.xml`, 'utf8');
    const record = xml.slice(xml.indexOf('<record>'), xml.lastIndexOf('</record>') + '</record>'.length);
    const huge = Buffer.from(xml.replace('</feedback>', `${record.repeat(Math.ceil((59 * 1024 * 1024) / record.length))}</feedback>`));
    // A gzip inside a zip: each layer takes out what the other leaves.
    const amplifier = Buffer.from(zipSync({ 'r.xml.gz': gzipSync(huge, { level: 9 }) }, { level: 9 }));
    expect(amplifier.length).toBeLessThan(200 * 1024);
    const started = performance.now();
    const response = await server.app.inject({
      method: 'POST',
      url: '/api/dmarc-reports',
      headers: { 'x-api-key': server.apiKey },
      payload: { files: [{ name: 'tiny.zip', content_base64: amplifier.toString('base64') }, { name: 'google.xml', content_base64: Buffer.from(xml).toString('base64') }], reverse_dns: false },
    });
    expect(performance.now() - started).toBeLessThan(5000);
    expect(response.statusCode).toBe(200);
    const answer = JSON.parse(response.body);
    expect(answer.results[0]).toMatchObject({ query: 'tiny.zip', error: { code: 'invalid_input', message: expect.stringContaining('inflates past the cap on inflated bytes') } });
    // The request's other file is read: the cap is on what the request makes the server read.
    expect(answer.summary).toMatchObject({ files: 2, files_failed: 1, reports: 1 });
  });

  it('gives the library the summary the API answers', async () => {
    const client = createNetintel({ resolvers: [dns.address], retries: 0 });
    try {
      const summary = await summarizeDmarcReports(
        client,
        FILES.map((file) => ({ name: file.slice(FIXTURES.length + 1), content: readFileSync(file) })),
        { reverseDns: false },
      );
      const files = FILES.map((file) => ({ name: file.slice(FIXTURES.length + 1), content_base64: readFileSync(file).toString('base64') }));
      const answer = JSON.parse((await server.app.inject({ method: 'POST', url: '/api/dmarc-reports', headers: { 'x-api-key': server.apiKey }, payload: { files, reverse_dns: false } })).body);
      expect(summary).toEqual(answer.summary);
      expect(summary.failing.map((source) => source.source_ip)).toEqual(['198.51.100.7', '185.230.63.107', '203.0.113.5']);
    } finally {
      await client.close();
    }
  });
});
