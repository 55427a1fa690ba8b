/**
 * A heavy request must not hold the others: while one asks for fifty large
 * autonomous systems at once (each a list of thousands of prefixes), the
 * server keeps answering /healthz.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';

// Large ASes of the bundled data (cloud, transit and access networks), none asked before in this process.
const LARGE_ASES = [
  16509, 14618, 8075, 15169, 396982, 13335, 3356, 174, 7018, 701, 209, 6939, 3320, 4134, 4837, 9808, 4766, 3462, 7922, 20115, 22773, 5650,
  6461, 1299, 2914, 3257, 6453, 6762, 12389, 8359, 3215, 12322, 5089, 2856, 3269, 6830, 9121, 4812, 17676, 4713, 2516, 4755, 9498, 45609,
  24560, 7738, 28573, 8151, 18881, 26599,
];

let server: TestServer;
let base: string;

beforeAll(async () => {
  server = await startTestServer();
  await server.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await server.close();
});

describe('a heavy request beside light ones', () => {
  it('answers /healthz while fifty large ASes are being looked up in one request', async () => {
    const key = await server.key('pro');
    let bulkDone = false;
    const bulk = fetch(`${base}/api/asn-lookup?bulk=${LARGE_ASES.map((asn) => `AS${asn}`).join(',')}`, { headers: { 'x-api-key': key } }).then(async (response) => {
      const body = (await response.json()) as { results: unknown[] };
      bulkDone = true;
      return { status: response.status, items: body.results.length };
    });
    // Health checks one after another until the bulk answer is in. Each lookup starts on a turn of the
    // event loop of its own, so many come back before it; in one blocking pass, only the few before and after.
    let healthBeforeBulk = 0;
    while (!bulkDone) {
      const health = await fetch(`${base}/healthz`);
      expect(health.status).toBe(200);
      if (!bulkDone) healthBeforeBulk += 1;
    }
    expect(await bulk).toEqual({ status: 200, items: LARGE_ASES.length });
    expect(healthBeforeBulk, 'health checks answered while the bulk request was in flight').toBeGreaterThanOrEqual(LARGE_ASES.length * 0.4);
  }, 60_000);
});
