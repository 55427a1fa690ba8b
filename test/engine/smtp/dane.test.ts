/**
 * DANE for SMTP against real parts: a CA and a leaf made by the test, an
 * SMTP server (smtp-server) presenting them on 127.0.0.1, TLSA records
 * computed from them for every usage × selector × matching type, served
 * by a DNS server on 127.0.0.1 that sets the AD bit for the names the test
 * says.
 */
import { createHash, type X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext, type EngineContext } from '../../../src/engine/context.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import { readFileSync } from 'node:fs';
import { parseTrustAnchors } from '../../../src/engine/dns/dnssec/trust-anchor.js';
import { adBitAuthenticator, checkDane, lookupTlsa, matchTlsa, validatingAuthenticator, type Authenticate } from '../../../src/engine/smtp/dane.js';
import { probeSmtp, type ProbeSmtpOptions } from '../../../src/engine/smtp/probe-smtp.js';
import type { SmtpResult } from '../../../src/engine/smtp/smtp-result.js';
import { parseTlsaText, tlsaRecord, type TlsaRecord } from '../../../src/engine/smtp/tlsa-record.js';
import { startDnsServer, type DnsTestServer, type ZoneRecord } from '../../support/dns-server.js';
import {
  createCertificateAuthority,
  issueCertificate,
  startSmtpTestServer,
  type SmtpTestServer,
  type TestCertificate,
} from '../../support/smtp-servers.js';

const ZONE = 'dane.test';
const USAGES = [2, 3] as const;
const SELECTORS = [0, 1] as const;
const MATCHING = [0, 1, 2] as const;

let ca: TestCertificate;
let leaf: TestCertificate;
let otherCa: TestCertificate;
let other: TestCertificate;
let dns: DnsTestServer;
let ctx: EngineContext;
let server: SmtpTestServer;
let plainServer: SmtpTestServer;
let leafOnlyServer: SmtpTestServer;

/** The certificate association data of `certificate` (RFC 6698 §2.1.2, §2.1.3), computed here from the test's own certificate. */
function association(certificate: X509Certificate, selector: number, matchingType: number): Buffer {
  const selected = selector === 0 ? Buffer.from(certificate.raw) : certificate.publicKey.export({ type: 'spki', format: 'der' });
  if (matchingType === 1) return createHash('sha256').update(selected).digest();
  if (matchingType === 2) return createHash('sha512').update(selected).digest();
  return selected;
}

function tlsa(name: string, usage: number, selector: number, matchingType: number, certificate: X509Certificate): ZoneRecord {
  return { name: `_25._tcp.${name}`, type: 'TLSA', data: { usage, selector, matchingType, certificate: association(certificate, selector, matchingType) } };
}

function record(usage: number, selector: number, matchingType: number, certificate: X509Certificate): TlsaRecord {
  return tlsaRecord({ usage, selector, matching_type: matchingType, data: association(certificate, selector, matchingType) });
}

const combos = USAGES.flatMap((usage) => SELECTORS.flatMap((selector) => MATCHING.map((matchingType) => ({ usage, selector, matchingType }))));
const hostOf = (usage: number, selector: number, matchingType: number, kind = 'good') => `${kind}-${usage}${selector}${matchingType}.${ZONE}`;

beforeAll(async () => {
  ca = createCertificateAuthority('DANE test CA');
  leaf = issueCertificate({ commonName: `mx.${ZONE}`, dnsNames: [`*.${ZONE}`], issuer: ca });
  otherCa = createCertificateAuthority('another CA');
  other = issueCertificate({ commonName: `mx.${ZONE}`, dnsNames: [`*.${ZONE}`], issuer: otherCa });
  const records: ZoneRecord[] = [{ name: ZONE, type: 'SOA', data: { mname: `ns.${ZONE}`, rname: `hostmaster.${ZONE}`, serial: 1, refresh: 3600, retry: 600, expire: 86400, minimum: 60 } }];
  for (const { usage, selector, matchingType } of combos) {
    const anchor = usage === 2 ? ca.x509 : leaf.x509;
    const wrong = usage === 2 ? otherCa.x509 : other.x509;
    for (const [kind, certificate] of [['good', anchor], ['bad', wrong], ['insecure', anchor]] as const) {
      const name = hostOf(usage, selector, matchingType, kind);
      records.push({ name, type: 'A', data: '127.0.0.1' }, tlsa(name, usage, selector, matchingType, certificate));
      if (kind === 'good') records.push(tlsa(name, usage, selector, matchingType, other.x509)); // a second record: no rollover finding
    }
  }
  records.push(
    { name: `single.${ZONE}`, type: 'A', data: '127.0.0.1' },
    tlsa(`single.${ZONE}`, 3, 1, 1, leaf.x509),
    { name: `pkix.${ZONE}`, type: 'A', data: '127.0.0.1' },
    tlsa(`pkix.${ZONE}`, 0, 0, 1, ca.x509),
    tlsa(`pkix.${ZONE}`, 1, 1, 1, leaf.x509),
    { name: `mixed.${ZONE}`, type: 'A', data: '127.0.0.1' },
    tlsa(`mixed.${ZONE}`, 1, 1, 1, leaf.x509),
    tlsa(`mixed.${ZONE}`, 3, 1, 1, leaf.x509),
    tlsa(`mixed.${ZONE}`, 3, 1, 2, leaf.x509),
    { name: `none.${ZONE}`, type: 'A', data: '127.0.0.1' },
    { name: `broken.${ZONE}`, type: 'A', data: '127.0.0.1' },
    { name: `_25._tcp.empty.${ZONE}`, type: 'TXT', data: 'not a TLSA record' },
    // A TLSA name that is an alias of another host's TLSA RRset.
    { name: `_25._tcp.alias.${ZONE}`, type: 'CNAME', data: `_25._tcp.${hostOf(3, 1, 1)}` },
    { name: `alias.${ZONE}`, type: 'A', data: '127.0.0.1' },
    // A host that is an alias: its expansion's TLSA records come first (RFC 7672 §2.2.3).
    { name: `cname-host.${ZONE}`, type: 'CNAME', data: `target.${ZONE}` },
    { name: `target.${ZONE}`, type: 'A', data: '127.0.0.1' },
    tlsa(`target.${ZONE}`, 3, 0, 1, leaf.x509),
    tlsa(`target.${ZONE}`, 3, 1, 1, leaf.x509),
    tlsa(`cname-host.${ZONE}`, 3, 0, 1, other.x509),
  );
  dns = await startDnsServer({
    records,
    // test. (the zone of the test trust anchor) never answers: netintel's validator cannot get its keys.
    behaviours: { [`_25._tcp.broken.${ZONE}`]: 'servfail', test: 'silent' },
    authenticData: (name) => !name.includes('insecure'),
  });
  ctx = createEngineContext({ resolvers: [parseResolverAddress(dns.address)], timeoutMs: 2000, dnsRetries: 0 });
  server = await startSmtpTestServer({ name: `mx.${ZONE}`, certificate: leaf, chain: [ca] });
  plainServer = await startSmtpTestServer({ name: `mx.${ZONE}` });
  // The CA is trusted by the prober (tlsCa) but not sent: node:tls completes the chain it describes with it.
  leafOnlyServer = await startSmtpTestServer({ name: `mx.${ZONE}`, certificate: leaf });
});

afterAll(async () => {
  await Promise.all([server?.close(), plainServer?.close(), leafOnlyServer?.close(), dns?.close()]);
  await ctx?.close();
});

/**
 * DNSSEC here is the test resolver's AD bit (adBitAuthenticator), as for an
 * MTA that trusts a validating resolver of its own: these tests are about
 * TLSA lookups and matching. netintel's validator is tested on signed zones
 * in test/engine/dns/dnssec-validate.test.ts.
 */
const trustingResolver = () => ({ authenticate: adBitAuthenticator(ctx) });

function probe(host: string, options: Partial<ProbeSmtpOptions> = {}): Promise<SmtpResult> {
  return probeSmtp(ctx, { host, address: '127.0.0.1', port: server.port, reverseDns: false, tlsCa: [ca.cert], dane: trustingResolver(), ...options });
}

function ids(result: { findings: Array<{ id: string }> }): string[] {
  return result.findings.map((item) => item.id);
}

function daneFinding(result: SmtpResult, id: string) {
  const found = result.findings.find((item) => item.id === id);
  if (!found) throw new Error(`no finding ${id} in ${ids(result).join(', ')}`);
  return found;
}

describe('matchTlsa with certificates made by the test', () => {
  it.each(combos)('usage $usage selector $selector matching $matchingType matches the chain it was made from', ({ usage, selector, matchingType }) => {
    const [match] = matchTlsa([record(usage, selector, matchingType, usage === 2 ? ca.x509 : leaf.x509)], [leaf.x509, ca.x509], [`mx.${ZONE}`]);
    expect(match).toMatchObject({ matched: true, depth: usage === 2 ? 1 : 0, reason: null });
  });

  it.each(combos)('usage $usage selector $selector matching $matchingType does not match another chain', ({ usage, selector, matchingType }) => {
    const [match] = matchTlsa([record(usage, selector, matchingType, usage === 2 ? ca.x509 : leaf.x509)], [other.x509, otherCa.x509]);
    expect(match!.matched).toBe(false);
    expect(match!.reason).toMatch(/does not match|no certificate of the chain matches/);
  });

  it('takes raw DER as well as X509Certificate objects', () => {
    const der = [Buffer.from(leaf.x509.raw), Buffer.from(ca.x509.raw)];
    expect(matchTlsa([record(3, 1, 1, leaf.x509), record(2, 0, 2, ca.x509)], der).map((match) => match.matched)).toEqual([true, true]);
  });

  it('DANE-EE looks at the leaf only, not at a CA further up', () => {
    const [match] = matchTlsa([record(3, 1, 1, ca.x509)], [leaf.x509, ca.x509]);
    expect(match!.matched).toBe(false);
  });

  it('DANE-EE ignores names and dates; DANE-TA checks the leaf names the host (RFC 7672 §3.2.2)', () => {
    const [ee, ta] = matchTlsa([record(3, 1, 1, leaf.x509), record(2, 1, 1, ca.x509)], [leaf.x509, ca.x509], ['mx.elsewhere.example']);
    expect(ee).toMatchObject({ matched: true, name_match: null });
    expect(ta).toMatchObject({ matched: true, name_match: false });
    expect(ta!.reason).toContain('does not name mx.elsewhere.example');
  });

  it('DANE-TA needs the chain to lead from the leaf to the anchor by signatures', () => {
    // otherCa is presented, but the leaf was not issued by it.
    const [match] = matchTlsa([record(2, 0, 1, otherCa.x509)], [leaf.x509, otherCa.x509]);
    expect(match).toMatchObject({ matched: false, depth: 1 });
    expect(match!.reason).toContain('does not lead');
  });

  it('a DANE-TA full public key not in the chain is an anchor when it signed the last certificate (RFC 7671 §5.2.3)', () => {
    const chain = [leaf.x509];
    expect(matchTlsa([record(2, 1, 0, ca.x509)], chain)[0]).toMatchObject({ matched: true, depth: 1 });
    expect(matchTlsa([record(2, 1, 1, ca.x509)], chain)[0]!.matched).toBe(false);
    expect(matchTlsa([record(2, 1, 0, otherCa.x509)], chain)[0]!.matched).toBe(false);
  });

  it('PKIX usages, unknown parameters and digests of the wrong length are unusable', () => {
    const records = [
      record(0, 0, 1, ca.x509),
      record(1, 1, 1, leaf.x509),
      tlsaRecord({ usage: 3, selector: 1, matching_type: 1, data: Buffer.alloc(20) }),
      tlsaRecord({ usage: 4, selector: 1, matching_type: 1, data: Buffer.alloc(32) }),
      tlsaRecord({ usage: 3, selector: 2, matching_type: 1, data: Buffer.alloc(32) }),
      tlsaRecord({ usage: 3, selector: 1, matching_type: 3, data: Buffer.alloc(32) }),
    ];
    const matches = matchTlsa(records, [leaf.x509, ca.x509]);
    expect(matches.every((match) => !match.matched)).toBe(true);
    expect(matches.map((match) => match.reason)).toEqual([
      'usage PKIX-TA(0) is not used for SMTP (RFC 7672 §3.1.3)',
      'usage PKIX-EE(1) is not used for SMTP (RFC 7672 §3.1.3)',
      'a SHA2-256(1) digest is 32 bytes, this one 20',
      'unknown certificate usage 4',
      'unknown selector 2',
      'unknown matching type 3',
    ]);
  });

  it('an empty chain matches nothing', () => {
    expect(matchTlsa([record(3, 1, 1, leaf.x509)], [])[0]).toMatchObject({ matched: false, reason: 'no certificate was presented' });
  });
});

describe('lookupTlsa over a DNS server on 127.0.0.1', () => {
  it('reads the RRset and the AD bit', async () => {
    const lookup = await lookupTlsa(ctx, hostOf(3, 1, 1), 25, trustingResolver());
    expect(lookup).toMatchObject({ name: `_25._tcp.${hostOf(3, 1, 1)}`, status: 'answer', aliases: [], dnssec: { status: 'secure' } });
    expect(lookup.records.map((item) => item.label)).toEqual(['DANE-EE(3) SPKI(1) SHA2-256(1)', 'DANE-EE(3) SPKI(1) SHA2-256(1)']);
    expect(lookup.records[0]!.data).toBe(association(leaf.x509, 1, 1).toString('hex'));
  });

  it('an answer without AD is insecure', async () => {
    const lookup = await lookupTlsa(ctx, hostOf(3, 1, 1, 'insecure'), 25, trustingResolver());
    expect(lookup.dnssec.status).toBe('insecure');
    expect(lookup.dnssec.reason).toContain('did not set the AD bit');
  });

  it('follows a CNAME of the TLSA name', async () => {
    const lookup = await lookupTlsa(ctx, `alias.${ZONE}`, 25, trustingResolver());
    expect(lookup.aliases).toEqual([`_25._tcp.alias.${ZONE}`]);
    expect(lookup.records).toHaveLength(2);
  });

  it('tries the expanded name of a secure host alias first (RFC 7672 §2.2.3)', async () => {
    const lookup = await lookupTlsa(ctx, `cname-host.${ZONE}`, 25, trustingResolver());
    expect(lookup.tried).toEqual([`_25._tcp.target.${ZONE}`]);
    expect(lookup.records.map((item) => item.label)).toEqual(['DANE-EE(3) Cert(0) SHA2-256(1)', 'DANE-EE(3) SPKI(1) SHA2-256(1)']);
  });

  it('no records and a failed lookup are told apart', async () => {
    expect((await lookupTlsa(ctx, `none.${ZONE}`, 25, trustingResolver())).status).toBe('nxdomain');
    expect((await lookupTlsa(ctx, `empty.${ZONE}`, 25, trustingResolver())).status).toBe('nodata');
    expect((await lookupTlsa(ctx, `nowhere.${ZONE}`, 25, trustingResolver())).status).toBe('nxdomain');
    const asked = () => dns.queries.filter((query) => query.name === `_25._tcp.broken.${ZONE}`).length;
    const before = asked();
    const failed = await lookupTlsa(ctx, `broken.${ZONE}`, 25, trustingResolver());
    expect(failed.status).toBe('failed');
    expect(failed.error?.code).toBe('upstream');
    expect(failed.error?.message).toContain('SERVFAIL');
    expect(failed.dnssec).toEqual({ status: 'indeterminate', reason: 'the TLSA lookup failed', error: null });
    expect(asked() - before, 'asked once: no second query to judge DNSSEC').toBe(1);
  });

  it('another port asks _<port>._tcp', async () => {
    const lookup = await lookupTlsa(ctx, hostOf(3, 1, 1), 465, trustingResolver());
    expect(lookup.name).toBe(`_465._tcp.${hostOf(3, 1, 1)}`);
    expect(lookup.status).toBe('nxdomain');
  });
});

describe('probeSmtp with dane: a real SMTP server presenting the test chain', () => {
  it.each(combos)('usage $usage selector $selector matching $matchingType: matched, secure', async ({ usage, selector, matchingType }) => {
    const result = await probe(hostOf(usage, selector, matchingType));
    expect(result.dane).toMatchObject({ verdict: 'matched', dnssec: { status: 'secure' } });
    expect(result.dane!.matches.map((match) => match.matched)).toEqual([true, false]);
    expect(daneFinding(result, 'dane_match').severity).toBe('pass');
    expect(ids(result).filter((id) => id.startsWith('dane_'))).toEqual(['dane_match']);
  });

  it.each(combos)('usage $usage selector $selector matching $matchingType: records of another chain are a mismatch', async ({ usage, selector, matchingType }) => {
    const result = await probe(hostOf(usage, selector, matchingType, 'bad'));
    expect(result.dane!.verdict).toBe('mismatch');
    const found = daneFinding(result, 'dane_no_match');
    expect(found).toMatchObject({ severity: 'error', rfc: 'RFC 7672 §3.1' });
  });

  it('matches the chain the server sent, not the one the trust store completes: an anchor left out is a mismatch (RFC 7671 §5.2.2)', async () => {
    const sent = await probe(hostOf(2, 0, 1));
    expect(sent.dane).toMatchObject({ verdict: 'matched' });
    const leftOut = await probe(hostOf(2, 0, 1), { port: leafOnlyServer.port });
    expect(leftOut.tls.certificate).toMatchObject({ trusted: true });
    expect(leftOut.dane).toMatchObject({ verdict: 'mismatch' });
    expect(leftOut.dane!.matches.map((match) => match.reason)).toContain('no certificate of the chain matches');
    // The finding says why, once per reason.
    expect(daneFinding(leftOut, 'dane_no_match').message).toMatch(/DANE senders do not deliver to this host \(.*no certificate of the chain matches.*\)$/);
  });

  it('records without DNSSEC are reported as ignored by senders', async () => {
    const result = await probe(hostOf(3, 1, 1, 'insecure'));
    expect(result.dane).toMatchObject({ verdict: 'not-applicable', dnssec: { status: 'insecure' } });
    expect(daneFinding(result, 'dane_tlsa_insecure')).toMatchObject({ severity: 'warning', rfc: 'RFC 7672 §2.2' });
    expect(daneFinding(result, 'dane_match').severity).toBe('info');
  });

  it('no TLSA records: an info finding, DANE not in use', async () => {
    const result = await probe(`none.${ZONE}`);
    expect(result.dane!.verdict).toBe('not-applicable');
    expect(daneFinding(result, 'dane_tlsa_missing').severity).toBe('info');
  });

  it('a failing TLSA lookup leaves DANE unchecked: an unknown finding, not a verdict of the host', async () => {
    const result = await probe(`broken.${ZONE}`);
    expect(result.dane!.verdict).toBe('failed');
    expect(daneFinding(result, 'dane_tlsa_lookup_failed').severity).toBe('unknown');
  });

  it('PKIX usages only: unusable for SMTP', async () => {
    const result = await probe(`pkix.${ZONE}`);
    expect(result.dane!.verdict).toBe('unusable');
    expect(daneFinding(result, 'dane_unusable_only')).toMatchObject({ severity: 'error', rfc: 'RFC 7672 §3.1.3' });
  });

  it('an unusable record beside usable ones is noted and ignored', async () => {
    const result = await probe(`mixed.${ZONE}`);
    expect(result.dane!.verdict).toBe('matched');
    expect(daneFinding(result, 'dane_unusable_record').severity).toBe('info');
    expect(ids(result)).not.toContain('dane_no_rollover_record');
  });

  it('a single DANE-EE record: no rollover record', async () => {
    const result = await probe(`single.${ZONE}`);
    expect(result.dane!.verdict).toBe('matched');
    expect(daneFinding(result, 'dane_no_rollover_record')).toMatchObject({ severity: 'warning', rfc: 'RFC 7671 §8.1, RFC 7672 §8.1' });
  });

  it('TLSA records but no STARTTLS is an error', async () => {
    const result = await probe(hostOf(3, 1, 1), { port: plainServer.port });
    expect(result.tls.offered).toBe(false);
    expect(result.dane!.verdict).toBe('no-tls');
    expect(daneFinding(result, 'dane_starttls_missing').severity).toBe('error');
  });

  it('stopping before TLS judges no certificate', async () => {
    const result = await probe(hostOf(3, 1, 1), { quitAfter: 'ehlo' });
    expect(result.dane!.verdict).toBe('no-tls');
    expect(ids(result).filter((id) => id.startsWith('dane_'))).toEqual([]);
  });

  it('an injected authenticator decides DNSSEC: bogus is an error', async () => {
    const asked: string[] = [];
    const authenticate: Authenticate = async (name, type) => {
      asked.push(`${name} ${type}`);
      return { status: 'bogus', reason: 'RRSIG expired' };
    };
    const result = await probe(hostOf(3, 1, 1), { dane: { authenticate } });
    expect(asked).toEqual([`_25._tcp.${hostOf(3, 1, 1)} TLSA`]);
    expect(result.dane).toMatchObject({ verdict: 'failed', dnssec: { status: 'bogus', reason: 'RRSIG expired' } });
    expect(daneFinding(result, 'dane_tlsa_bogus').message).toContain('RRSIG expired');
  });

  it('records whose DNSSEC is undecided (no trust anchor covers them) leave DANE unchecked: unknown, failed, never matched or ignored', async () => {
    const authenticate: Authenticate = async () => ({ status: 'indeterminate', reason: 'no trust anchor covers _25._tcp.x', error: null });
    const result = await probe(hostOf(3, 1, 1), { dane: { authenticate } });
    expect(result.dane).toMatchObject({ verdict: 'failed', dnssec: { status: 'indeterminate', error: null } });
    expect(daneFinding(result, 'dane_dnssec_indeterminate')).toMatchObject({ severity: 'unknown', message: expect.stringContaining('DANE was not checked') });
    // The chain does match the record, but a match DANE senders may ignore is not a verdict.
    expect(result.dane!.matches.some((match) => match.matched)).toBe(true);
    expect(ids(result)).not.toContain('dane_match');
    expect(result.findings.filter((item) => item.id.startsWith('dane_') && item.severity === 'warning')).toEqual([]);
  });

  it("the resolver's AD bit: a re-query that gets no answer is DNSSEC not checked, with the failure (a SERVFAIL may be its bogus)", async () => {
    const verdict = await adBitAuthenticator(ctx)(`_25._tcp.broken.${ZONE}`, 'TLSA');
    expect(verdict).toMatchObject({ status: 'indeterminate', error: { code: 'upstream', message: expect.stringContaining('SERVFAIL') } });
    let asked = 0;
    const flaky: Authenticate = async (name, type) => (asked++ === 0 ? verdict : adBitAuthenticator(ctx)(name, type));
    const result = await probe(hostOf(3, 1, 1), { dane: { authenticate: flaky } });
    expect(result.dane).toMatchObject({ verdict: 'failed', dnssec: { status: 'indeterminate', error: { code: 'upstream' } } });
    expect(daneFinding(result, 'dane_dnssec_unchecked')).toMatchObject({ severity: 'unknown', evidence: { error: { code: 'upstream' } } });
  });

  it('is off unless asked for, and skipped for an IP address', async () => {
    expect((await probe(hostOf(3, 1, 1), { dane: false })).dane).toBeNull();
    expect((await probe('127.0.0.1')).dane).toBeNull();
  });
});

describe('DANE judged by netintel\'s own validator', () => {
  it('leaves the TLSA records\' DNSSEC unchecked (unknown) when a question of the chain gets no answer: not undecided, not a verdict', async () => {
    const anchor = parseTrustAnchors(readFileSync(new URL('../../fixtures/dnssec/Ktest.anchor.key', import.meta.url), 'utf8'));
    const result = await probe(hostOf(3, 1, 1), { dane: { authenticate: validatingAuthenticator(ctx, anchor) } });
    expect(result.dane!.dnssec).toMatchObject({ status: 'indeterminate', error: { code: 'timeout', message: expect.stringContaining('test DNSKEY') } });
    expect(result.dane!.verdict).toBe('failed');
    expect(daneFinding(result, 'dane_dnssec_unchecked')).toMatchObject({ severity: 'unknown', evidence: { error: { code: 'timeout' } } });
    expect(ids(result)).not.toContain('dane_dnssec_indeterminate');
  });
});

describe('checkDane for the e-mail report', () => {
  it('matches a DER chain given by the caller', async () => {
    const result = await checkDane(ctx, hostOf(2, 0, 0), [Buffer.from(leaf.x509.raw), Buffer.from(ca.x509.raw)], { starttlsOffered: true, ...trustingResolver() });
    expect(result.verdict).toBe('matched');
    expect(result.tlsa.records).toHaveLength(2);
    expect(result.findings.map((item) => item.id)).toEqual(['dane_match']);
  });

  it('DANE-TA with a leaf that does not name the host', async () => {
    const stranger = issueCertificate({ commonName: 'mx.elsewhere.example', issuer: ca });
    const result = await checkDane(ctx, hostOf(2, 1, 1), [stranger.x509, ca.x509], { starttlsOffered: true, ...trustingResolver() });
    expect(result.verdict).toBe('mismatch');
    expect(result.findings.map((item) => item.id)).toEqual(['dane_ta_name_mismatch']);
  });

  it('TLSA records that are not DNSSEC-secure, without STARTTLS or a certificate: senders ignore them (RFC 7672 §2.2), a warning', async () => {
    const insecure: Authenticate = async () => ({ status: 'insecure', reason: 'no DS: test. is an unsigned delegation' });
    const plain = await checkDane(ctx, hostOf(3, 1, 1), null, { starttlsOffered: false, authenticate: insecure });
    expect(plain.verdict).toBe('not-applicable');
    expect(plain.findings.find((item) => item.id === 'dane_starttls_missing')).toMatchObject({ severity: 'warning', message: expect.stringContaining('senders ignore records without DNSSEC') });
    const uncertified = await checkDane(ctx, hostOf(3, 1, 1), null, { starttlsOffered: true, authenticate: insecure });
    expect(uncertified.verdict).toBe('not-applicable');
    expect(uncertified.findings.find((item) => item.id === 'dane_no_certificate')).toMatchObject({ severity: 'warning' });
  });

  it('TLS offered but no certificate had', async () => {
    const result = await checkDane(ctx, hostOf(3, 1, 1), null, { starttlsOffered: true, ...trustingResolver() });
    expect(result.findings.map((item) => item.id)).toEqual(['dane_no_certificate']);
  });

  it('presentation-format records are what dig shows', () => {
    const parsed = parseTlsaText(`3 1 1 ${association(leaf.x509, 1, 1).toString('hex').toUpperCase()}`);
    expect(matchTlsa([parsed!], [leaf.x509])[0]!.matched).toBe(true);
  });
});
