/**
 * `netintel tls`'s engine against real TLS servers on 127.0.0.1 with
 * generated certificates: every finding about the certificate, the chain
 * and the protocol versions, each STARTTLS protocol against a scripted peer
 * (and SMTP against smtp-server), TLS 1.0 from OpenSSL's s_server.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext, type EngineContext } from '../../../src/engine/context.js';
import { createPublicTargetGuard } from '../../../src/engine/connect-guard.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import { adBitAuthenticator } from '../../../src/engine/smtp/dane.js';
import { startDnsServer } from '../../support/dns-server.js';
import { probeTls, type ProbeTlsOptions } from '../../../src/engine/tls/probe-tls.js';
import type { TlsResult } from '../../../src/engine/tls/tls-result.js';
import { createCertificateAuthority, daysFromNow, issueCertificate, startScriptedSmtpServer, startSmtpTestServer, type TestCertificate } from '../../support/smtp-servers.js';
import { OPENSSL, startOpensslServer, startStarttlsPeer, startTlsServer, type StarttlsPeerProtocol, type TlsServerOptions, type TlsTestServer } from '../../support/tls-servers.js';

let ctx: EngineContext;
let ca: TestCertificate;
const servers: Array<{ close(): unknown }> = [];

beforeAll(() => {
  ctx = createEngineContext({ timeoutMs: 3000 });
  ca = createCertificateAuthority();
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await ctx.close();
});

function leaf(options: Partial<Parameters<typeof issueCertificate>[0]> = {}): TestCertificate {
  return issueCertificate({ commonName: 'localhost', ipAddresses: ['127.0.0.1'], issuer: ca, ...options });
}

/** An OCSP response for `certificate` from the test CA, made by `openssl ocsp` as a responder (RFC 6960). */
function ocspResponse(certificate: TestCertificate, status: 'good' | 'revoked'): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'netintel-staple-'));
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  const serial = certificate.x509.serialNumber;
  const index = status === 'good' ? `V\t301231235959Z\t\t${serial}\tunknown\t/CN=localhost\n` : `R\t301231235959Z\t251101000000Z,keyCompromise\t${serial}\tunknown\t/CN=localhost\n`;
  const caFile = file('ca.pem', ca.cert);
  execFileSync(OPENSSL!, ['ocsp', '-index', file('index.txt', index), '-rsigner', caFile, '-rkey', file('ca.key', ca.key), '-CA', caFile, '-issuer', caFile, '-cert', file('leaf.pem', certificate.cert), '-respout', join(dir, 'response.der'), '-ndays', '1'], { stdio: 'ignore' });
  return readFileSync(join(dir, 'response.der'));
}

async function serve(options: TlsServerOptions): Promise<TlsTestServer> {
  const server = await startTlsServer(options);
  servers.push(server);
  return server;
}

function probe(port: number, options: Partial<ProbeTlsOptions> = {}): Promise<TlsResult> {
  return probeTls(ctx, { target: `127.0.0.1:${port}`, ca: [ca.cert], dane: false, ...options });
}

const ids = (result: TlsResult) => result.findings.map((finding) => finding.id);

describe('probeTls against node:tls servers', () => {
  it('reports a good server: chain, key, signature, versions, no problem findings', async () => {
    const server = await serve({ certificate: leaf() });
    const result = await probe(server.port);
    expect(result).toMatchObject({ host: '127.0.0.1', port: server.port, address: '127.0.0.1', connected: true, established: true, protocol: 'TLSv1.3', failure: null });
    expect(result.certificate).toMatchObject({ hostname_match: true, trusted: true, self_signed: false, chain_incomplete: false, verify_error: null, ocsp_stapled: false, embedded_scts: 0 });
    expect(result.chain[0]).toMatchObject({ subject: 'CN=localhost', key_type: 'ec', key_bits: 256, signature_algorithm: 'ecdsa-with-SHA256', trust_anchor: false });
    expect(result.chain[0]!.san).toEqual(['DNS:localhost', 'IP Address:127.0.0.1']);
    expect(result.protocols).toMatchObject({ tls1_2: 'accepted', tls1_3: 'accepted' });
    expect(['refused', 'not_tried']).toContain(result.protocols!.tls1_0);
    expect(ids(result)).toContain('tls_ok');
    expect(ids(result)).toContain('tls_no_ocsp_stapling');
    expect(result.findings.filter((finding) => finding.severity === 'error' || finding.severity === 'warning')).toEqual([]);
  });

  it('finds an expired certificate, and one that expires within --expiry-days', async () => {
    const expired = await serve({ certificate: leaf({ notBefore: daysFromNow(-30), notAfter: daysFromNow(-2) }) });
    const expiredResult = await probe(expired.port, { versions: false });
    expect(ids(expiredResult)).toContain('tls_expired');
    expect(expiredResult.certificate!.trusted).toBe(true);
    const soon = await serve({ certificate: leaf({ notAfter: daysFromNow(10.5) }) });
    expect(ids(await probe(soon.port, { versions: false }))).toContain('tls_expires_soon');
    expect(ids(await probe(soon.port, { versions: false, expiryDays: 5 }))).not.toContain('tls_expires_soon');
  });

  it('finds a certificate not yet valid', async () => {
    const server = await serve({ certificate: leaf({ notBefore: daysFromNow(3), notAfter: daysFromNow(90) }) });
    expect(ids(await probe(server.port, { versions: false }))).toContain('tls_not_yet_valid');
  });

  it('finds a certificate for another name', async () => {
    const server = await serve({ certificate: issueCertificate({ commonName: 'other.example', issuer: ca }) });
    const result = await probe(server.port, { versions: false });
    expect(ids(result)).toContain('tls_hostname_mismatch');
    expect(result.certificate!.hostname_match).toBe(false);
  });

  it('finds a chain without its intermediate, and accepts it whole', async () => {
    const intermediate = issueCertificate({ commonName: 'netintel test intermediate', ca: true, issuer: ca });
    const certificate = leaf({ issuer: intermediate });
    const missing = await serve({ certificate });
    const result = await probe(missing.port, { versions: false });
    expect(ids(result)).toContain('tls_chain_incomplete');
    expect(result.certificate).toMatchObject({ trusted: false, chain_incomplete: true });
    const whole = await serve({ certificate, chain: [intermediate] });
    const wholeResult = await probe(whole.port, { versions: false });
    expect(wholeResult.certificate!.trusted).toBe(true);
    expect(wholeResult.chain.map((each) => each.subject)).toEqual(['CN=localhost', 'CN=netintel test intermediate', 'O=netintel tests, CN=netintel test CA']);
    expect(wholeResult.chain[2]!.trust_anchor).toBe(true);
  });

  it('finds a self-signed certificate, and one no trusted root issued', async () => {
    const selfSigned = await serve({ certificate: issueCertificate({ commonName: 'localhost', ipAddresses: ['127.0.0.1'] }) });
    const result = await probe(selfSigned.port, { versions: false });
    expect(ids(result)).toContain('tls_self_signed');
    expect(ids(result)).not.toContain('tls_untrusted');
    // A whole chain up to a root nobody trusts (a chain of the leaf alone would read as incomplete: OpenSSL cannot tell the two apart).
    const stranger = await serve({ certificate: leaf(), chain: [ca] });
    expect(ids(await probe(stranger.port, { versions: false, ca: [] }))).toContain('tls_untrusted');
  });

  it('finds an RSA 1024 key and a SHA-1 signature', async () => {
    const server = await serve({ certificate: leaf({ rsaBits: 1024, sha1: true }), seclevel0: true });
    const result = await probe(server.port, { versions: false });
    expect(result.chain[0]).toMatchObject({ key_type: 'rsa', key_bits: 1024, signature_algorithm: 'ecdsa-with-SHA1' });
    expect(ids(result)).toEqual(expect.arrayContaining(['tls_weak_key', 'tls_weak_signature']));
  });

  it('sees a stapled OCSP response, and one that is no basic response is invalid', async () => {
    const server = await serve({ certificate: leaf(), staple: Buffer.from([0x30, 0x03, 0x0a, 0x01, 0x00]) });
    const result = await probe(server.port, { versions: false });
    expect(result.certificate).toMatchObject({ ocsp_stapled: true, ocsp_status: 'invalid' });
    expect(ids(result)).not.toContain('tls_no_ocsp_stapling');
    expect(result.findings.find((finding) => finding.id === 'tls_ocsp_invalid')?.message).toBe(
      'the stapled OCSP response does not verify, so clients ignore it: not a basic OCSP response (RFC 6960 §4.2.1)',
    );
  });

  it.skipIf(OPENSSL === null)('reads a stapled OCSP response that says the certificate is revoked, and then says nothing is fine', async () => {
    const certificate = leaf();
    const staple = ocspResponse(certificate, 'revoked');
    const server = await serve({ certificate, staple });
    const result = await probe(server.port, { versions: false });
    expect(result.certificate).toMatchObject({ trusted: true, ocsp_stapled: true, ocsp_status: 'revoked' });
    expect(result.findings.find((finding) => finding.id === 'tls_ocsp_revoked')).toMatchObject({
      severity: 'error',
      message: 'the stapled OCSP response says the certificate was revoked on 2025-11-01 (keyCompromise): clients refuse it',
    });
    expect(ids(result)).not.toContain('tls_ok');
    const good = await serve({ certificate, staple: ocspResponse(certificate, 'good') });
    const fine = await probe(good.port, { versions: false });
    expect(fine.certificate).toMatchObject({ ocsp_status: 'good' });
    expect(ids(fine)).toContain('tls_ok');
    // Without the issuer in the chain the response cannot be checked: said as unchecked (severity unknown, exit 7), never as good.
    const alone = await probe(good.port, { versions: false, ca: [] });
    expect(alone.certificate).toMatchObject({ ocsp_stapled: true, ocsp_status: 'unchecked' });
    expect(alone.findings.find((finding) => finding.id === 'tls_ocsp_unchecked')?.severity).toBe('unknown');
  });

  it('tries each version on a connection of its own: a TLS 1.2-only server refuses 1.3', async () => {
    const server = await serve({ certificate: leaf(), minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' });
    const before = server.connections();
    const result = await probe(server.port);
    expect(server.connections() - before).toBe(5);
    expect(result.protocols).toMatchObject({ tls1_2: 'accepted', tls1_3: 'refused' });
    expect(result.protocol).toBe('TLSv1.2');
    expect(ids(result)).toContain('tls_no_tls13');
  });

  it('says a version was left unchecked when its connection failed, never that it was refused', async () => {
    // A server that stops listening once its first client connects: every version probe finds the port closed.
    const certificate = leaf();
    const server = tls.createServer({ key: certificate.key, cert: certificate.cert }, (socket) => socket.end());
    server.once('connection', () => server.close());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const result = await probe((server.address() as AddressInfo).port);
    expect(result.protocols).toEqual({ tls1_0: 'failed', tls1_1: 'failed', tls1_2: 'failed', tls1_3: 'failed' });
    const unchecked = result.findings.find((finding) => finding.id === 'tls_protocol_unchecked');
    expect(unchecked).toMatchObject({ severity: 'unknown', evidence: { not_tried: [], failed: ['tls1_0', 'tls1_1', 'tls1_2', 'tls1_3'] } });
    expect(ids(result)).not.toContain('tls_no_tls13');
  });

  it('makes a failed handshake, a closed port and a silent server records with a failure', async () => {
    const closed = await serve({ certificate: leaf() });
    await closed.close();
    const unreachable = await probe(closed.port);
    expect(unreachable).toMatchObject({ connected: false, established: false, failure: { code: 'unreachable' } });
    const plain = await startStarttlsPeer('pop3', { certificate: leaf() });
    servers.push(plain);
    const garbage = await probe(plain.port);
    expect(garbage).toMatchObject({ connected: true, established: false, failure: { code: 'tls' } });
  });

  it('refuses a private address under the public-target guard, before connecting', async () => {
    const server = await serve({ certificate: leaf() });
    const guarded = { ...ctx, connectGuard: createPublicTargetGuard() };
    await expect(probeTls(guarded, { target: `127.0.0.1:${server.port}` })).rejects.toMatchObject({ code: 'forbidden' });
    expect(server.connections()).toBe(0);
  });

  it('refuses targets that are not host[:port]', async () => {
    for (const target of ['', 'host:0', 'host:70000', 'a b', "x'y", '[192.0.2.1]:443', 'host:port']) {
      await expect(probeTls(ctx, { target })).rejects.toMatchObject({ code: 'invalid_input' });
    }
  });
});

describe('STARTTLS', () => {
  const protocols: StarttlsPeerProtocol[] = ['imap', 'pop3', 'ftp', 'xmpp', 'ldap', 'postgres'];
  for (const protocol of protocols) {
    it(`${protocol}: upgrades after the preamble on every connection, and reports a refusal as a failure`, async () => {
      const peer = await startStarttlsPeer(protocol, { certificate: leaf() });
      const refusing = await startStarttlsPeer(protocol, { certificate: leaf(), refuse: true });
      servers.push(peer, refusing);
      // Every version is tried on a connection of its own, each after its own preamble.
      const result = await probe(peer.port, { starttls: protocol });
      expect(result).toMatchObject({ starttls: protocol, established: true, failure: null, protocols: { tls1_2: 'accepted', tls1_3: 'accepted' } });
      expect(peer.connections()).toBe(5);
      expect(result.certificate!.trusted).toBe(true);
      const refused = await probe(refusing.port, { starttls: protocol, versions: false });
      expect(refused).toMatchObject({ connected: true, established: false, failure: { code: 'upstream' } });
    });
  }

  it('finds a TLS 1.0-only server behind each preamble', async () => {
    for (const protocol of protocols) {
      const peer = await startStarttlsPeer(protocol, { certificate: leaf(), minVersion: 'TLSv1', maxVersion: 'TLSv1', seclevel0: true });
      servers.push(peer);
      const result = await probe(peer.port, { starttls: protocol });
      expect(result.protocols, protocol).toEqual({ tls1_0: 'accepted', tls1_1: 'refused', tls1_2: 'refused', tls1_3: 'refused' });
      expect(ids(result), protocol).toContain('tls_weak_protocol');
    }
  });

  it('smtp: through smtp-server\'s STARTTLS, every version probe after its own EHLO', async () => {
    const server = await startSmtpTestServer({ certificate: leaf() });
    servers.push(server);
    const result = await probe(server.port, { starttls: 'smtp' });
    expect(result).toMatchObject({ starttls: 'smtp', established: true, failure: null });
    expect(result.protocols!.tls1_3).toBe('accepted');
    expect(server.commands().filter((command) => command === 'STARTTLS').length).toBe(5);
  });

  it('the default port follows the protocol', async () => {
    await expect(probeTls(ctx, { target: '192.0.2.1', starttls: 'imap', timeoutMs: 1, versions: false })).resolves.toMatchObject({ port: 143 });
  });
});

describe('hostile STARTTLS peers', () => {
  async function scripted(script: Parameters<typeof startScriptedSmtpServer>[0]) {
    const server = await startScriptedSmtpServer(script);
    servers.push(server);
    return server;
  }

  it('stops reading a peer that floods the preamble past 64 KiB', async () => {
    const server = await scripted((connection) => {
      connection.send('* OK ready');
      connection.readLine().then(() => connection.socket.write(Buffer.alloc(200_000, 0x41)));
    });
    const result = await probe(server.port, { starttls: 'imap', versions: false });
    expect(result.failure).toMatchObject({ code: 'upstream', message: expect.stringContaining('more than 65536 bytes') });
  });

  it('gives up on a peer that never greets, within the deadline', async () => {
    const server = await scripted(() => {});
    const started = performance.now();
    const result = await probe(server.port, { starttls: 'pop3', versions: false, timeoutMs: 300 });
    expect(result.failure!.code).toBe('timeout');
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('drops what a peer sends after its go-ahead and before the handshake', async () => {
    const server = await scripted(async (connection) => {
      connection.send('+OK ready');
      await connection.readLine();
      // The go-ahead and an injected line in one write: neither may be read inside TLS.
      connection.socket.write('+OK begin TLS\r\n+OK injected\r\n');
      await connection.upgrade(leaf());
    });
    const result = await probe(server.port, { starttls: 'pop3', versions: false });
    expect(result).toMatchObject({ established: true, failure: null });
  });

  it('quotes a refusal that carries control characters escaped once and its own quotes escaped, whatever the protocol', async () => {
    const smtp = await scripted(async (connection) => {
      connection.send('220 mx.test ESMTP');
      await connection.readLine();
      connection.send('250-mx.test\r\n250 STARTTLS');
      await connection.readLine();
      connection.send('454 4.7.0 \u001b[31mTLS not available');
    });
    const imap = await scripted(async (connection) => {
      connection.send('* OK ready');
      await connection.readLine();
      connection.send('a1 NO \u001b[31mnot "now"');
    });
    const refusedSmtp = await probe(smtp.port, { starttls: 'smtp', versions: false });
    const reason = (message: string) => message.slice(message.indexOf(' failed: ') + ' failed: '.length);
    expect(reason(refusedSmtp.failure!.message)).toBe(String.raw`the SMTP server answered STARTTLS with 454 "4.7.0 \x1b[31mTLS not available"`);
    const refusedImap = await probe(imap.port, { starttls: 'imap', versions: false });
    expect(reason(refusedImap.failure!.message)).toBe(String.raw`the IMAP server refused STARTTLS: "a1 NO \x1b[31mnot \"now\""`);
  });

  it('refuses an LDAP answer whose BER length no StartTLS answer needs', async () => {
    const server = await scripted(async (connection) => {
      connection.socket.once('data', () => connection.socket.write(Buffer.from([0x30, 0x84, 0x7f, 0xff, 0xff, 0xff, 0x02])));
    });
    const result = await probe(server.port, { starttls: 'ldap', versions: false });
    expect(result.failure).toMatchObject({ code: 'upstream', message: expect.stringContaining('BER length') });
  });
});

describe('DANE (TLSA records of _<port>._tcp.<host>)', () => {
  it('matches a DANE-EE record of the leaf key, says so when no record matches, and when the lookup fails', async () => {
    const certificate = issueCertificate({ commonName: 'tls.dane.test', issuer: ca });
    const server = await serve({ certificate });
    const spkiDigest = createHash('sha256').update(certificate.x509.publicKey.export({ type: 'spki', format: 'der' })).digest();
    const dns = await startDnsServer({
      records: [
        { name: 'tls.dane.test', type: 'A', data: '127.0.0.1' },
        { name: 'other.dane.test', type: 'A', data: '127.0.0.1' },
        { name: 'failing.dane.test', type: 'A', data: '127.0.0.1' },
        { name: `_${server.port}._tcp.tls.dane.test`, type: 'TLSA', data: { usage: 3, selector: 1, matchingType: 1, certificate: spkiDigest } },
        { name: `_${server.port}._tcp.other.dane.test`, type: 'TLSA', data: { usage: 3, selector: 1, matchingType: 1, certificate: Buffer.alloc(32, 0xab) } },
      ],
      authenticData: (name) => name.startsWith('_'),
      behaviours: { [`_${server.port}._tcp.failing.dane.test`]: 'servfail' },
    });
    const dnsCtx = createEngineContext({ resolvers: [parseResolverAddress(dns.address)], timeoutMs: 2000, dnsRetries: 0 });
    try {
      // The test resolver's AD bit stands for DNSSEC here, as in test/engine/smtp/dane.test.ts.
      const options = { ca: [ca.cert], versions: false, daneOptions: { authenticate: adBitAuthenticator(dnsCtx) } };
      const matched = await probeTls(dnsCtx, { target: `tls.dane.test:${server.port}`, ...options });
      expect(matched.dane).toEqual({ verdict: 'matched', tlsa_name: `_${server.port}._tcp.tls.dane.test`, records: 1, dnssec: 'secure', error: null });
      expect(ids(matched)).toContain('tls_dane_match');
      const mismatched = await probeTls(dnsCtx, { target: `other.dane.test:${server.port}`, ...options });
      expect(mismatched.dane!.verdict).toBe('mismatch');
      // The finding says why, as netintel smtp's dane_no_match does.
      const mismatch = mismatched.findings.find((finding) => finding.id === 'tls_dane_mismatch');
      expect(mismatch?.message).toBe(`no TLSA record at _${server.port}._tcp.other.dane.test matches the chain (the server certificate does not match)`);
      expect(mismatch?.evidence).toMatchObject({ verdict: 'mismatch', reasons: ['the server certificate does not match'] });
      // A lookup that fails leaves DANE unchecked: a finding of severity unknown, never a match or "no records".
      const failing = await probeTls(dnsCtx, { target: `failing.dane.test:${server.port}`, ...options });
      expect(failing.dane).toMatchObject({ verdict: 'failed', error: expect.any(String) });
      expect(failing.findings.find((finding) => finding.id === 'tls_dane_check_failed')?.severity).toBe('unknown');
    } finally {
      await dnsCtx.close();
      await dns.close();
    }
  });

  it('reports TLSA records whose DNSSEC could not be decided as unchecked, not as not-applicable', async () => {
    const certificate = issueCertificate({ commonName: 'undecided.dane.test', issuer: ca });
    const server = await serve({ certificate });
    const tlsaName = `_${server.port}._tcp.undecided.dane.test`;
    let tlsaQueries = 0;
    const dns = await startDnsServer({
      records: [
        { name: 'undecided.dane.test', type: 'A', data: '127.0.0.1' },
        { name: tlsaName, type: 'TLSA', data: { usage: 3, selector: 1, matchingType: 1, certificate: Buffer.alloc(32, 0xab) } },
      ],
      authenticData: (name) => name.startsWith('_'),
      // The TLSA lookup is answered; the authenticator's own query for the RRset (its AD bit) gets SERVFAIL.
      script: (query) => {
        const question = query.questions?.[0];
        if (question?.type !== 'TLSA' || question.name.toLowerCase() !== tlsaName) return undefined;
        tlsaQueries += 1;
        if (tlsaQueries === 1) return [{ zone: true }];
        return [{ message: dnsPacket.encode({ type: 'response', id: query.id ?? 0, flags: dnsPacket.RECURSION_AVAILABLE | 2, questions: [question] }) }];
      },
    });
    const dnsCtx = createEngineContext({ resolvers: [parseResolverAddress(dns.address)], timeoutMs: 2000, dnsRetries: 0 });
    try {
      const result = await probeTls(dnsCtx, { target: `undecided.dane.test:${server.port}`, ca: [ca.cert], versions: false, daneOptions: { authenticate: adBitAuthenticator(dnsCtx) } });
      expect(tlsaQueries).toBe(2);
      expect(result.dane).toMatchObject({ verdict: 'failed', tlsa_name: tlsaName, records: 1, dnssec: 'indeterminate', error: expect.stringMatching(/^DNSSEC could not be decided: /) });
      const unchecked = result.findings.find((finding) => finding.id === 'tls_dane_check_failed');
      expect(unchecked?.severity).toBe('unknown');
      expect(unchecked?.message).toContain('DNSSEC could not be decided');
      // Words, not a failed lookup: the reason, never an `error` that is not { code, message } (docs/exit-codes.md).
      expect(unchecked?.evidence).toMatchObject({ verdict: 'failed', reason: expect.stringContaining('DNSSEC could not be decided') });
      expect(unchecked?.evidence).not.toHaveProperty('error');
      expect(ids(result)).not.toContain('tls_dane_match');
      expect(ids(result)).not.toContain('tls_dane_mismatch');
    } finally {
      await dnsCtx.close();
      await dns.close();
    }
  });
});

if (OPENSSL === null) console.warn('SKIPPING the TLS 1.0 test of test/engine/tls/probe-tls.test.ts: openssl (Debian package openssl) not found');

describe.skipIf(OPENSSL === null)('a TLS 1.0-only server (OpenSSL s_server)', () => {
  it('is found accepting TLS 1.0 alone: tls_weak_protocol', async () => {
    const server = await startOpensslServer(leaf(), ['-tls1', '-cipher', 'DEFAULT@SECLEVEL=0']);
    servers.push(server);
    const result = await probe(server.port);
    expect(result.protocols).toEqual({ tls1_0: 'accepted', tls1_1: 'refused', tls1_2: 'refused', tls1_3: 'refused' });
    expect(result.protocol).toBe('TLSv1');
    expect(ids(result)).toContain('tls_weak_protocol');
  });
});
