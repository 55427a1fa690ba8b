/**
 * `netintel smtp` and `netintel email` with DANE and DNSSEC through main(),
 * against zones signed at test time (test/support/signed-zones.ts) and
 * served by NSD, validated from the test zone's key (--trust-anchor):
 * DANE is on by default on port 25, on another port with --dane, off with
 * --no-dane, refused in remote mode; the e-mail report judges the MX
 * records, the MX host and its TLSA records from the same anchor. The TLSA
 * lookup runs beside the conversation, so port 25 needs no server.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { closedPort, findExecutable } from '../../support/peers.js';
import { serveSignedZones, type ServedSignedZones, type SignedZones } from '../../support/signed-zones.js';

const HOST = 'www.child.test';
const TOOLS = { nsd: findExecutable('nsd'), keygen: findExecutable('dnssec-keygen'), signzone: findExecutable('dnssec-signzone') };
const missing = Object.entries(TOOLS).filter(([, path]) => !path).map(([name]) => name);
if (missing.length > 0) console.warn(`SKIPPING test/engine/smtp/dane-cli.test.ts: ${missing.join(', ')} not found (Debian nsd, bind9-utils)`);

describe.skipIf(missing.length > 0)('DANE and DNSSEC from the command line, on signed zones', () => {
  let zones: SignedZones;
  let served: ServedSignedZones;
  let anchorFile: string;

  beforeAll(async () => {
    served = await serveSignedZones(TOOLS.nsd!);
    zones = served.zones;
    anchorFile = join(zones.dir, 'anchor.key');
    await writeFile(anchorFile, zones.anchorKeyFile);
  }, 60_000);

  afterAll(async () => {
    await served?.stop();
  });

  const common = () => ['--resolver', `127.0.0.1:${served.port}`, '--timeout', '1000', '--retries', '0', '-f', 'json'];

  async function smtpJson(...args: string[]): Promise<Record<string, unknown>> {
    const run = await runCli(['smtp', HOST, '--ip', '127.0.0.1', '--no-ptr', '--trust-anchor', anchorFile, ...common(), ...args]);
    return JSON.parse(run.stdout) as Record<string, unknown>;
  }

  it('checks DANE by default on port 25, the TLSA records validated from the anchor', async () => {
    const record = await smtpJson('--port', '25');
    expect(record.dane).toMatchObject({ tlsa: { name: `_25._tcp.${HOST}`, status: 'answer', records: [{ usage: 3, selector: 1, matching_type: 1 }] }, dnssec: { status: 'secure' } });
  });

  it('does not on another port unless --dane', async () => {
    expect((await smtpJson('--port', '2525')).dane).toBeNull();
    expect(await smtpJson('--port', '2525', '--dane')).toMatchObject({ dane: { tlsa: { name: `_25._tcp.${HOST}` } } });
  });

  it('--no-dane turns it off on port 25', async () => {
    expect((await smtpJson('--port', '25', '--no-dane')).dane).toBeNull();
  });

  it('without the anchor, the root is the start: the test zones are not under it, so nothing is secure, and DANE is not checked', async () => {
    const run = await runCli(['smtp', HOST, '--ip', '127.0.0.1', '--no-ptr', ...common(), '--port', '25']);
    const record = JSON.parse(run.stdout) as { dane: { verdict: string; dnssec: { status: string } }; findings: Array<{ id: string; severity: string }> };
    // NSD serves no root zone: the root's DNSKEY question is refused, so the TLSA records' DNSSEC is undecided.
    expect(record.dane).toMatchObject({ verdict: 'failed', dnssec: { status: 'indeterminate' } });
    expect(record.findings).toContainEqual(expect.objectContaining({ id: 'dane_dnssec_unchecked', severity: 'unknown' }));
    expect(record.findings.map((item) => item.id)).not.toEqual(expect.arrayContaining(['dane_match']));
    // Port 25 has no server here: the conversation failed, so the run exits with its failure, never 0.
    expect(run.code).toBe(5);
  });

  it('the e-mail report judges DNSSEC of the MX records and host, and DANE of the host, from the same anchor', async () => {
    const run = await runCli(['email', 'mail.child.test', '--no-smtp', '--trust-anchor', anchorFile, ...common()]);
    const report = JSON.parse(run.stdout) as {
      dnssec: { domain: { status: string }; mx: Array<{ name: string; status: string }> };
      dane: Array<{ host: string; dnssec: { status: string }; tlsa: { records: unknown[] } }>;
      findings: Array<{ id: string }>;
    };
    expect(report.dnssec.domain.status).toBe('secure');
    expect(report.dnssec.mx).toEqual([expect.objectContaining({ name: HOST, status: 'secure' })]);
    expect(report.dane).toEqual([expect.objectContaining({ host: HOST, dnssec: expect.objectContaining({ status: 'secure' }) })]);
    expect(report.findings.map((item) => item.id)).toEqual(expect.arrayContaining(['dnssec_domain_secure', 'dnssec_mx_secure']));
  });

  it('refuses an unreadable trust anchor file in one line, exit 2', async () => {
    const run = await runCli(['email', 'mail.child.test', '--trust-anchor', '/nonexistent/anchor.key']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('netintel: cannot read the trust anchor file /nonexistent/anchor.key (ENOENT: give a file of DS or DNSKEY records to --trust-anchor)\n');
  });

  it('remote mode refuses --dane in one line', async () => {
    const run = await runCli(['smtp', HOST, '--dane', '--server', `http://127.0.0.1:${await closedPort()}`]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('netintel: remote mode cannot send --dane to the server: run netintel smtp without --server for it\n');
  });
});
