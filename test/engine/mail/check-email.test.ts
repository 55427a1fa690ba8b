/**
 * The e-mail report (form 1 and form 2) against a real DNS server and a
 * real SMTP server (smtp-server, with STARTTLS) on 127.0.0.1: the MX hosts
 * of the test zone resolve to 127.0.0.1 and the probes are pointed at the
 * SMTP server's port.
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';
import dnsPacket from 'dns-packet';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext, type EngineContext } from '../../../src/engine/context.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import { checkEmail, runEmailTests } from '../../../src/engine/mail/check-email.js';
import { presentMxHosts } from '../../../src/output/schemas/mx-schema.js';
import { startDnsServer, type DnsTestServer } from '../../support/dns-server.js';
import { testRootTrustAnchor } from '../../support/signed-root.js';
import { MAIL_BEHAVIOURS, MAIL_ZONE } from './mail-zone.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));

let dns: DnsTestServer;
let smtp: SMTPServer;
let smtpPort: number;
let closedPort: number;
let ctx: EngineContext;

beforeAll(async () => {
  dns = await startDnsServer({ records: MAIL_ZONE, behaviours: MAIL_BEHAVIOURS, signedRoot: true });
  smtp = new SMTPServer({ name: 'mx.mailhost.test', key: fixture('mta-sts.key'), cert: fixture('mta-sts.pem'), authOptional: true, disableReverseLookup: true, logger: false });
  smtp.on('error', () => {});
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
  smtpPort = (smtp.server.address() as net.AddressInfo).port;
  // A port with nothing listening: take one and give it back.
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  closedPort = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  ctx = createEngineContext({ resolvers: [parseResolverAddress(dns.address)], timeoutMs: 1500, dnsRetries: 0, now: () => new Date('2024-05-01T12:00:00Z') });
});

afterAll(async () => {
  await ctx.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
  await dns.close();
});

const smtpOptions = () => ({ port: smtpPort, greetingTimeoutMs: 2000 });
/** DNSSEC from the test root the DNS peers sign (signed-root.ts): the zone's names are unsigned. */
const ROOT = { trustAnchors: testRootTrustAnchor() };

describe('checkEmail, the general test (form 2)', () => {
  it('reports MX, SPF, DMARC, MTA-STS, TLS-RPT and SMTP with STARTTLS in one record of findings', async () => {
    const report = await checkEmail(ctx, 'mailhost.test', { smtp: smtpOptions(), ...ROOT });
    expect(report).toMatchObject({ kind: 'email', test: 'general', domain: 'mailhost.test', domain_unicode: 'mailhost.test', server: null, port: null, errors: [], checked_at: '2024-05-01T12:00:00.000Z' });
    expect(report.mx).toMatchObject({ kind: 'mx', status: 'mx', records: [{ exchange: 'mx.mailhost.test' }] });
    expect(report.spf).toMatchObject({ kind: 'spf', status: 'valid', lookups: 1 });
    expect(report.dmarc).toMatchObject({ kind: 'dmarc', policy: 'reject' });
    expect(report.mta_sts).toMatchObject({ kind: 'mta-sts', record: null });
    expect(report.tls_rpt).toMatchObject({ kind: 'tls-rpt', rua: ['mailto:tls@mailhost.test'] });
    expect(report.smtp).toHaveLength(1);
    const server = report.smtp![0]!;
    expect(server).toMatchObject({ host: 'mx.mailhost.test', preference: 10, port: smtpPort, address: '127.0.0.1', error: null });
    expect(server.probe).toMatchObject({ kind: 'smtp', connected: true, failure: null, banner: { code: 220 }, tls: { offered: true, established: true } });
    const ids = report.findings.map((item) => item.id);
    expect(ids).toEqual(expect.arrayContaining(['mx_records_found', 'mx_reserved_address', 'spf_record_found', 'dmarc_policy_enforced', 'mta_sts_absent', 'tls_rpt_found', 'smtp_tls_ok']));
    // Findings come check by check: MX first, SMTP last.
    expect(ids.indexOf('mx_records_found')).toBeLessThan(ids.indexOf('spf_record_found'));
    expect(ids.indexOf('tls_rpt_found')).toBeLessThan(ids.indexOf('smtp_tls_ok'));
    expect(report.findings.find((item) => item.id === 'smtp_tls_ok')!.evidence).toMatchObject({ host: 'mx.mailhost.test' });
    const total = report.summary.error + report.summary.warning + report.summary.unknown + report.summary.info + report.summary.pass;
    expect(total).toBe(report.findings.length);
    expect(report).toMatchObject({ checked: 'all', failure: null });
  });

  it('keeps a check that timed out apart: null result, an error entry and finding, the other checks still run', async () => {
    const report = await checkEmail(ctx, 'slowdmarc.test', { skipSmtp: true, ...ROOT });
    expect(report.dmarc).toBeNull();
    expect(report.errors).toEqual([{ check: 'dmarc', code: 'timeout', message: expect.stringContaining('_dmarc.slowdmarc.test') }]);
    // Nothing is known about DMARC: not an error of the domain.
    expect(report.findings.find((item) => item.id === 'dmarc_check_failed')).toMatchObject({ severity: 'unknown', evidence: { code: 'timeout' } });
    expect(report).toMatchObject({ checked: 'some', failure: { code: 'timeout', reason: 'DNS did not answer', message: report.errors[0]!.message } });
    expect(report.findings.some((item) => item.id === 'dmarc_no_record')).toBe(false);
    expect(report.mx?.status).toBe('mx');
    expect(report.spf?.status).toBe('valid');
    expect(report.smtp).toBeNull();
  });

  it('reports a mail server that refuses the connection as an SMTP error finding', async () => {
    const report = await checkEmail(ctx, 'closed.test', { smtp: { port: closedPort } });
    const server = report.smtp![0]!;
    expect(server.probe).toMatchObject({ connected: false, failure: { code: 'unreachable', stage: 'connect' } });
    expect(report.findings.some((item) => item.evidence?.host === 'mx.closed.test' && item.severity === 'error')).toBe(true);
  });

  it('counts a part of a check that could not run: an MX host whose lookup timed out leaves the report checked in part, not probed, with the failure', async () => {
    const report = await checkEmail(ctx, 'slowmx.test', { smtp: smtpOptions(), skipDnssec: true });
    expect(report.errors).toEqual([]);
    expect(report.mx?.records[0]).toMatchObject({ exchange: 'silentmx.test', error: { code: 'timeout' } });
    expect(report.findings.find((item) => item.id === 'mx_lookup_failed')).toMatchObject({ severity: 'unknown' });
    // The host's addresses are unknown, not absent: its SMTP server was not checked, which is not a finding about the domain.
    expect(report.smtp).toEqual([expect.objectContaining({ host: 'silentmx.test', address: null, probe: null, error: expect.objectContaining({ code: 'timeout' }) })]);
    expect(report.findings.find((item) => item.id === 'smtp_not_probed')).toMatchObject({ severity: 'unknown' });
    expect(report).toMatchObject({ checked: 'some', failure: { code: 'timeout', reason: 'DNS did not answer', message: expect.stringContaining('silentmx.test') } });
    expect(report.summary.unknown).toBe(report.findings.filter((item) => item.severity === 'unknown').length);
  });

  it('says when an MX host has no address to probe', async () => {
    const report = await checkEmail(ctx, 'noaddr.test', { smtp: smtpOptions() });
    expect(report.smtp).toEqual([expect.objectContaining({ host: 'missing.noaddr.test', address: null, probe: null, error: expect.objectContaining({ code: 'not_found' }) })]);
    expect(report.findings.find((item) => item.id === 'smtp_not_probed')).toMatchObject({ severity: 'warning' });
  });

  it('probes no server for a null MX', async () => {
    const report = await checkEmail(ctx, 'nullmx.test', { smtp: smtpOptions() });
    expect(report.mx?.status).toBe('null_mx');
    expect(report.smtp).toEqual([]);
  });
});

describe('checkEmail, one test (form 1)', () => {
  it('runs only the MX test, or only the SPF test', async () => {
    const mx = await checkEmail(ctx, 'good.test', { type: 'mx' });
    expect(mx).toMatchObject({ test: 'mx', spf: null, dmarc: null, mta_sts: null, tls_rpt: null, smtp: null });
    expect(mx.mx?.records).toHaveLength(2);
    expect(mx.findings.every((item) => item.id.startsWith('mx_'))).toBe(true);
    const spf = await checkEmail(ctx, 'over.test', { type: 'spf' });
    expect(spf).toMatchObject({ test: 'spf', mx: null, spf: { lookups: 12 } });
    expect(spf.summary.error).toBeGreaterThan(0);
  });

  it('tests one server given by name and port', async () => {
    const report = await checkEmail(ctx, null, { type: 'smtp', server: '127.0.0.1', port: smtpPort, smtp: { greetingTimeoutMs: 2000 } });
    expect(report).toMatchObject({ test: 'smtp', domain: null, server: '127.0.0.1', port: smtpPort, mx: null });
    expect(report.smtp).toHaveLength(1);
    expect(report.smtp![0]!.probe).toMatchObject({ connected: true, tls: { established: true } });
  });

  it('tests the MX hosts of a domain for --type smtp', async () => {
    const report = await checkEmail(ctx, 'mailhost.test', { type: 'smtp', smtp: smtpOptions() });
    expect(report).toMatchObject({ test: 'smtp', mx: null, spf: null });
    expect(report.smtp![0]!.host).toBe('mx.mailhost.test');
  });

  it('needs a domain or a server', async () => {
    await expect(checkEmail(ctx, null, { type: 'mx' })).rejects.toMatchObject({ code: 'usage' });
    await expect(checkEmail(ctx, 'not a domain', {})).rejects.toMatchObject({ code: 'invalid_input' });
  });
});

describe('runEmailTests (bulk)', () => {
  it('gives one outcome per domain in input order, failures included', async () => {
    const outcomes = await runEmailTests(ctx, ['over.test', 'bad name', 'good.test', 'nullmx.test'], { skipSmtp: true }, 4);
    expect(outcomes.map((outcome) => [outcome.query, outcome.ok])).toEqual([
      ['over.test', true],
      ['bad name', false],
      ['good.test', true],
      ['nullmx.test', true],
    ]);
    const failed = outcomes[1]!;
    expect(!failed.ok && failed.error.code).toBe('invalid_input');
  });
});

describe('checkEmail when checks cannot run', () => {
  it('gives a report with no verdict when DNS does not answer at all: checked none, every finding unknown, in check order', async () => {
    // A UDP port that takes queries and never answers.
    const { createSocket } = await import('node:dgram');
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const silent = createEngineContext({ resolvers: [parseResolverAddress(`127.0.0.1:${socket.address().port}`)], timeoutMs: 200, dnsRetries: 0 });
    try {
      const report = await checkEmail(silent, 'example.com', { skipSmtp: true });
      expect(report.errors.map((error) => [error.check, error.code])).toEqual([
        ['mx', 'timeout'],
        ['spf', 'timeout'],
        ['dmarc', 'timeout'],
        ['mta_sts', 'timeout'],
        ['tls_rpt', 'timeout'],
        ['dkim', 'timeout'],
        ['bimi', 'timeout'],
        ['dnssec', 'timeout'],
        ['dane', 'not_found'],
      ]);
      expect(report).toMatchObject({ checked: 'none', failure: { code: 'timeout', reason: 'DNS did not answer' }, dnssec: null, dane: null });
      expect(report.findings.map((item) => item.severity)).toEqual(report.errors.map(() => 'unknown'));
      expect(report.summary).toEqual({ error: 0, warning: 0, unknown: 9, info: 0, pass: 0 });
    } finally {
      await silent.close();
      await new Promise<void>((resolve) => socket.close(() => resolve()));
    }
  });

  it('leaves DNSSEC and DANE out with skipDnssec, and asks no DNSKEY or DS question', async () => {
    const before = dns.queries.length;
    const report = await checkEmail(ctx, 'mailhost.test', { skipSmtp: true, skipDnssec: true });
    expect(report).toMatchObject({ dnssec: null, dane: null, errors: [], checked: 'all' });
    expect(dns.queries.slice(before).filter((query) => ['DNSKEY', 'DS', 'TLSA'].includes(query.type))).toEqual([]);
  });

  it('calls DNSSEC unchecked, not undecided, when the root DNSKEY RRset gets no answer: the rest of the report stands (checked some)', async () => {
    const rootless = await startDnsServer({ records: MAIL_ZONE, behaviours: { ...MAIL_BEHAVIOURS, '.': 'silent' } });
    const run = createEngineContext({ resolvers: [parseResolverAddress(rootless.address)], timeoutMs: 300, dnsRetries: 0 });
    try {
      const report = await checkEmail(run, 'mailhost.test', { skipSmtp: true });
      expect(report.errors).toEqual([{ check: 'dnssec', code: 'timeout', message: expect.stringContaining('. DNSKEY') }]);
      expect(report).toMatchObject({ checked: 'some', failure: { code: 'timeout' }, dnssec: null, mx: { status: 'mx' }, spf: { status: 'valid' } });
      expect(report.findings.find((item) => item.id === 'dnssec_check_failed')).toMatchObject({ severity: 'unknown' });
      expect(report.findings.some((item) => item.id.endsWith('_indeterminate'))).toBe(false);
    } finally {
      await run.close();
      await rootless.close();
    }
  });

  it('names the failure of an MX host TLSA lookup that got SERVFAIL: DANE checked in part, with the code and the lookup', async () => {
    const tlsaDown = await startDnsServer({ records: MAIL_ZONE, behaviours: { ...MAIL_BEHAVIOURS, '_25._tcp.mx.mailhost.test': 'servfail' }, signedRoot: true });
    const run = createEngineContext({ resolvers: [parseResolverAddress(tlsaDown.address)], timeoutMs: 1500, dnsRetries: 0 });
    try {
      const report = await checkEmail(run, 'mailhost.test', { skipSmtp: true, ...ROOT });
      const dane = report.dane![0]!;
      expect(dane.tlsa).toMatchObject({ status: 'failed', error: { code: 'upstream', message: expect.stringContaining('SERVFAIL') } });
      expect(dane.findings.find((item) => item.id === 'dane_tlsa_lookup_failed')).toMatchObject({ severity: 'unknown', evidence: { error: dane.tlsa.error } });
      expect(report).toMatchObject({ checked: 'some', failure: { code: 'upstream', reason: 'DNS refused or gave no usable answer', message: dane.tlsa.error!.message } });
    } finally {
      await run.close();
      await tlsaDown.close();
    }
  });

  it('says DNSSEC could not be checked, not "indeterminate", when the resolver passes no DNSSEC records (RFC 4035 §4.3)', async () => {
    const stripping = await startDnsServer({ records: MAIL_ZONE, behaviours: MAIL_BEHAVIOURS });
    const run = createEngineContext({ resolvers: [parseResolverAddress(stripping.address)], timeoutMs: 1500, dnsRetries: 0 });
    try {
      const report = await checkEmail(run, 'mailhost.test', { skipSmtp: true, ...ROOT });
      // Not one RRset could be validated: the DNSSEC check could not run.
      expect(report.dnssec).toBeNull();
      expect(report.errors).toEqual([{ check: 'dnssec', code: 'upstream', message: expect.stringMatching(/gave no DNSKEY RRset for the trust anchor \.: it does not pass DNSSEC records on/) }]);
      expect(report).toMatchObject({ checked: 'some', failure: { code: 'upstream', reason: 'DNS refused or gave no usable answer' } });
      expect(report.findings.find((item) => item.id === 'dnssec_check_failed')).toMatchObject({ severity: 'unknown' });
      expect(report.findings.some((item) => item.id.endsWith('_indeterminate'))).toBe(false);
    } finally {
      await run.close();
      await stripping.close();
    }
  });
});

describe('checkEmail: an MX host one address family of which could not be resolved', () => {
  it('probes the addresses that answered and says the others are unknown, where the whole host was left unchecked before', async () => {
    // AAAA questions for mx.halfmx.test get SERVFAIL; everything else is answered from the zone.
    const own = await startDnsServer({
      records: [
        { name: 'halfmx.test', type: 'MX', data: { preference: 10, exchange: 'mx.halfmx.test' } },
        { name: 'mx.halfmx.test', type: 'A', data: '127.0.0.1' },
        { name: 'nonemx.test', type: 'MX', data: { preference: 10, exchange: 'mx.nonemx.test' } },
        { name: 'mx.nonemx.test', type: 'TXT', data: 'no address' },
      ],
      script: (query) => {
        const question = query.questions![0]!;
        if (question.type !== 'AAAA' || !/^mx\.(half|none)mx\.test$/i.test(question.name)) return undefined;
        return [{ message: dnsPacket.encode({ id: query.id, type: 'response', flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | 2, questions: query.questions }) }];
      },
    });
    const ownCtx = createEngineContext({ resolvers: [parseResolverAddress(own.address)], timeoutMs: 1500, dnsRetries: 0 });
    try {
      const report = await checkEmail(ownCtx, 'halfmx.test', { smtp: smtpOptions(), skipDnssec: true });
      expect(report.mx?.records[0]).toMatchObject({ exchange: 'mx.halfmx.test', addresses: [{ address: '127.0.0.1' }], error: { code: 'upstream' } });
      expect(report.findings.find((item) => item.id === 'mx_lookup_failed')).toMatchObject({
        severity: 'unknown',
        message: expect.stringContaining('Could not resolve all the addresses of the MX host mx.halfmx.test'),
      });
      expect(presentMxHosts(report.mx!.records)).toMatch(/^10 mx\.halfmx\.test -> 127\.0\.0\.1 \(.*\); others: lookup failed: upstream$/);
      // The IPv4 address was probed: the SMTP check ran on what could be learnt.
      expect(report.smtp).toEqual([expect.objectContaining({ host: 'mx.halfmx.test', address: '127.0.0.1', error: null })]);
      expect(report.smtp![0]!.probe).toMatchObject({ connected: true });
      // The AAAA half is still a part that could not run.
      expect(report).toMatchObject({ checked: 'some' });

      // Nothing learnt: the host stays unknown as a whole, not "no address".
      const none = await checkEmail(ownCtx, 'nonemx.test', { smtp: smtpOptions(), skipDnssec: true });
      expect(none.mx?.records[0]).toMatchObject({ exchange: 'mx.nonemx.test', addresses: [], error: { code: 'upstream' } });
      expect(none.findings.find((item) => item.id === 'mx_lookup_failed')?.message).toContain('Could not resolve the MX host mx.nonemx.test');
      expect(none.findings.find((item) => item.id === 'mx_no_address')).toBeUndefined();
      expect(none.smtp).toEqual([expect.objectContaining({ host: 'mx.nonemx.test', address: null, probe: null })]);
    } finally {
      await ownCtx.close();
      await own.close();
    }
  });
});
