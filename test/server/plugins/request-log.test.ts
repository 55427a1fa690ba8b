/**
 * The request-log plugin (src/server/plugins/request-log.ts): one line per
 * answered request, with the caller and its plan, never the key; none at a
 * warn level. `netintel serve`'s JSON lines on stderr are tested with the
 * command (test/commands/serve.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { identifyCaller } from '../../../src/server/plugins/identify-caller.js';
import { problemErrors } from '../../../src/server/plugins/problem-errors.js';
import { requestLog } from '../../../src/server/plugins/request-log.js';
import { keyStoreAt } from '../../support/stores.js';
import { pluginServer, type PluginServer } from './plugin-server.js';

let server: PluginServer;
let closeKeys: () => Promise<void>;

afterEach(async () => {
  await server.app.close();
  await closeKeys();
});

async function logged(level: string) {
  const keys = await keyStoreAt(':memory:');
  closeKeys = keys.close;
  server = pluginServer({ logLevel: level });
  const { app, callers, plans } = server;
  void app.register(problemErrors, { callers, bodyLimit: 1024, handlerTimeoutMs: 1000 });
  void app.register(identifyCaller, { callers, keys, plans });
  void app.register(requestLog, { level });
  app.get('/api/thing', { config: { api: true } }, async () => ({ ok: true }));
  await app.ready();
  return { app, keys, requests: () => server.logs.filter((line) => line.msg === 'request') };
}

describe('the request-log plugin', () => {
  it('writes one line per answered request: method, path without its query, status, time, caller, plan and key id', async () => {
    const { app, keys, requests } = await logged('info');
    const created = await keys.create({ plan: 'pro', label: 't', limits: null });
    await app.inject({ url: '/api/thing?secret=1', remoteAddress: '203.0.113.5' });
    await app.inject({ url: '/api/thing', headers: { 'x-api-key': created.key } });
    await app.inject({ url: '/api/thing', headers: { 'x-api-key': 'junk' } });
    const lines = requests();
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({ level: 30, method: 'GET', path: '/api/thing', status: 200, client: '203.0.113.5', plan: 'free' });
    expect(typeof lines[0]!.ms).toBe('number');
    expect(lines[0]).not.toHaveProperty('key');
    expect(lines[1]).toMatchObject({ status: 200, plan: 'pro', key: created.record.id });
    expect(lines[2]).toMatchObject({ status: 401, plan: 'free' });
    expect(JSON.stringify(server.logs)).not.toContain(created.key);
    expect(JSON.stringify(server.logs)).not.toContain('secret=1');
  });

  it('writes none at a warn level', async () => {
    const quiet = await logged('warn');
    await quiet.app.inject({ url: '/api/thing' });
    expect(server.logs).toEqual([]);
  });
});
