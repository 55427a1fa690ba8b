/**
 * The DNSSEC validator against zones signed at test time by BIND's
 * dnssec-signzone and served by NSD, each verdict compared with BIND's delv
 * given the same trust anchor. Needs nsd, bind9-utils and delv; skipped,
 * with a warning, when one is missing.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { findExecutable } from '../../support/peers.js';
import { serveSignedZones, type ServedSignedZones, type SignedZones } from '../../support/signed-zones.js';
import { createEngineContext, type EngineContext } from '../../../src/engine/context.js';
import { createDnsTransport } from '../../../src/engine/dns/dns-transport.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import { toDnsAnswer } from '../../../src/engine/dns/dns-records.js';
import type { DnsRecordType } from '../../../src/engine/dns/dns-type.js';
import { resolveDns } from '../../../src/engine/dns/resolve-dns.js';
import { presentDnsAnswer } from '../../../src/output/dns-presentation.js';
import { parseTrustAnchors, type TrustAnchor } from '../../../src/engine/dns/dnssec/trust-anchor.js';
import { dnssecStatusOf, validateRrset, type DnssecStatus } from '../../../src/engine/dns/dnssec/validate.js';

const run = promisify(execFile);
const TOOLS = { nsd: findExecutable('nsd'), keygen: findExecutable('dnssec-keygen'), signzone: findExecutable('dnssec-signzone'), delv: findExecutable('delv') };
const missing = Object.entries(TOOLS).filter(([, path]) => !path).map(([name]) => name);
if (missing.length > 0) console.warn(`SKIPPING test/engine/dns/dnssec-validate.test.ts: ${missing.join(', ')} not found (Debian nsd, bind9-utils, bind9-dnsutils)`);

describe.skipIf(missing.length > 0)('DNSSEC validation of zones signed by dnssec-signzone, compared with delv', () => {
  let zones: SignedZones;
  let served: ServedSignedZones;
  let ctx: EngineContext;
  let anchor: TrustAnchor;
  let delvAnchorPath: string;

  beforeAll(async () => {
    served = await serveSignedZones(TOOLS.nsd!);
    zones = served.zones;
    ctx = createEngineContext({ resolvers: [parseResolverAddress(`127.0.0.1:${served.port}`)], timeoutMs: 2000, dnsRetries: 0 });
    anchor = parseTrustAnchors(zones.anchorKeyFile);
    delvAnchorPath = join(zones.dir, 'delv-anchor.conf');
    await writeFile(delvAnchorPath, zones.delvAnchor);
  }, 60_000);

  afterAll(async () => {
    await ctx?.close();
    await served?.stop();
  });

  /** delv's verdict on the same question, mapped to the four statuses. */
  async function delv(name: string, type: string): Promise<DnssecStatus> {
    const { stdout, stderr } = await run(TOOLS.delv!, ['@127.0.0.1', '-p', String(served.port), '-a', delvAnchorPath, '+root=test.', name, type]).catch(
      (error: { stdout: string; stderr: string }) => error,
    );
    const text = `${stdout}\n${stderr}`;
    // A proven NXDOMAIN or NODATA is "resolution failed: ncache ..." and then "negative response, fully validated";
    // a CNAME may validate ("fully validated") while its target fails ("resolution failed: RRSIG failed to verify").
    if (/negative response, fully validated/.test(text)) return 'secure';
    if (/negative response, unsigned answer/.test(text)) return 'insecure';
    if (/resolution failed|validation failed|broken trust chain/.test(text)) return 'bogus';
    if (/fully validated/.test(text)) return 'secure';
    if (/unsigned answer/.test(text)) return 'insecure';
    return 'indeterminate';
  }

  // [name, type, netintel's verdict, its reason, what the case is, delv's verdict where it differs on purpose]
  const cases: Array<[string, string, DnssecStatus, RegExp | null, string, DnssecStatus?]> = [
    ['www.test', 'A', 'secure', null, 'ECDSA P-256 at the anchor zone'],
    ['www.child.test', 'A', 'secure', null, 'RSA/SHA-256 below a DS'],
    ['www.ed.test', 'A', 'secure', null, 'Ed25519'],
    ['www.p384.test', 'A', 'secure', null, 'ECDSA P-384'],
    ['mail.child.test', 'MX', 'secure', null, 'a name inside the rdata, lowercased for signing'],
    ['a.wild.child.test', 'TXT', 'secure', null, 'a wildcard expansion with its NSEC3 proof'],
    ['nx.child.test', 'A', 'secure', null, 'NSEC3 NXDOMAIN'],
    ['www.child.test', 'TXT', 'secure', null, 'NSEC3 NODATA'],
    ['nope.test', 'A', 'secure', null, 'NSEC NXDOMAIN'],
    ['www.test', 'MX', 'secure', null, 'NSEC NODATA'],
    ['www.nsec3.test', 'A', 'secure', null, 'NSEC3 with salt and iterations'],
    // RFC 5155 §9.2: BIND calls these secure; netintel, as Unbound, does not (docs/commands/dns.md, `nsec3-opt-out-denial`).
    ['nx.nsec3.test', 'A', 'insecure', /^NSEC3 opt-out: nx\.nsec3\.test\. is in an opt-out span, where unsigned delegations may exist unseen \(RFC 5155 §9\.2\)$/, 'NXDOMAIN whose next closer name is in an opt-out span', 'secure'],
    ['x.wild.nsec3.test', 'A', 'insecure', /^wildcard answer: NSEC3 opt-out: x\.wild\.nsec3\.test\. is in an opt-out span/, 'a wildcard answer whose next closer name is in an opt-out span'],
    ['www.iter.test', 'A', 'secure', null, 'a signed answer from a zone whose NSEC3 has 200 iterations'],
    ['x.wild.iter.test', 'A', 'insecure', /^wildcard answer: NSEC3 with 200 iterations, above the limit \(RFC 9276 §3\.2\)$/, 'a wildcard answer proven by NSEC3 with 200 iterations'],
    ['nx.iter.test', 'A', 'insecure', /^NSEC3 with 200 iterations, above the limit \(RFC 9276 §3\.2\)$/, 'NXDOMAIN proven by NSEC3 with 200 iterations'],
    ['a.w.test', 'TXT', 'secure', null, 'a wildcard expansion with its NSEC proof'],
    ['a.w.test', 'A', 'secure', null, 'wildcard NODATA with NSEC'],
    ['a.wild.child.test', 'A', 'secure', null, 'wildcard NODATA with NSEC3'],
    ['www.bogus.test', 'A', 'bogus', /^bad signature on www\.bogus\.test\. A$/, 'a tampered RRSIG'],
    ['www.expired.test', 'A', 'bogus', /^expired signature \(2020-02-01T00:00:00Z\) on www\.expired\.test\. A$/, 'an expired RRSIG'],
    ['www.wrongdigest.test', 'A', 'bogus', /^digest mismatch: DS (\d+) \(digest type 2\) is not the digest of DNSKEY \1 of wrongdigest\.test\.$/, 'a DS with the right key tag and a wrong digest'],
    ['cname-ed.child.test', 'A', 'secure', null, 'a CNAME into another signed zone, both validated'],
    ['cname-bogus.child.test', 'A', 'bogus', /^bad signature on www\.bogus\.test\. A$/, 'a signed CNAME to a bogus target'],
    ['www.unsigned.test', 'A', 'insecure', /unsigned\.test\. is an unsigned delegation/, 'an unsigned child, no DS proven by NSEC'],
    ['www.optout.nsec3.test', 'A', 'insecure', /^no DS: optout\.nsec3\.test\. may be an unsigned delegation \(NSEC3 opt-out span, RFC 5155 §6\)$/, 'an unsigned child under NSEC3 opt-out'],
  ];

  for (const [name, type, status, reason, what, delvSays] of cases) {
    it(`${name} ${type}: ${status} (${what}), ${delvSays ? `where delv says ${delvSays}` : 'as delv says'}`, async () => {
      const verdict = await validateRrset(ctx, name, type, { trustAnchors: anchor });
      expect({ status: verdict.status, reason: verdict.reason }).toEqual({ status, reason: reason === null ? null : expect.stringMatching(reason) });
      expect(verdict.chain[0]).toMatchObject({ zone: 'test.', signer: null, status: 'secure' });
      expect(await delv(name, type)).toBe(delvSays ?? status);
    });
  }

  it('reports the chain: the anchor zone, then the child with its DS and keys', async () => {
    const verdict = await validateRrset(ctx, 'www.child.test', 'A', { trustAnchors: anchor });
    expect(verdict.chain.map((link) => [link.zone, link.signer, link.status])).toEqual([
      ['test.', null, 'secure'],
      ['child.test.', 'test.', 'secure'],
    ]);
    const child = verdict.chain[1]!;
    expect(child.ds).toEqual([expect.objectContaining({ algorithm: 8, digest_type: 2 })]);
    expect(child.dnskeys.map((k) => k.flags).sort()).toEqual([256, 257]);
    expect(child.dnskeys.find((k) => k.flags === 257)!.tag).toBe(child.ds[0]!.key_tag);
    expect(verdict.answer.records.map((r) => r.type)).toEqual(['A', 'RRSIG']);
    expect(verdict.answer.rcode).toBe('NOERROR');
    // NSD is not a validating resolver: it never sets AD.
    expect(verdict.answer.authentic_data).toBe(false);
  });

  it('follows a CNAME into another zone and adds that zone to the chain', async () => {
    const verdict = await validateRrset(ctx, 'cname-ed.child.test', 'A', { trustAnchors: anchor });
    expect(verdict.status).toBe('secure');
    expect(verdict.chain.map((link) => link.zone)).toEqual(['test.', 'child.test.', 'ed.test.']);
    // The answer is what the server gave for the question: NSD adds the target's records from its other zone.
    expect(verdict.answer.records.map((r) => r.type)).toEqual(['CNAME', 'RRSIG', 'A', 'RRSIG']);
  });

  it('netintel dns --dnssec --trust-anchor gives each target its verdict, with findings, in ndjson', async () => {
    const anchorFile = join(zones.dir, 'anchor.key');
    await writeFile(anchorFile, zones.anchorKeyFile);
    const run = await runCli(['dns', 'www.child.test', 'www.bogus.test', 'www.unsigned.test', '--dnssec', '--trust-anchor', anchorFile, '--resolver', `127.0.0.1:${served.port}`, '--retries', '0', '-f', 'ndjson']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const records = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as { domain: string; answers: Array<{ type: string }>; dnssec: { status: string; findings: Array<{ id: string; severity: string }> } });
    expect(records.map((r) => [r.domain, r.dnssec.status, r.dnssec.findings.map((f) => `${f.id}:${f.severity}`)])).toEqual([
      ['www.child.test', 'secure', ['dnssec_secure:pass', 'dnssec_resolver_not_validating:info']],
      ['www.bogus.test', 'bogus', ['dnssec_bogus:error']],
      ['www.unsigned.test', 'insecure', ['dnssec_insecure:info']],
    ]);
    expect(records[0]!.answers.map((a) => a.type)).toEqual(['A', 'RRSIG']);
  });

  it('accepts the anchor as a DS record (dnssec-dsfromkey) as well as a DNSKEY', async () => {
    expect(await dnssecStatusOf(ctx, 'www.child.test', 'A', { trustAnchors: parseTrustAnchors(zones.anchorDs) })).toEqual({ status: 'secure', reason: null, error: null });
  });

  it('is bogus with a digest mismatch, not a key tag mismatch, when the anchor DS has the key tag of the zone key and another digest', async () => {
    const [tag, algorithm, digestType, digest] = zones.anchorDs.trim().split(/\s+/).slice(-4);
    const flipped = digest!.slice(0, -1) + (digest!.endsWith('0') ? '1' : '0');
    const wrong = parseTrustAnchors(`test. IN DS ${tag} ${algorithm} ${digestType} ${flipped}\n`);
    const verdict = await validateRrset(ctx, 'www.test', 'A', { trustAnchors: wrong });
    expect({ status: verdict.status, reason: verdict.reason }).toEqual({ status: 'bogus', reason: `digest mismatch: DS ${tag} (digest type 2) is not the digest of DNSKEY ${tag} of test.` });
  });

  it('is bogus with a key tag mismatch when the anchor is not the zone key', async () => {
    const wrong = parseTrustAnchors('test. IN DS 12345 13 2 0000000000000000000000000000000000000000000000000000000000000000\n');
    const verdict = await validateRrset(ctx, 'www.child.test', 'A', { trustAnchors: wrong });
    expect(verdict.status).toBe('bogus');
    expect(verdict.reason).toMatch(/^key tag mismatch: no DNSKEY of test\. matches DS 12345/);
  });

  it('judges signature times by the context clock: expired after, not yet valid before', async () => {
    const late = createEngineContext({ resolvers: ctx.resolvers, timeoutMs: 2000, dnsRetries: 0, now: () => new Date(Date.now() + 400 * 86400_000) });
    const early = createEngineContext({ resolvers: ctx.resolvers, timeoutMs: 2000, dnsRetries: 0, now: () => new Date(Date.now() - 400 * 86400_000) });
    try {
      expect((await dnssecStatusOf(late, 'www.child.test', 'A', { trustAnchors: anchor })).reason).toMatch(/^expired signature .* on test\. DNSKEY$/);
      expect((await dnssecStatusOf(early, 'www.child.test', 'A', { trustAnchors: anchor })).reason).toMatch(/^signature not yet valid .* on test\. DNSKEY$/);
    } finally {
      await Promise.all([late.close(), early.close()]);
    }
  });

  it('is indeterminate for a name outside the anchor, naming why', async () => {
    expect(await dnssecStatusOf(ctx, 'www.example', 'A', { trustAnchors: anchor })).toEqual({
      status: 'indeterminate',
      reason: 'no trust anchor: www.example. is outside test.',
      // Undecided by the data, not for want of an answer.
      error: null,
    });
  });
});

describe.skipIf(missing.length > 0 || !findExecutable('dig'))('DNSSEC, TLSA and SVCB records shown as dig shows them', () => {
  let zones: SignedZones;
  let served: ServedSignedZones;

  beforeAll(async () => {
    served = await serveSignedZones(TOOLS.nsd!);
    zones = served.zones;
  }, 60_000);

  afterAll(async () => {
    await served?.stop();
  });

  it.each<[string, DnsRecordType]>([
    ['test', 'DNSKEY'],
    ['child.test', 'DS'],
    ['www.child.test', 'RRSIG'],
    ['test', 'NSEC'],
    ['_25._tcp.www.child.test', 'TLSA'],
    ['_443._tcp.www.child.test', 'TLSA'],
    ['svc.child.test', 'HTTPS'],
    ['alias.child.test', 'SVCB'],
  ])('%s %s', async (name, type) => {
    const transport = createDnsTransport({ resolvers: [parseResolverAddress(`127.0.0.1:${served.port}`)], timeoutMs: 2000, retries: 0 });
    try {
      const [result] = await resolveDns(transport, { domain: name, types: [type] });
      const ours = result!.answers.filter((answer) => answer.type === type).map((answer) => presentDnsAnswer(answer)).sort();
      const { stdout } = await run(findExecutable('dig')!, ['@127.0.0.1', '-p', String(served.port), '+norecurse', '+noall', '+answer', name, type]);
      const digs = stdout
        .split('\n')
        .filter((line) => line.trim() !== '' && !line.startsWith(';'))
        .map((line) => line.trim().replace(/^(\S+)\s+(\d+)\s+(\S+)\s+(\S+)\s+/, '$1 $2 $3 $4 '))
        .sort();
      expect(ours.length).toBeGreaterThan(0);
      expect(ours).toEqual(digs);
    } finally {
      await transport.close();
    }
  });

  it('shows the NSEC3 records of a denial as dig does', async () => {
    const transport = createDnsTransport({ resolvers: [parseResolverAddress(`127.0.0.1:${served.port}`)], timeoutMs: 2000, retries: 0, dnssec: 'dnssec' });
    try {
      const exchange = await transport.query('nx.child.test', 'A');
      const ours = (exchange.response.authorities ?? [])
        .filter((rr) => rr.type === 'NSEC3')
        .map((rr) => presentDnsAnswer(toDnsAnswer(rr)!))
        .sort();
      const { stdout } = await run(findExecutable('dig')!, ['@127.0.0.1', '-p', String(served.port), '+norecurse', '+dnssec', '+noall', '+authority', 'nx.child.test', 'A']);
      const digs = stdout
        .split('\n')
        .filter((line) => line.split(/\s+/)[3] === 'NSEC3')
        .map((line) => line.trim().replace(/^(\S+)\s+(\d+)\s+(\S+)\s+(\S+)\s+/, '$1 $2 $3 $4 '))
        .sort();
      expect(ours.length).toBeGreaterThan(0);
      expect(ours).toEqual(digs);
    } finally {
      await transport.close();
    }
  });
});
