import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { startTestServer, type TestServer } from '../server/harness.js';

describe('netintel quota', () => {
  let server: TestServer;
  let url: string;

  beforeAll(async () => {
    server = await startTestServer({ clock: { now: Date.now, advance: () => {}, set: () => {} } });
    url = await server.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => server.close());

  it('shows the key\'s plan and what is left, without spending any of it', async () => {
    const key = await server.key('pro');
    await runCli(['ip', '8.8.8.8', '1.1.1.1', '--server', url, '--api-key', key]);
    for (let i = 0; i < 2; i++) {
      const result = await runCli(['quota', '--server', url, '--api-key', key, '-f', 'json']);
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({
        kind: 'quota',
        plan: 'pro',
        key_id: key.slice(3, 15),
        features: ['premium', 'bulk'],
        daily: { limit: 100_000, remaining: 99_998 },
        burst: { capacity: 1000, per_minute: 500 },
        batch: 50,
        bulk_max: 100,
      });
    }
  });

  it('shows the free tier of the caller\'s address without a key, as a table by default', async () => {
    const result = await runCli(['quota', '--server', url]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^plan free/);
    expect(result.stdout).toMatch(/^today +[\d,]+ of 1,000 requests left/m);
  });

  it('needs --server, and says a bad key with exit 8', async () => {
    const local = await runCli(['quota']);
    expect(local.code).toBe(2);
    expect(local.stderr).toMatch(/quota asks a netintel server/);
    const bad = await runCli(['quota', '--server', url, '--api-key', 'wrong', '-f', 'json']);
    expect(bad.code).toBe(8);
    expect(JSON.parse(bad.stdout)).toMatchObject({ error: { code: 'unauthorized', details: { reason: 'malformed' } } });
  });
});
