/**
 * `netintel smtp` and DANE through main(): on by default on port 25, on
 * another port with --dane, off with --no-dane, refused in remote mode. The
 * TLSA lookup runs beside the conversation, so port 25 needs no server:
 * whatever answers (or not) on 127.0.0.1:25, the DANE section is there.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../../support/dns-server.js';

const HOST = 'mx.dane-cli.test';
let dns: DnsTestServer;

beforeAll(async () => {
  dns = await startDnsServer({
    records: [
      { name: HOST, type: 'A', data: '127.0.0.1' },
      { name: `_25._tcp.${HOST}`, type: 'TLSA', data: { usage: 3, selector: 1, matchingType: 1, certificate: createHash('sha256').update('key').digest() } },
    ],
    authenticData: true,
  });
});

afterAll(async () => {
  await dns?.close();
});

async function smtpJson(...args: string[]): Promise<{ code: number; record: Record<string, unknown>; stderr: string }> {
  const run = await runCli(['smtp', HOST, '--ip', '127.0.0.1', '--no-ptr', '--resolver', dns.address, '--timeout', '1000', '--retries', '0', '-f', 'json', ...args]);
  return { code: run.code, record: JSON.parse(run.stdout) as Record<string, unknown>, stderr: run.stderr };
}

describe('netintel smtp and DANE', () => {
  it('checks DANE by default on port 25', async () => {
    const { record } = await smtpJson('--port', '25');
    expect(record.dane).toMatchObject({ tlsa: { name: `_25._tcp.${HOST}`, status: 'answer' }, dnssec: { status: 'secure' } });
  });

  it('does not on another port unless --dane', async () => {
    expect((await smtpJson('--port', '2525')).record.dane).toBeNull();
    const { record } = await smtpJson('--port', '2525', '--dane');
    expect(record.dane).toMatchObject({ tlsa: { name: `_25._tcp.${HOST}` } });
  });

  it('--no-dane turns it off on port 25', async () => {
    expect((await smtpJson('--port', '25', '--no-dane')).record.dane).toBeNull();
  });

  it('remote mode refuses --dane in one line', async () => {
    const run = await runCli(['smtp', HOST, '--dane', '--server', 'http://127.0.0.1:9']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('netintel: remote mode cannot send --dane to the server: run netintel smtp without --server for it\n');
  });
});
