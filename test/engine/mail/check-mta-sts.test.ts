/**
 * checkMtaSts() against a real DNS server and a real HTTPS server on
 * 127.0.0.1. The policy host's certificate (fixtures/mta-sts.pem, names
 * mta-sts.good.test, mta-sts.testing.test, mta-sts.badpolicy.test) is signed
 * by a test CA (fixtures/ca.pem) that the check is told to trust; both were
 * generated once with openssl for these tests.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicTargetGuard } from '../../../src/engine/connect-guard.js';
import { createEngineContext, type EngineContext } from '../../../src/engine/context.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import type { Finding } from '../../../src/engine/findings.js';
import { checkMtaSts, mxMatches, parsePolicy } from '../../../src/engine/mail/check-mta-sts.js';
import { startDnsServer, type DnsTestServer } from '../../support/dns-server.js';
import { MAIL_BEHAVIOURS, MTA_STS_ZONE } from './mail-zone.js';
import { closedPort } from '../../support/peers.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));
const CA = fixture('ca.pem');

const POLICIES: Record<string, { body: string; type?: string; status?: number }> = {
  'mta-sts.good.test': { body: 'version: STSv1\r\nmode: enforce\r\nmx: mx1.good.test\r\nmx: *.backup.good.test\r\nmax_age: 604800\r\n' },
  'mta-sts.testing.test': { body: 'version: STSv1\nmode: testing\nmx: other.example\nmax_age: 3600\nmode: enforce\n', type: 'text/html' },
  'mta-sts.badpolicy.test': { body: 'version: STSv2\nmode: strict\nmax_age: 99999999999\nnot a pair\n' },
};

let dns: DnsTestServer;
let web: https.Server;
let port: number;
let ctx: EngineContext;
let policyRequests = 0;

beforeAll(async () => {
  dns = await startDnsServer({ records: MTA_STS_ZONE, behaviours: MAIL_BEHAVIOURS });
  web = https.createServer({ key: fixture('mta-sts.key'), cert: fixture('mta-sts.pem') }, (request, response) => {
    policyRequests += 1;
    const host = (request.headers.host ?? '').split(':')[0]!;
    const policy = POLICIES[host];
    if (!policy || request.url !== '/.well-known/mta-sts.txt') {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(policy.status ?? 200, { 'content-type': policy.type ?? 'text/plain; charset=utf-8' }).end(policy.body);
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', () => resolve()));
  port = (web.address() as AddressInfo).port;
  ctx = createEngineContext({ resolvers: [parseResolverAddress(dns.address)], timeoutMs: 1000, dnsRetries: 0 });
});

afterAll(async () => {
  await ctx.close();
  await new Promise<void>((resolve) => web.close(() => resolve()));
  await dns.close();
});

const byId = (findings: readonly Finding[], id: string) => findings.find((item) => item.id === id);

describe('checkMtaSts', () => {
  it('fetches and parses an enforce policy over HTTPS, and checks every MX against it', async () => {
    const result = await checkMtaSts(ctx, 'good.test', { mxHosts: ['mx1.good.test', 'b1.backup.good.test', 'mx2.good.test'], fetch: { port, ca: CA } });
    expect(result).toMatchObject({
      kind: 'mta-sts',
      record: 'v=STSv1; id=20240101T000000',
      id: '20240101T000000',
      policy_url: 'https://mta-sts.good.test/.well-known/mta-sts.txt',
      policy: { version: 'STSv1', mode: 'enforce', max_age_seconds: 604800, mx: ['mx1.good.test', '*.backup.good.test'] },
      content_type: 'text/plain; charset=utf-8',
      policy_error: null,
    });
    expect(byId(result.findings, 'mta_sts_enforce')).toMatchObject({ severity: 'pass' });
    const uncovered = result.findings.filter((item) => item.id === 'mta_sts_mx_not_covered');
    expect(uncovered.map((item) => [item.severity, item.evidence?.host])).toEqual([['error', 'mx2.good.test']]);
  });

  it('warns about testing mode, a short max_age, a wrong Content-Type, and uncovered MX as warnings', async () => {
    const result = await checkMtaSts(ctx, 'testing.test', { mxHosts: ['mx.testing.test'], fetch: { port, ca: CA } });
    expect(result.policy?.mode).toBe('testing');
    expect(byId(result.findings, 'mta_sts_testing')).toMatchObject({ severity: 'info' });
    expect(byId(result.findings, 'mta_sts_max_age_short')).toMatchObject({ severity: 'warning' });
    expect(byId(result.findings, 'mta_sts_content_type')).toMatchObject({ severity: 'warning' });
    expect(byId(result.findings, 'mta_sts_mx_not_covered')).toMatchObject({ severity: 'warning' });
    // The policy gives mode twice: senders use the first (RFC 8461 §3.2), and the repetition is said.
    expect(byId(result.findings, 'mta_sts_policy_repeated_field')).toMatchObject({ severity: 'warning', evidence: { field: 'mode' } });
    expect(byId(result.findings, 'mta_sts_policy_invalid')).toBeUndefined();
  });

  it('lists every problem of an invalid policy', async () => {
    const result = await checkMtaSts(ctx, 'badpolicy.test', { fetch: { port, ca: CA } });
    const problems = result.findings.filter((item) => item.id === 'mta_sts_policy_invalid').map((item) => item.message);
    expect(problems.length).toBeGreaterThanOrEqual(4);
    expect(problems.join('\n')).toMatch(/version is "STSv2"[\s\S]*mode is "strict"[\s\S]*max_age[\s\S]*line 4/);
  });

  it('reports a certificate the policy host does not prove as a TLS failure', async () => {
    const untrusted = await checkMtaSts(ctx, 'good.test', { fetch: { port } });
    expect(untrusted.policy_error).toMatchObject({ code: 'tls' });
    expect(byId(untrusted.findings, 'mta_sts_policy_unavailable')).toMatchObject({ severity: 'error' });
    const wrongName = await checkMtaSts(ctx, 'untrusted.test', { fetch: { port, ca: CA } });
    expect(wrongName.policy_error).toMatchObject({ code: 'tls' });
  });

  it('reports a record without id, absence as info, and a refused connection as unreachable', async () => {
    const closed = await closedPort();
    expect(byId((await checkMtaSts(ctx, 'noid.test', { fetch: { port: closed, ca: CA } })).findings, 'mta_sts_record_invalid')).toMatchObject({ severity: 'error' });
    const refused = await checkMtaSts(ctx, 'noid.test', { fetch: { port: closed, ca: CA } });
    expect(refused.policy_error).toMatchObject({ code: 'unreachable' });
    expect(byId((await checkMtaSts(ctx, 'nothing.test')).findings, 'mta_sts_absent')).toMatchObject({ severity: 'info' });
    const two = await checkMtaSts(ctx, 'twosts.test');
    expect(two).toMatchObject({ record: null, policy_url: null });
    expect(byId(two.findings, 'mta_sts_multiple_records')).toMatchObject({ severity: 'error' });
  });
});

describe('checkMtaSts when DNS does not answer for the policy host', () => {
  it('leaves the policy unchecked (unknown), not unavailable as a problem of the domain: nothing was fetched', async () => {
    const result = await checkMtaSts(ctx, 'stsdown.test', { fetch: { port, ca: CA } });
    expect(result.policy_error).toMatchObject({ code: 'upstream', message: expect.stringContaining('SERVFAIL') });
    expect(byId(result.findings, 'mta_sts_policy_unavailable')).toMatchObject({ severity: 'unknown', evidence: { error: { code: 'upstream' } } });
  });
});

describe('checkMtaSts with the public-target connect guard (as the HTTP API runs it)', () => {
  it('refuses a policy host on a special-purpose address without connecting to it', async () => {
    const before = policyRequests;
    const result = await checkMtaSts({ ...ctx, connectGuard: createPublicTargetGuard() }, 'good.test', { fetch: { port, ca: CA } });
    expect(result.policy_error).toMatchObject({ code: 'forbidden' });
    expect(result.policy_error?.message).toMatch(/MTA-STS policy host mta-sts\.good\.test resolves to 127\.0\.0\.1, which is loopback/);
    expect(byId(result.findings, 'mta_sts_policy_unavailable')).toMatchObject({ severity: 'error' });
    expect(policyRequests).toBe(before);
    const allowed = await checkMtaSts(ctx, 'good.test', { fetch: { port, ca: CA } });
    expect(allowed.policy_error).toBeNull();
    expect(policyRequests).toBe(before + 1);
  });
});

describe('MTA-STS helpers', () => {
  it('matches a wildcard against exactly one label', () => {
    expect(mxMatches('*.example.com', 'mx.example.com')).toBe(true);
    expect(mxMatches('*.example.com', 'a.mx.example.com')).toBe(false);
    expect(mxMatches('*.example.com', 'example.com')).toBe(false);
    expect(mxMatches('MX.example.com.', 'mx.example.com')).toBe(true);
  });

  it('needs version, mode, max_age, and an mx for enforce', () => {
    expect(parsePolicy('version: STSv1\nmode: enforce\nmax_age: 86400\n').problems).toEqual(['mode enforce needs at least one mx field']);
    expect(parsePolicy('mode: none\n').problems).toEqual(['the version field is missing', 'the max_age field is missing']);
  });
});
