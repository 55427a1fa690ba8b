/**
 * The peers and files the command pages (docs/commands/*.md) name, so that
 * their shell blocks run as written with nothing leaving the machine:
 *
 * - the DNS peer of readme-shell.ts, also answering the names the pages
 *   use (example.com's A, AAAA, NS, SOA and CAA records, bücher.example,
 *   DKIM keys at google and selector1, a TLSA record, mail.example.com
 *   listed on a blocklist, the PTR of 8.8.8.8, OpenDNS's myip.opendns.com);
 * - stand-ins for the public hosts the pages name (loopback-only.cjs,
 *   NETINTEL_TEST_STAND_INS): classic resolvers (9.9.9.9, 1.1.1.1, the
 *   machine's own 127.0.0.1:53, OpenDNS) are the DNS peer, dns.google a
 *   DoH server and dns.quad9.net and 1.1.1.1 DoT servers with certificates
 *   of a CA the runs trust (NODE_EXTRA_CA_CERTS, in place of the public
 *   ones), 127.0.0.1:8853 and 10.0.0.53:8853 a DoT server of a private CA
 *   (corp-ca.pem), 192.0.2.53 a resolver that sends records for other
 *   names, 127.0.0.1:5398 a resolver that never answers;
 * - SMTP servers on loopback's mail ports: 25 with STARTTLS (also for
 *   192.0.2.25), 587 with STARTTLS and AUTH (me@example.com, the password
 *   in NETINTEL_SMTP_PASS), 465 with TLS from the first byte.
 */
import { generateKeyPairSync } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import dnsPacket from 'dns-packet';
import { REPO_ROOT, tempDir } from '../support/cli.js';
import { startDnsServer, type DnsTestServer, type ZoneRecord } from '../support/dns-server.js';
import { createCertificateAuthority, issueCertificate, startSmtpTestServer, type SmtpTestServer } from '../support/smtp-servers.js';
import { startDohServer, startDotServer, type EncryptedDnsServer } from '../engine/dns/doh-servers.js';
import { dkimTxt, rsaKey, mailauthSign } from '../engine/mail/dkim-zone.js';
import { zoneRecords } from '../engine/blacklist/dnsbl-fixtures.js';
import { startRdapServer, type RdapTestServer } from '../support/rdap-server.js';
import { scratchFor, startReadmePeers, type ReadmePeers, type Scratch } from './readme-shell.js';
import { zoneKey } from '../support/signed-root.js';

/** The password of the AUTH example (smtp.md), as NETINTEL_SMTP_PASS gives it. */
const SMTP_USER = 'me@example.com';
const SMTP_PASS = 'correct horse battery staple';

const DKIM_KEY = rsaKey(2048);

/** The key of example.test, which the DNS peer signs that zone with: dns.md's trust anchor file, Kexample.test.+013+12345.key (ECDSA P-256, RFC 6605). */
const EXAMPLE_TEST_KEY = zoneKey('example.test', generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey);

/** The records the command pages need besides the README's (readme-shell.ts). */
function pageRecords(): ZoneRecord[] {
  return [
    { name: 'example.com', type: 'A', data: '192.0.2.10' },
    { name: 'example.com', type: 'AAAA', data: '2001:db8::10' },
    { name: 'example.com', type: 'NS', data: 'ns1.example.com' },
    { name: 'example.com', type: 'SOA', data: { mname: 'ns1.example.com', rname: 'hostmaster.example.com', serial: 2026112901, refresh: 7200, retry: 900, expire: 1209600, minimum: 300 } },
    { name: 'example.com', type: 'CAA', data: { flags: 0, tag: 'issue', value: 'letsencrypt.org' } },
    { name: 'smtp.example.com', type: 'A', data: '127.0.0.1' },
    { name: 'mail.example.com', type: 'A', data: '192.0.2.99' },
    { name: 'xn--bcher-kva.example', type: 'A', data: '192.0.2.20' },
    { name: 'www.example.test', type: 'A', data: '192.0.2.80' },
    { name: '_25._tcp.mx.example.com', type: 'TLSA', data: { usage: 3, selector: 1, matchingType: 1, certificate: Buffer.alloc(32, 0xab) } },
    dkimTxt('google._domainkey.example.com', `v=DKIM1; k=rsa; p=${DKIM_KEY.p}`),
    dkimTxt('selector1._domainkey.example.com', `v=DKIM1; k=rsa; p=${DKIM_KEY.p}`),
    { name: '8.8.8.8.in-addr.arpa', type: 'PTR', data: 'dns.google' },
    { name: 'myip.opendns.com', type: 'A', data: '192.0.2.44' },
    // The default domain lists, each answering its test point; the lists blacklist.md names with --zones.
    ...zoneRecords('dbl.spamhaus.org', {}, { kind: 'domain', canaryName: 'dbltest.com' }),
    ...zoneRecords('multi.surbl.org', {}, { kind: 'domain', canaryName: 'test.surbl.org', canaryCode: '127.0.0.64' }),
    ...zoneRecords('multi.uribl.com', {}, { kind: 'domain', canaryName: 'test.uribl.com', canaryCode: '127.0.0.14' }),
    ...zoneRecords('bl.example.net', {}),
    ...zoneRecords('rhs.example.net', {}, { kind: 'domain' }),
  ];
}

export interface DocsPeers extends ReadmePeers {
  /** Variables every run of a page's line gets on top of readme-shell.ts's. */
  env: Record<string, string>;
  /** The CA of the private DoT server (corp-ca.pem, private-ca.pem). */
  privateCa: string;
  /** A directory for the key database of the `netintel serve` the blocks share. */
  serverDir: string;
  /** The RDAP registry of rdap.md; each scratch's data dir gets bootstrap files pointing at it. */
  rdap: RdapTestServer;
  /** The password of the AUTH example: NETINTEL_SMTP_PASS of a line with --auth-user (set for every line, it is a usage error without one). */
  smtpPassword: string;
}

/** Starts the peers of the command pages; `close()` stops them all. */
export async function startDocsPeers(): Promise<DocsPeers> {
  const readme = await startReadmePeers(pageRecords(), [EXAMPLE_TEST_KEY]);
  const dir = tempDir('netintel-docs-peers-');
  // A CA the runs trust as they trust the public ones, and a private one the pages hand to --resolver-ca.
  const publicCa = createCertificateAuthority('netintel docs public CA');
  const privateCa = createCertificateAuthority('netintel docs private CA');
  const publicCaFile = join(dir.path, 'public-ca.pem');
  writeFileSync(publicCaFile, publicCa.cert);
  const resolverCertificate = issueCertificate({ commonName: 'dns.google', dnsNames: ['dns.google', 'dns.quad9.net'], ipAddresses: ['1.1.1.1', '9.9.9.9'], issuer: publicCa });
  const privateCertificate = issueCertificate({ commonName: 'dns.corp.example', ipAddresses: ['127.0.0.1', '10.0.0.53'], issuer: privateCa });
  const mailCertificate = issueCertificate({ commonName: 'mx.example.com', dnsNames: ['mx.example.com', 'smtp.example.com'], issuer: publicCa });
  const upstream = { host: '127.0.0.1', port: readme.dns.port };
  const [doh, publicDot, privateDot, mx, submission, smtps] = await Promise.all([
    startDohServer({ upstream, certificate: resolverCertificate, http2: true }),
    startDotServer({ upstream, certificate: resolverCertificate }),
    startDotServer({ upstream, certificate: privateCertificate }),
    startSmtpTestServer({ name: 'mx.example.com', certificate: mailCertificate, localDomains: ['example.com', 'example.org'] }),
    startSmtpTestServer({ name: 'smtp.example.com', certificate: mailCertificate, auth: { user: SMTP_USER, pass: SMTP_PASS }, localDomains: ['example.com'] }),
    startSmtpTestServer({ name: 'smtp.example.com', certificate: mailCertificate, implicitTls: true, localDomains: ['example.com'] }),
  ]);
  // The RDAP registry of rdap.md's lines (com, the documentation networks, AS64496), under the CA the runs trust.
  const rdap = await startRdapServer({ issuer: publicCa, tlds: ['com'] });
  const strayRecords = await startDnsServer({ script: (query) => [{ message: strayAnswer(query) }] });
  const silent = await startDnsServer({ defaultBehaviour: 'silent' });
  const dnsPort = readme.dns.port;
  const standIns: Record<string, number> = {
    '127.0.0.1:53': dnsPort,
    '9.9.9.9:53': dnsPort,
    '1.1.1.1:53': dnsPort,
    '208.67.222.222:53': dnsPort,
    'dns.google:443': doh.port,
    'dns.quad9.net:853': publicDot.port,
    '1.1.1.1:853': publicDot.port,
    '127.0.0.1:8853': privateDot.port,
    '10.0.0.53:8853': privateDot.port,
    '192.0.2.53:53': strayRecords.port,
    '127.0.0.1:5398': silent.port,
    '127.0.0.1:25': mx.port,
    '192.0.2.25:25': mx.port,
    '127.0.0.1:587': submission.port,
    '127.0.0.1:465': smtps.port,
  };
  const servers: Array<EncryptedDnsServer | SmtpTestServer | DnsTestServer> = [doh, publicDot, privateDot, mx, submission, smtps, strayRecords, silent];
  return {
    ...readme,
    privateCa: privateCa.cert,
    serverDir: dir.path,
    rdap,
    env: {
      NETINTEL_TEST_STAND_INS: JSON.stringify(standIns),
      NODE_EXTRA_CA_CERTS: publicCaFile,
    },
    smtpPassword: SMTP_PASS,
    async close() {
      await Promise.all([...servers.map((server) => server.close()), rdap.close()]);
      await readme.close();
      dir.remove();
    },
  };
}

/** A reply to any question that answers another name only (dns.md's resolver that sends records for other names). */
function strayAnswer(query: dnsPacket.DecodedPacket): Buffer {
  return dnsPacket.encode({
    id: query.id,
    type: 'response',
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
    questions: query.questions,
    answers: [{ name: 'victim.example', type: 'A', ttl: 300, data: '127.0.0.9' }],
  });
}

/** A message from example.com signed with the key published at selector1 (dkim.md's saved.eml). */
async function signedMessage(): Promise<string> {
  const message = [
    'From: Ada <ada@example.com>',
    'To: bob@example.org',
    'Subject: The figures',
    'Date: Sun, 29 Nov 2026 09:00:00 +0000',
    'Message-ID: <figures@example.com>',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'The figures are attached.',
    '',
  ].join('\r\n');
  const result = await mailauthSign(message, { canonicalization: 'relaxed/relaxed', signatureData: [{ signingDomain: 'example.com', selector: 'selector1', privateKey: DKIM_KEY.pem }] });
  return result.signatures + message;
}

/** The files the pages read, in the directory their lines run in (small, made here). */
async function writePageFiles(dir: string, peers: DocsPeers): Promise<void> {
  const addresses = ['192.0.2.1', '198.51.100.7', '203.0.113.9', '2001:db8::1', '2001:db8:0:1::25', ''].join('\n');
  writeFileSync(join(dir, 'ips.txt'), addresses);
  writeFileSync(join(dir, 'ips.gz'), gzipSync(addresses));
  const log = readFileSync(join(REPO_ROOT, 'examples', 'access.log'));
  copyFileSync(join(REPO_ROOT, 'examples', 'access.log'), join(dir, 'access.log'));
  writeFileSync(join(dir, 'access.log.gz'), gzipSync(log));
  writeFileSync(join(dir, 'domains.txt'), 'example.com\nexample.org\n');
  writeFileSync(join(dir, 'names.txt'), 'example.com\nexample.org\n');
  writeFileSync(join(dir, 'mail-servers.txt'), '192.0.2.1\n192.0.2.99\nmail.example.com\n');
  writeFileSync(join(dir, 'blocks.txt'), '10.0.0.0/8\n192.0.2.5-192.0.2.77\n2001:db8::/32\n');
  writeFileSync(join(dir, 'config.txt'), 'allow 10.0.0.0/8;\nallow 2001:db8::/32;\nlisten 192.0.2.1:53;\n');
  writeFileSync(join(dir, 'mail.log'), ['Nov 29 09:00:01 mx postfix/smtpd[811]: connect from unknown', 'Nov 29 09:00:02 mx postfix/smtpd[811]: lost connection', 'Nov 29 09:00:03 mx postfix/smtpd[812]: connect from mail-ej1-f49.google.com[209.85.218.49]', '', '', '', '', 'Nov 29 09:00:08 mx postfix/smtpd[813]: connect from unknown[2a02:8108:1240:5c00:d1b3:6b0e:7e2f:3a10]', ''].join('\n'));
  writeFileSync(join(dir, 'mail.eml'), 'Received: from mx.example.org (mx.example.org [192.0.2.1])\r\nSubject: hello\r\n\r\nhello\r\n');
  writeFileSync(join(dir, 'saved.eml'), await signedMessage());
  writeFileSync(join(dir, 'corp-ca.pem'), peers.privateCa);
  writeFileSync(join(dir, 'private-ca.pem'), peers.privateCa);
  writeFileSync(join(dir, 'Kexample.test.+013+12345.key'), `example.test. 3600 IN DNSKEY 257 3 13 ${EXAMPLE_TEST_KEY.dnskey.key.toString('base64')}\n`);
  mkdirSync(join(dir, 'mirror'));
  // A feed of fewer than 100 entries is refused as truncated (data.md); the addresses are documentation ones.
  const exits = Array.from({ length: 120 }, (_, index) => `198.51.100.${index + 1}`);
  writeFileSync(join(dir, 'mirror', 'torbulkexitlist'), `${exits.join('\n')}\n`);
}

/** A scratch directory for one block of a page: readme-shell.ts's, with the pages' files and the stand-ins. */
export async function docsScratch(peers: DocsPeers): Promise<Scratch> {
  const scratch = scratchFor(peers);
  await writePageFiles(scratch.dir, peers);
  peers.rdap.bootstrapInto(join(scratch.dir, '..', 'home', '.local', 'share', 'netintel'));
  return { ...scratch, env: { ...scratch.env, ...peers.env } };
}
