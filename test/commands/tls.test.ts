/**
 * `netintel tls` as a separate process, for what only a process start
 * decides: the trust anchors of NODE_EXTRA_CA_CERTS, which Node reads when
 * it starts and adds to its default store. An expired certificate of a
 * chain Node trusts that way must read as expired, not untrusted (netintel
 * decides trust itself when OpenSSL names only the date).
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spawnCli } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { zoneKey } from '../support/signed-root.js';
import { createCertificateAuthority, daysFromNow, issueCertificate } from '../support/smtp-servers.js';
import { startTlsServer, type TlsTestServer } from '../support/tls-servers.js';

interface Judged {
  certificate: { trusted: boolean; verify_error: string | null };
  chain: Array<{ trust_anchor: boolean }>;
  findings: Array<{ id: string }>;
}

describe('netintel tls and NODE_EXTRA_CA_CERTS', () => {
  const ca = createCertificateAuthority('extra anchor');
  const file = join(mkdtempSync(join(tmpdir(), 'netintel-extra-ca-')), 'extra.pem');
  const servers: TlsTestServer[] = [];
  let expired: TlsTestServer;
  let current: TlsTestServer;

  beforeAll(async () => {
    writeFileSync(file, ca.cert);
    expired = await startTlsServer({ certificate: issueCertificate({ commonName: 'extra.test', issuer: ca, notBefore: daysFromNow(-60), notAfter: daysFromNow(-3) }) });
    current = await startTlsServer({ certificate: issueCertificate({ commonName: 'extra.test', issuer: ca }) });
    servers.push(expired, current);
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
  });

  async function judge(server: TlsTestServer, env: Record<string, string>): Promise<Judged> {
    const run = await spawnCli(['tls', `127.0.0.1:${server.port}`, '--no-versions', '--no-dane', '-f', 'json'], { env });
    expect(run.stderr).toBe('');
    return JSON.parse(run.stdout) as Judged;
  }

  const ids = (judged: Judged) => judged.findings.map((each) => each.id);

  it('trusts what Node trusts: the chain of a current certificate, and an expired one reads as expired only', async () => {
    const live = await judge(current, { NODE_EXTRA_CA_CERTS: file });
    expect(live.certificate).toMatchObject({ trusted: true, verify_error: null });
    const lapsed = await judge(expired, { NODE_EXTRA_CA_CERTS: file });
    expect(lapsed.certificate).toMatchObject({ trusted: true, verify_error: 'CERT_HAS_EXPIRED' });
    expect(ids(lapsed)).toContain('tls_expired');
    expect(ids(lapsed)).not.toContain('tls_untrusted');
    expect(ids(lapsed)).not.toContain('tls_chain_incomplete');
  });

  it('without it, the same expired certificate is untrusted as well', async () => {
    const lapsed = await judge(expired, {});
    expect(lapsed.certificate).toMatchObject({ trusted: false, verify_error: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
    expect(ids(lapsed)).toEqual(expect.arrayContaining(['tls_expired', 'tls_chain_incomplete']));
  });
});

describe('netintel tls --trust-anchor: DANE validates from the anchor given, as dns --dnssec does', () => {
  const key = zoneKey('dane.test', generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey);
  const dir = mkdtempSync(join(tmpdir(), 'netintel-tls-anchor-'));
  const anchorFile = join(dir, 'Kdane.test.key');
  let server: TlsTestServer;
  let dns: DnsTestServer;

  beforeAll(async () => {
    writeFileSync(anchorFile, `dane.test. IN DNSKEY 257 3 13 ${key.dnskey.key.toString('base64')}\n`);
    const certificate = issueCertificate({ commonName: 'www.dane.test', issuer: createCertificateAuthority('dane anchor') });
    server = await startTlsServer({ certificate });
    const spki = certificate.x509.publicKey.export({ type: 'spki', format: 'der' });
    dns = await startDnsServer({
      records: [
        { name: 'www.dane.test', type: 'A', data: '127.0.0.1' },
        { name: `_${server.port}._tcp.www.dane.test`, type: 'TLSA', data: { usage: 3, selector: 1, matchingType: 1, certificate: createHash('sha256').update(spki).digest() } },
      ],
      signedZones: [key],
    });
  });
  afterAll(async () => {
    await Promise.all([server.close(), dns.close()]);
  });

  const dane = async (...extra: string[]) => {
    const run = await runCli(['tls', `www.dane.test:${server.port}`, '--no-versions', '--resolver', dns.address, '--retries', '0', '-f', 'json', ...extra]);
    return { code: run.code, dane: (JSON.parse(run.stdout) as { dane: { verdict: string; dnssec: string; error: string | null } }).dane };
  };

  it('matches the TLSA record signed under the anchor; the same record from the IANA root could not be checked', async () => {
    expect(await dane('--trust-anchor', anchorFile)).toMatchObject({ dane: { verdict: 'matched', dnssec: 'secure', error: null } });
    expect(await dane('--trust-anchor', anchorFile)).toMatchObject({ code: 0 });
    // The server passes no root DNSKEY (it is no resolver of the real root): not checked, exit 7, never "matched".
    const rootless = await dane();
    expect(rootless).toMatchObject({ code: 7, dane: { verdict: 'failed', dnssec: 'indeterminate', error: expect.stringMatching(/it does not pass DNSSEC records on/) } });
  });
});
