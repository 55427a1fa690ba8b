/**
 * `netintel tls` as a separate process, for what only a process start
 * decides: the trust anchors of NODE_EXTRA_CA_CERTS, which Node reads when
 * it starts and adds to its default store. An expired certificate of a
 * chain Node trusts that way must read as expired, not untrusted (netintel
 * decides trust itself when OpenSSL names only the date).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnCli } from '../support/cli.js';
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
