/**
 * `rdap` from the CLI, from GET /api/rdap of a `netintel serve` process,
 * in remote mode and from the library, against the local RDAP registry and
 * registrar of test/support/rdap-server.ts. The server and the library run
 * as processes of their own that trust the registry's test CA through
 * Node's NODE_EXTRA_CA_CERTS (the CLI's way is --tls-ca).
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, tempDir, type RunResult } from '../support/cli.js';
import { startRdapServer, type RdapTestServer } from '../support/rdap-server.js';
import { serve, type Served } from '../support/served.js';
import { contractOf } from '../server/openapi-contract.js';

describe('rdap', () => {
  const scratch = tempDir('netintel-rdap-remote-');
  const caFile = join(scratch.path, 'rdap-ca.pem');
  let rdap: RdapTestServer;
  let served: Served;

  beforeAll(async () => {
    rdap = await startRdapServer();
    writeFileSync(caFile, rdap.ca);
    // The server may reach the registry on 127.0.0.1 only because it is told to: its public-target rule refuses loopback otherwise.
    served = await serve(['--data-dir', rdap.freshDataDir(), '--db', join(scratch.path, 'keys.db'), '--allow-private-targets', '--log-level', 'silent'], { NODE_EXTRA_CA_CERTS: caFile });
  });
  afterAll(async () => {
    served?.child.kill('SIGTERM');
    if (served) await served.exit;
    await rdap?.close();
    scratch.remove();
  });

  const local = (args: string[]) => runCli([...args, '--data-dir', rdap.freshDataDir(), '--tls-ca', caFile]);
  const remote = (args: string[]) => runCli([...args, '--server', served.url]);
  /** The records without `cached`, which depends on what the data dir asked before. */
  const uncached = (result: RunResult) => result.stdout.replace(/"cached": (true|false)/g, '"cached": <cached>').replace(/ \(cached\)/g, '');

  it('prints the same records locally and in remote mode, failures included', async () => {
    for (const format of ['json', 'table', 'csv']) {
      const args = ['rdap', '192.0.2.7', 'AS64496', 'example.test', 'redacted.test', 'missing.test', 'localhost', '-f', format];
      const [a, b] = [await local(args), await remote(args)];
      expect(a.code, a.stderr).toBe(7);
      expect(uncached(b)).toBe(uncached(a));
      expect(b.stderr).toBe(a.stderr);
      expect(b.code).toBe(a.code);
    }
  });

  it('answers GET /api/rdap with the record the CLI prints, and refuses bad parameters with 400', async () => {
    const response = await fetch(`${served.url}/api/rdap?target=soon.test&expiry_days=30`);
    expect(response.status).toBe(200);
    const record = (await response.json()) as { findings: Array<{ id: string; severity: string }> };
    const cli = JSON.parse((await local(['rdap', 'soon.test', '--expiry-days', '30', '-f', 'json'])).stdout) as typeof record;
    expect(record).toEqual(cli);
    expect(record.findings.find((item) => item.id === 'rdap_domain_expires_soon')?.severity).toBe('warning');
    expect((await fetch(`${served.url}/api/rdap?target=soon.test&expiry_days=-1`)).status).toBe(400);
    expect((await fetch(`${served.url}/api/rdap`)).status).toBe(400);
    const missing = await fetch(`${served.url}/api/rdap?target=missing.test`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('not_found');
  });

  it('answers as /openapi.json documents: records (redacted, expiring, a network, an AS), 404, 400, a 502 of a malformed answer', async () => {
    const contract = contractOf(await (await fetch(`${served.url}/openapi.json`)).text());
    const targets = ['192.0.2.7', '2001:db8::/32', 'AS64496', 'example.test', 'redacted.test', 'soon.test', 'gone.test', 'lost-registrar.test', 'missing.test', 'broken.test', 'huge.test', 'localhost'];
    for (const url of [...targets.map((target) => `/api/rdap?target=${encodeURIComponent(target)}`), '/api/rdap?target=example.test&expiry_days=4000', '/api/rdap']) {
      const response = await fetch(`${served.url}${url}`);
      const body = await response.text();
      const problems = contract.check({ method: 'GET', url, status: response.status, headers: Object.fromEntries(response.headers), body });
      expect(problems, `${url}: ${response.status} ${body.slice(0, 300)}`).toEqual([]);
    }
  });

  it('fails on warning in remote mode as locally (cron)', async () => {
    const args = ['rdap', 'soon.test', '--expiry-days', '30', '--fail-on', 'warning'];
    expect((await local(args)).code).toBe(10);
    expect((await remote(args)).code).toBe(10);
  });

  it('shows the escape sequences and bidi overrides of an answer visibly in the terminal views, and keeps them exact in json', async () => {
    for (const format of ['table', 'csv']) {
      const result = await local(['rdap', 'evil.test', '-f', format]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    }
    const json = JSON.parse((await local(['rdap', 'evil.test', '-f', 'json'])).stdout) as { registrar: { name: string } };
    expect(json.registrar.name).toBe('Evil \u001b]0;pwned\u0007 Registrar \u202egnp.exe');
  });

  it('refuses --tls-ca in remote mode: the server trusts its own CAs', async () => {
    const result = await runCli(['rdap', '192.0.2.7', '--server', served.url, '--tls-ca', caFile]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('remote mode cannot send --tls-ca');
  });

  it('is a library lookup', async () => {
    const script = [
      `import { createNetintel, lookup } from ${JSON.stringify(join(REPO_ROOT, 'dist', 'src', 'lib', 'index.js'))};`,
      `const client = createNetintel({ dataDir: ${JSON.stringify(rdap.freshDataDir())} });`,
      `const [record] = await lookup(client, 'rdap', '192.0.2.7');`,
      `const failure = await lookup(client, 'rdap', 'missing.test').catch((error) => error.code);`,
      'await client.close();',
      'console.log(JSON.stringify({ abuse: record.abuse.email, failure }));',
    ].join('\n');
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { env: { PATH: process.env.PATH, NODE_EXTRA_CA_CERTS: caFile } });
    expect(JSON.parse(stdout)).toEqual({ abuse: 'abuse@example.net', failure: 'not_found' });
  });
});
