/**
 * DANE matching against OpenSSL's verifier, which Postfix and Exim use: a
 * TLS server on 127.0.0.1 presents a chain, `openssl s_client
 * -dane_tlsa_rrdata` verifies it against TLSA records, and netintel's
 * matchTlsa must reach the same verdict on the same records (would a DANE
 * sender deliver?). DANE-EE without name checks, as SMTP has it (RFC 7672
 * §3.1.1, `-dane_ee_no_namechecks`); DANE-TA with the host's name.
 */
import { execFile, spawnSync } from 'node:child_process';
import { createHash, randomBytes, type X509Certificate } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchTlsa } from '../../src/engine/smtp/dane.js';
import { tlsaRecord, type TlsaRecord } from '../../src/engine/smtp/tlsa-record.js';
import { peerChainDer, presentedChainDer } from '../../src/engine/tls/tls-certificate.js';
import { createCertificateAuthority, daysFromNow, issueCertificate, type TestCertificate } from '../support/smtp-servers.js';

const OPENSSL = spawnSync('openssl', ['version'], { encoding: 'utf8' }).status === 0;
if (!OPENSSL) console.warn('SKIPPING test/interop/dane-openssl.test.ts: openssl (Debian package openssl) not found');

const HOST = 'mx.dane.test';
const OTHER_HOST = 'other.test';

interface Tlsa {
  usage: 2 | 3;
  selector: 0 | 1;
  matching: 0 | 1 | 2;
  data: Buffer;
}

function association(certificate: X509Certificate, selector: number, matching: number): Buffer {
  const selected = selector === 0 ? Buffer.from(certificate.raw) : certificate.publicKey.export({ type: 'spki', format: 'der' });
  if (matching === 1) return createHash('sha256').update(selected).digest();
  if (matching === 2) return createHash('sha512').update(selected).digest();
  return selected;
}

/** The records as netintel reads them from DNS. */
function records(list: readonly Tlsa[]): TlsaRecord[] {
  return list.map((each) => tlsaRecord({ usage: each.usage, selector: each.selector, matching_type: each.matching, data: each.data }));
}

function label(list: readonly Tlsa[]): string {
  return list.map((each) => `${each.usage} ${each.selector} ${each.matching} ${each.data.toString('hex').slice(0, 8)}`).join(' | ');
}

/** Whether OpenSSL verifies the chain at `port` against the records, for `host`. */
function opensslVerifies(port: number, host: string, list: readonly Tlsa[], extra: readonly string[] = []): Promise<boolean> {
  const args = ['s_client', ...extra, '-connect', `127.0.0.1:${port}`, '-servername', host, '-dane_tlsa_domain', host, '-dane_ee_no_namechecks', '-verify_return_error', '-brief'];
  for (const each of list) args.push('-dane_tlsa_rrdata', `${each.usage} ${each.selector} ${each.matching} ${each.data.toString('hex')}`);
  return new Promise((resolve) => {
    const child = execFile('openssl', args, { timeout: 10_000 }, (error, stdout, stderr) => resolve(error === null && /Verification: OK/.test(stdout + stderr)));
    child.stdin?.end();
  });
}

describe.skipIf(!OPENSSL)('DANE verdicts agree with OpenSSL', () => {
  const servers: tls.Server[] = [];
  let certs: Record<string, TestCertificate>;
  let chains: Record<string, { port: number; chain: X509Certificate[] }>;

  beforeAll(async () => {
    const root = createCertificateAuthority('dane root');
    const inter = issueCertificate({ commonName: 'dane intermediate', ca: true, issuer: root });
    const lapsedInter = issueCertificate({ commonName: 'lapsed intermediate', ca: true, issuer: root, notBefore: daysFromNow(-30), notAfter: daysFromNow(-1) });
    certs = {
      root,
      inter,
      lapsedInter,
      leaf: issueCertificate({ commonName: HOST, issuer: inter }),
      expiredLeaf: issueCertificate({ commonName: HOST, issuer: inter, notBefore: daysFromNow(-30), notAfter: daysFromNow(-1) }),
      futureLeaf: issueCertificate({ commonName: HOST, issuer: inter, notBefore: daysFromNow(2), notAfter: daysFromNow(30) }),
      leafOfLapsed: issueCertificate({ commonName: HOST, issuer: lapsedInter }),
      selfSigned: issueCertificate({ commonName: HOST }),
      otherCa: createCertificateAuthority('another CA'),
    };
    const served: Record<string, TestCertificate[]> = {
      full: [certs.leaf!, inter, root],
      withoutRoot: [certs.leaf!, inter],
      leafOnly: [certs.leaf!],
      selfSigned: [certs.selfSigned!],
      expiredLeaf: [certs.expiredLeaf!, inter, root],
      futureLeaf: [certs.futureLeaf!, inter],
      lapsedIntermediate: [certs.leafOfLapsed!, lapsedInter, root],
      // TLS 1.3 allows any order after the leaf (RFC 8446 §4.4.2); a stray certificate among them.
      outOfOrder: [certs.leaf!, certs.otherCa!, root, inter],
    };
    chains = {};
    for (const [name, chain] of Object.entries(served)) {
      const server = tls.createServer({ key: chain[0]!.key, cert: chain.map((each) => each.cert).join('') }, (socket) => socket.end());
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      servers.push(server);
      chains[name] = { port: (server.address() as AddressInfo).port, chain: chain.map((each) => each.x509) };
    }
  });
  afterAll(() => {
    for (const server of servers) server.close();
  });

  const tlsaOf = (usage: 2 | 3, selector: 0 | 1, matching: 0 | 1 | 2, cert: string): Tlsa => ({ usage, selector, matching, data: association(certs[cert]!.x509, selector, matching) });

  async function compare(chainName: string, host: string, list: readonly Tlsa[]): Promise<{ ours: boolean; theirs: boolean; reasons: string }> {
    const { port, chain } = chains[chainName]!;
    const matches = matchTlsa(records(list), chain, [host]);
    const ours = matches.some((match) => match.matched && (match.record.usage === 3 || match.name_match !== false));
    const theirs = await opensslVerifies(port, host, list);
    return { ours, theirs, reasons: matches.map((match) => match.reason ?? 'matched').join('; ') };
  }

  // Each rule where a reading of the RFCs could go either way, with the verdict both give.
  const cases: Array<{ name: string; chain: string; host?: string; records: () => Tlsa[]; delivers: boolean }> = [
    { name: 'DANE-TA naming the server certificate itself: a trust anchor is an issuer (RFC 7671 §5.2)', chain: 'full', records: () => [tlsaOf(2, 0, 1, 'leaf')], delivers: false },
    { name: 'DANE-TA of the intermediate', chain: 'full', records: () => [tlsaOf(2, 0, 1, 'inter')], delivers: true },
    { name: 'DANE-TA Cert Full of an intermediate the server leaves out (RFC 7671 §5.2.2)', chain: 'leafOnly', records: () => [tlsaOf(2, 0, 0, 'inter')], delivers: true },
    { name: 'DANE-TA SPKI Full of a root the server leaves out (RFC 7671 §5.2.3)', chain: 'withoutRoot', records: () => [tlsaOf(2, 1, 0, 'root')], delivers: true },
    { name: 'DANE-TA digest of a root the server leaves out', chain: 'withoutRoot', records: () => [tlsaOf(2, 0, 1, 'root')], delivers: false },
    { name: 'DANE-TA with an expired server certificate', chain: 'expiredLeaf', records: () => [tlsaOf(2, 0, 1, 'inter')], delivers: false },
    { name: 'DANE-TA with a server certificate not yet valid', chain: 'futureLeaf', records: () => [tlsaOf(2, 1, 1, 'inter')], delivers: false },
    { name: 'DANE-TA whose anchor itself has expired', chain: 'lapsedIntermediate', records: () => [tlsaOf(2, 0, 1, 'lapsedInter')], delivers: true },
    { name: 'DANE-TA above a lapsed intermediate', chain: 'lapsedIntermediate', records: () => [tlsaOf(2, 0, 1, 'root')], delivers: false },
    { name: 'DANE-TA for a host the certificate does not name', chain: 'full', host: OTHER_HOST, records: () => [tlsaOf(2, 0, 1, 'inter')], delivers: false },
    { name: 'DANE-EE of an expired server certificate: dates are not checked (RFC 7672 §3.1.1)', chain: 'expiredLeaf', records: () => [tlsaOf(3, 1, 1, 'expiredLeaf')], delivers: true },
    { name: 'DANE-EE for a host the certificate does not name', chain: 'full', host: OTHER_HOST, records: () => [tlsaOf(3, 1, 1, 'leaf')], delivers: true },
    { name: 'DANE-EE of a self-signed certificate', chain: 'selfSigned', records: () => [tlsaOf(3, 0, 2, 'selfSigned')], delivers: true },
    { name: 'a matching SHA2-256 digest beside a stale SHA2-512 one: only the strongest counts (RFC 7671 §9)', chain: 'full', records: () => [tlsaOf(3, 1, 1, 'leaf'), tlsaOf(3, 1, 2, 'otherCa')], delivers: false },
    { name: 'a stale SHA2-512 digest of the other selector leaves the SHA2-256 one in use', chain: 'full', records: () => [tlsaOf(3, 1, 1, 'leaf'), tlsaOf(3, 0, 2, 'otherCa')], delivers: true },
    { name: 'a stale SHA2-512 digest of the other usage leaves the SHA2-256 one in use', chain: 'full', records: () => [tlsaOf(3, 1, 1, 'leaf'), tlsaOf(2, 1, 2, 'otherCa')], delivers: true },
    { name: 'a Full record beside a stale SHA2-512 digest still counts', chain: 'full', records: () => [tlsaOf(3, 1, 0, 'leaf'), tlsaOf(3, 1, 2, 'otherCa')], delivers: true },
    { name: 'DANE-TA of an intermediate sent out of order, beside a stray certificate', chain: 'outOfOrder', records: () => [tlsaOf(2, 1, 1, 'inter')], delivers: true },
    { name: 'DANE-TA of a stray certificate the server sends', chain: 'outOfOrder', records: () => [tlsaOf(2, 0, 1, 'otherCa')], delivers: false },
  ];

  for (const each of cases) {
    it(each.name, async () => {
      const result = await compare(each.chain, each.host ?? HOST, each.records());
      expect({ ours: result.ours, openssl: result.theirs }, result.reasons).toEqual({ ours: each.delivers, openssl: each.delivers });
    });
  }

  it('matches what the server sent: a root it leaves out is not found in the trust store (RFC 7671 §5.2.2)', async () => {
    const { port } = chains.withoutRoot!;
    const socket = tls.connect({ host: '127.0.0.1', port, servername: HOST, ca: [certs.root!.cert], rejectUnauthorized: false });
    await new Promise((resolve) => socket.once('secureConnect', resolve));
    // In the probes' order: the presented chain last (see presentedChainDer).
    const completed = peerChainDer(socket);
    const presented = presentedChainDer(socket);
    socket.destroy();
    // node:tls completes the chain it describes from the trust store; DANE sees only what was sent.
    expect(completed).toHaveLength(3);
    expect(presented).toHaveLength(2);
    const list = [tlsaOf(2, 0, 1, 'root')];
    const ours = matchTlsa(records(list), presented, [HOST]).some((match) => match.matched);
    const rootFile = join(mkdtempSync(join(tmpdir(), 'netintel-dane-')), 'root.pem');
    writeFileSync(rootFile, certs.root!.cert);
    const theirs = await opensslVerifies(port, HOST, list, ['-CAfile', rootFile]);
    expect({ ours, openssl: theirs }).toEqual({ ours: false, openssl: false });
    expect(matchTlsa(records(list), completed, [HOST]).some((match) => match.matched)).toBe(true);
  });

  it('agrees on random record sets over every chain', async () => {
    const certNames = ['root', 'inter', 'lapsedInter', 'leaf', 'expiredLeaf', 'futureLeaf', 'leafOfLapsed', 'selfSigned', 'otherCa'];
    const record = fc.record({
      usage: fc.constantFrom(2 as const, 3 as const),
      selector: fc.constantFrom(0 as const, 1 as const),
      matching: fc.constantFrom(0 as const, 1 as const, 2 as const),
      of: fc.constantFrom(...certNames, 'random'),
    });
    const samples = fc.sample(
      fc.record({ chain: fc.constantFrom(...Object.keys(chains)), host: fc.constantFrom(HOST, HOST, OTHER_HOST), records: fc.array(record, { minLength: 1, maxLength: 3 }) }),
      { numRuns: 240, seed: 7671 },
    );
    const disagreements: string[] = [];
    const queue = [...samples];
    const worker = async (): Promise<void> => {
      for (let sample = queue.shift(); sample !== undefined; sample = queue.shift()) {
        const list = sample.records.map((each): Tlsa =>
          each.of === 'random'
            ? { ...each, data: randomBytes(each.matching === 1 ? 32 : each.matching === 2 ? 64 : 91) }
            : tlsaOf(each.usage, each.selector, each.matching, each.of),
        );
        const result = await compare(sample.chain, sample.host, list);
        if (result.ours !== result.theirs) {
          disagreements.push(`${sample.chain} ${sample.host} [${label(list)}] (${sample.records.map((each) => each.of).join(', ')}): netintel ${result.ours}, openssl ${result.theirs} (${result.reasons})`);
        }
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    expect(disagreements).toEqual([]);
  }, 120_000);
});
