/**
 * The loopback peers the end-to-end goldens run against: one DNS server
 * holding the mail, example and blocklist zones, and two SMTP servers (one
 * with STARTTLS and AUTH, one open relay without TLS). Every host name of
 * the corpus resolves here; nothing leaves 127.0.0.1.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { TEST_ROOT_ANCHOR_FILE } from '../support/signed-root.js';
import { compileRpkiIndex } from '../../src/engine/rpki/compile-rpki-index.js';
import { parseVrpJson } from '../../src/engine/rpki/vrp-json.js';
import { LOOPBACK_ONLY_MODULE } from '../support/loopback-only.js';
import { closedPort } from '../support/peers.js';
import { startRdapServer, type RdapTestServer } from '../support/rdap-server.js';
import {
  createCertificateAuthority,
  daysFromNow,
  issueCertificate,
  startSmtpTestServer,
  type SmtpTestServer,
} from '../support/smtp-servers.js';
import { EXAMPLE_ZONE } from '../engine/dns/example-zone.js';
import { MAIL_BEHAVIOURS, MAIL_ZONE } from '../engine/mail/mail-zone.js';
import { FIXED_DKIM_ZONE } from '../engine/mail/dkim-zone.js';
import { HEADERS_ZONE } from '../engine/mail/headers/headers-zone.js';
import { listedName, zoneRecords } from '../engine/blacklist/dnsbl-fixtures.js';

export interface Peers {
  dns: DnsTestServer;
  smtp: SmtpTestServer;
  relay: SmtpTestServer;
  /** The RDAP registry and registrar (test/support/rdap-server.ts). */
  rdap: RdapTestServer;
  /** A data dir of its own for each named run of `rdap`, with bootstrap files pointing at `rdap`: its cache of answers is that run's alone. */
  rdapDataDir(name: string): string;
  /** The RDAP server's CA, as a PEM file (--tls-ca). */
  rdapCaFile: string;
  /** The CA that issued the SMTP server's certificate, as a PEM file. */
  caFile: string;
  /** A data dir holding an RPKI index of a few ROAs (`<rpki-data>` in a golden). */
  rpkiDataDir: string;
  /** Flags every network command of the corpus gets: the local resolver, no retries, a deadline that a loaded machine still meets. */
  dnsFlags: string[];
  /** The same with a short deadline, for the cases that wait for a silent name. */
  silentFlags: string[];
  /** Port numbers that vary from run to run, with the placeholder each becomes in a golden. */
  ports: Array<{ port: number; name: string }>;
  /** A loopback port the harness opened and closed: a peer that refuses (`<closed-port>` in a golden). */
  closedPort: number;
  /**
   * The environment of every run: connections to loopback's well-known ports (the MTA-STS policy
   * host mta-sts.good.test, 127.0.0.1, on 443; SMTP's 25) go to `closedPort` instead
   * (test/support/loopback-only.cjs), so no run depends on what listens on this machine; DNSSEC
   * validates from the test root the DNS peer signs (NETINTEL_TRUST_ANCHOR, signed-root.ts).
   */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startPeers(): Promise<Peers> {
  const scratch = mkdtempSync(join(tmpdir(), 'netintel-e2e-'));
  const ca = createCertificateAuthority('netintel e2e CA');
  const caFile = join(scratch, 'ca.pem');
  writeFileSync(caFile, ca.cert);
  const rpkiDataDir = join(scratch, 'rpki-data');
  writeRpkiFixture(rpkiDataDir);
  // Fixed offsets from today, so "days left" in a golden does not move.
  const certificate = issueCertificate({ commonName: 'mx.mailhost.test', issuer: ca, notBefore: daysFromNow(-1), notAfter: daysFromNow(90) });
  const smtp = await startSmtpTestServer({ name: 'mx.mailhost.test', certificate, auth: { user: 'alice', pass: 'wonderland', methods: ['PLAIN', 'LOGIN'] } });
  const relay = await startSmtpTestServer({ name: 'relay.example.test', openRelay: true });
  const rdap = await startRdapServer({ slowMs: 3000 });
  const rdapCaFile = join(scratch, 'rdap-ca.pem');
  writeFileSync(rdapCaFile, rdap.ca);
  const rdapDirs = new Map<string, string>();
  const dns = await startDnsServer({
    records: [
      ...MAIL_ZONE,
      ...FIXED_DKIM_ZONE,
      ...HEADERS_ZONE,
      ...EXAMPLE_ZONE,
      { name: 'relay.example.test', type: 'A', data: '127.0.0.1' },
      // DANE (RFC 7672): the MX host's leaf key and its CA, signed (AD set below); a TLSA record for the relay, which has no STARTTLS.
      { name: '_25._tcp.mx.mailhost.test', type: 'TLSA', data: { usage: 3, selector: 1, matchingType: 1, certificate: sha256(certificate.x509.publicKey.export({ type: 'spki', format: 'der' })) } },
      { name: '_25._tcp.mx.mailhost.test', type: 'TLSA', data: { usage: 2, selector: 0, matchingType: 1, certificate: sha256(Buffer.from(ca.x509.raw)) } },
      { name: '_25._tcp.relay.example.test', type: 'TLSA', data: { usage: 3, selector: 1, matchingType: 1, certificate: sha256(Buffer.from('no certificate')) } },
      { name: '1.0.0.127.in-addr.arpa', type: 'PTR', data: 'mx.mailhost.test' },
      ...zoneRecords('bl.test.example', { '192.0.2.99': { a: ['127.0.0.2'], txt: 'spam source, see https://bl.test.example/192.0.2.99' } }),
      ...zoneRecords('other.test.example', {}),
      ...zoneRecords('dbl.test.example', { 'bad.example': { a: ['127.0.1.2'] } }, { kind: 'domain' }),
      { name: 'bad.example', type: 'MX', data: { preference: 10, exchange: 'mx.bad.example' } },
      { name: 'mx.bad.example', type: 'A', data: '192.0.2.99' },
    ],
    authenticData: (name) => name.startsWith('_25._tcp.'),
    // A resolver that passes DNSSEC records on, under the test root (NETINTEL_TRUST_ANCHOR below): the zone's names are unsigned.
    signedRoot: true,
    behaviours: {
      ...MAIL_BEHAVIOURS,
      'broken._domainkey.dkim.test': 'servfail',
      ...Object.fromEntries(['192.0.2.99', '192.0.2.1', '127.0.0.2', '127.0.0.1'].map((ip) => [listedName(ip, 'quiet.test.example'), 'silent' as const])),
    },
  });
  const dnsPort = Number(dns.address.split(':').pop());
  const closed = await closedPort();
  return {
    dns,
    smtp,
    relay,
    rdap,
    rdapDataDir: (name) => {
      let dir = rdapDirs.get(name);
      if (dir === undefined) {
        dir = rdap.freshDataDir();
        rdapDirs.set(name, dir);
      }
      return dir;
    },
    rdapCaFile,
    caFile,
    rpkiDataDir,
    dnsFlags: ['--resolver', dns.address, '--timeout', '10000', '--retries', '0'],
    silentFlags: ['--resolver', dns.address, '--timeout', '500', '--retries', '0'],
    ports: [
      { port: dnsPort, name: '<dns-port>' },
      { port: smtp.port, name: '<smtp-port>' },
      { port: relay.port, name: '<relay-port>' },
      { port: closed, name: '<closed-port>' },
      { port: rdap.port, name: '<rdap-port>' },
    ],
    closedPort: closed,
    env: { NODE_OPTIONS: `--require ${LOOPBACK_ONLY_MODULE}`, NETINTEL_TEST_CLOSED_PORT: String(closed), NETINTEL_TEST_CLOSED_LOOPBACK_PORTS: 'well-known', NETINTEL_TRUST_ANCHOR: TEST_ROOT_ANCHOR_FILE },
    async close() {
      await Promise.all([dns.close(), smtp.close(), relay.close(), rdap.close()]);
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

/**
 * ROAs that make 8.8.8.8's route valid, 1.1.1.1's origin not authorised
 * (AS 0 and another AS), 2001:4860:4860::8888's route longer than allowed,
 * and leave 9.9.9.9 uncovered.
 */
function writeRpkiFixture(dir: string): void {
  const roas = [
    { asn: 'AS15169', prefix: '8.8.8.0/24', maxLength: 24, ta: 'arin' },
    { asn: 0, prefix: '1.1.1.0/24', ta: 'apnic' },
    { asn: 64500, prefix: '1.1.1.0/24', maxLength: 24, ta: 'apnic' },
    { asn: 15169, prefix: '2001:4860::/32', maxLength: 36, ta: 'arin' },
  ];
  mkdirSync(dir);
  const set = parseVrpJson(JSON.stringify({ metadata: { buildtime: '2026-11-29T11:00:00Z' }, roas }));
  writeFileSync(join(dir, 'rpki.idx'), compileRpkiIndex(set.vrps, { builtAt: new Date('2026-11-29T11:05:00Z'), updated: set.generated, source: null }).bytes);
}

function sha256(bytes: Buffer): Buffer {
  return createHash('sha256').update(bytes).digest();
}
