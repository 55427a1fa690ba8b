/**
 * The RPKI validity through the API and remote mode: a server whose data dir
 * holds an RPKI index answers /api/ipinfo and /api/asn-lookup with it (the
 * answers checked against /openapi.json by the harness), and `--server` runs
 * print what local runs over the same data dir print.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileRpkiIndex } from '../../src/engine/rpki/compile-rpki-index.js';
import { parseVrpJson } from '../../src/engine/rpki/vrp-json.js';
import { startTestServer, type TestServer } from '../server/harness.js';
import { runCli, tempDir } from '../support/cli.js';

const scratch = tempDir('netintel-remote-rpki-');
const DATA = join(scratch.path, 'data');
let server: TestServer;
let url: string;
let pro: string;

beforeAll(async () => {
  mkdirSync(DATA);
  const set = parseVrpJson(
    JSON.stringify({
      roas: [
        { asn: 'AS15169', prefix: '8.8.8.0/24', maxLength: 24, ta: 'arin' },
        { asn: 64500, prefix: '1.1.1.0/24', maxLength: 24, ta: 'apnic' },
        { asn: 15169, prefix: '2001:4860::/32', maxLength: 32, ta: 'arin' },
      ],
    }),
  );
  writeFileSync(join(DATA, 'rpki.idx'), compileRpkiIndex(set.vrps, { builtAt: new Date(0), updated: '2026-11-29T11:00:00Z', source: null }).bytes);
  server = await startTestServer({ clock: { now: Date.now, advance: () => {}, set: () => {} }, engine: { dataDir: DATA } });
  url = await server.app.listen({ host: '127.0.0.1', port: 0 });
  pro = await server.key('pro');
});

afterAll(async () => {
  await server.close();
  expect(server.contractViolations).toEqual([]);
  scratch.remove();
});

describe('RPKI through the API', () => {
  it('GET /api/ipinfo carries network.rpki', async () => {
    const valid = (await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8', headers: { 'x-api-key': pro } })).json();
    expect(valid.network.rpki).toEqual({
      status: 'valid',
      reason: null,
      route: '8.8.8.0/24',
      origin_asn: 15169,
      vrps: [{ asn: 15169, prefix: '8.8.8.0/24', max_length: 24, ta: 'arin', matches: true }],
    });
    expect(valid.meta.data.rpki).toBe('2026-11-29T11:00:00Z');
    const invalid = (await server.app.inject({ url: '/api/ipinfo?ip=1.1.1.1', headers: { 'x-api-key': pro } })).json();
    expect(invalid.network.rpki).toMatchObject({ status: 'invalid', reason: 'origin_not_authorised', origin_asn: 13335 });
  });

  it('GET /api/asn-lookup carries rpki for an address, null for an AS number', async () => {
    const byIp = (await server.app.inject({ url: '/api/asn-lookup?ip=2001:4860:4860::8888', headers: { 'x-api-key': pro } })).json();
    expect(byIp.rpki).toMatchObject({ status: 'invalid', reason: 'max_length_exceeded', origin_asn: 15169 });
    const byNumber = (await server.app.inject({ url: '/api/asn-lookup?asn=AS15169', headers: { 'x-api-key': pro } })).json();
    expect(byNumber.rpki).toBeNull();
    const bulk = (await server.app.inject({ url: '/api/asn-lookup?bulk=8.8.8.8,9.9.9.9', headers: { 'x-api-key': pro } })).json();
    expect(bulk.results.map((item: { record?: { rpki: { status: string } } }) => item.record?.rpki.status)).toEqual(['valid', 'not_found']);
  });
});

describe('RPKI in remote mode', () => {
  it.each([
    [['ip', '8.8.8.8', '1.1.1.1', '9.9.9.9', '-f', 'json']],
    [['ip', '1.1.1.1', '-f', 'csv']],
    [['ip', '1.1.1.1']],
    [['asn', '8.8.8.8,1.1.1.1,AS13335', '-f', 'ndjson']],
    [['asn', '2001:4860:4860::8888']],
  ])('%j prints what the local run prints', async (args) => {
    const local = await runCli([...args, '--data-dir', DATA], { env: { COLUMNS: '80' } });
    const remote = await runCli([...args, '--server', url, '--api-key', pro], { env: { COLUMNS: '80' } });
    expect(local.stdout).toMatch(/valid|not_found|not found/);
    expect(remote.stdout).toBe(local.stdout);
    expect(remote.code).toBe(local.code);
  });
});
