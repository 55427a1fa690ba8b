/** checkDmarc() and checkTlsRpt() against a real DNS server on 127.0.0.1. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext, type EngineContext } from '../../../src/engine/context.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import type { Finding } from '../../../src/engine/findings.js';
import { checkDmarc } from '../../../src/engine/mail/check-dmarc.js';
import { checkTlsRpt } from '../../../src/engine/mail/check-tls-rpt.js';
import { startDnsServer, type DnsTestServer } from '../../support/dns-server.js';
import { DMARC_ZONE, MAIL_BEHAVIOURS, MTA_STS_ZONE } from './mail-zone.js';

let server: DnsTestServer;
let ctx: EngineContext;

beforeAll(async () => {
  server = await startDnsServer({ records: [...DMARC_ZONE, ...MTA_STS_ZONE], behaviours: MAIL_BEHAVIOURS });
  ctx = createEngineContext({ resolvers: [parseResolverAddress(server.address)], timeoutMs: 1000, dnsRetries: 0 });
});

afterAll(async () => {
  await ctx.close();
  await server.close();
});

const byId = (findings: readonly Finding[], id: string) => findings.find((item) => item.id === id);
const ids = (findings: readonly Finding[]) => findings.map((item) => item.id);

describe('checkDmarc', () => {
  it('parses an enforcing record with its tags and effective values', async () => {
    const result = await checkDmarc(ctx, 'good.test');
    expect(result).toMatchObject({
      kind: 'dmarc',
      location: '_dmarc.good.test',
      policy_domain: 'good.test',
      inherited: false,
      record: 'v=DMARC1; p=reject; rua=mailto:dmarc@good.test; adkim=s; aspf=r',
      tags: { v: 'DMARC1', p: 'reject', rua: 'mailto:dmarc@good.test', adkim: 's', aspf: 'r', sp: null, pct: null },
      policy: 'reject',
      percent: 100,
      alignment_dkim: 's',
      alignment_spf: 'r',
      report_destinations: [{ tag: 'rua', uri: 'mailto:dmarc@good.test', domain: 'good.test', external: false, authorized: null, error: null }],
    });
    expect(result.findings.every((item) => item.severity === 'pass')).toBe(true);
    expect(ids(result.findings)).toEqual(['dmarc_record_found', 'dmarc_policy_enforced']);
  });

  it('checks that external report domains authorize the reports', async () => {
    const result = await checkDmarc(ctx, 'monitor.test');
    expect(byId(result.findings, 'dmarc_policy_none')).toMatchObject({ severity: 'warning' });
    expect(result.report_destinations.map((item) => [item.tag, item.domain, item.external, item.authorized])).toEqual([
      ['rua', 'reports.example', true, true],
      ['rua', 'unauthorized.example', true, false],
      ['ruf', 'monitor.test', false, null],
    ]);
    expect(byId(result.findings, 'dmarc_report_authorized')).toMatchObject({ severity: 'pass' });
    expect(byId(result.findings, 'dmarc_report_unauthorized')).toMatchObject({
      severity: 'warning',
      rfc: 'RFC 7489 §7.1',
      evidence: { name: 'monitor.test._report._dmarc.unauthorized.example' },
    });
  });

  it('reports every invalid tag value, unknown tags and a bad report URI', async () => {
    const result = await checkDmarc(ctx, 'bad.test');
    expect(result.policy).toBeNull();
    for (const id of ['dmarc_policy_invalid', 'dmarc_pct_invalid', 'dmarc_alignment_invalid', 'dmarc_fo_invalid', 'dmarc_uri_invalid']) {
      expect(byId(result.findings, id), id).toMatchObject({ severity: 'error' });
    }
    expect(byId(result.findings, 'dmarc_unknown_tag')).toMatchObject({ severity: 'warning', evidence: { tag: 'foo' } });
  });

  it('reports duplicate tags, malformed parts, bad sp/rf/ri, non-mailto URIs and p out of place', async () => {
    const messy = await checkDmarc(ctx, 'messy.test');
    for (const id of ['dmarc_duplicate_tag', 'dmarc_syntax_error', 'dmarc_subdomain_policy_invalid', 'dmarc_rf_invalid', 'dmarc_ri_invalid']) {
      expect(byId(messy.findings, id), id).toMatchObject({ severity: 'error' });
    }
    expect(byId(messy.findings, 'dmarc_uri_unsupported')).toMatchObject({ severity: 'warning' });
    expect(messy.tags.p).toBe('none');
    const late = await checkDmarc(ctx, 'late.test');
    // RFC 9989 lets p come anywhere after v; RFC 7489's grammar put it second.
    expect(byId(late.findings, 'dmarc_policy_not_second')).toMatchObject({ severity: 'info' });
    expect(late.report_destinations[1]).toMatchObject({ domain: 'silentreport.example', authorized: null, error: { code: 'timeout' } });
    expect(byId(late.findings, 'dmarc_report_authorization_failed')).toMatchObject({ severity: 'unknown', evidence: { error: { code: 'timeout' } } });
  });

  it('treats two records as no policy, and a missing p as an error', async () => {
    const two = await checkDmarc(ctx, 'two.test');
    expect(two).toMatchObject({ record: null, policy: null });
    expect(two.records).toHaveLength(2);
    expect(byId(two.findings, 'dmarc_multiple_records')).toMatchObject({ severity: 'error' });
    const nop = await checkDmarc(ctx, 'nop.test');
    expect(byId(nop.findings, 'dmarc_policy_missing')).toMatchObject({ severity: 'error' });
    expect(nop.policy).toBe('none');
  });

  it('warns about a partial pct and sp=none', async () => {
    const result = await checkDmarc(ctx, 'partial.test');
    expect(result).toMatchObject({ policy: 'quarantine', percent: 25 });
    expect(byId(result.findings, 'dmarc_pct_partial')).toMatchObject({ severity: 'warning' });
    expect(byId(result.findings, 'dmarc_subdomain_policy_none')).toMatchObject({ severity: 'warning' });
    expect(byId(result.findings, 'dmarc_no_rua')).toBeUndefined();
  });

  it('ignores a record whose version is not first, and says why', async () => {
    const result = await checkDmarc(ctx, 'order.test');
    expect(result.record).toBeNull();
    expect(ids(result.findings)).toEqual(['dmarc_version_not_first', 'dmarc_no_record']);
  });

  it('inherits the policy of a parent domain through the tree walk, with its sp', async () => {
    const result = await checkDmarc(ctx, 'mail.deep.parent.test');
    expect(result).toMatchObject({ location: '_dmarc.parent.test', policy_domain: 'parent.test', inherited: true, policy: 'quarantine' });
    expect(byId(result.findings, 'dmarc_inherited')).toMatchObject({ severity: 'info' });
    expect(byId(result.findings, 'dmarc_policy_enforced')).toBeDefined();
  });

  it('says "no record" only after every lookup answered, and throws on a timeout', async () => {
    const none = await checkDmarc(ctx, 'sub.nothing.test');
    // The DNS tree walk goes up to the top label (RFC 9989 §4.10), where a public suffix may publish a policy.
    expect(byId(none.findings, 'dmarc_no_record')).toMatchObject({ severity: 'warning', evidence: { asked: ['_dmarc.sub.nothing.test', '_dmarc.nothing.test', '_dmarc.test'] } });
    await expect(checkDmarc(ctx, 'slowdmarc.test')).rejects.toMatchObject({ code: 'timeout' });
  });
});

describe('checkDmarc by RFC 9989', () => {
  it('reads np, t and psd: t=y applies one level below, np a name that does not exist, sp one that does', async () => {
    const own = await checkDmarc(ctx, 'rfc9989.test');
    expect(own).toMatchObject({ policy: 'quarantine', organizational_domain: 'rfc9989.test', tags: { np: 'reject', t: 'y', psd: 'n' } });
    expect(byId(own.findings, 'dmarc_testing')).toMatchObject({ severity: 'warning', evidence: { policy: 'quarantine' } });
    expect(byId(own.findings, 'dmarc_unknown_tag')).toBeUndefined();
    const existing = await checkDmarc(ctx, 'real.rfc9989.test');
    expect(existing).toMatchObject({ inherited: true, policy_domain: 'rfc9989.test', organizational_domain: 'rfc9989.test', policy: 'none' });
    const ghost = await checkDmarc(ctx, 'ghost.rfc9989.test');
    expect(ghost).toMatchObject({ inherited: true, policy: 'quarantine' });
  });

  it('says the policy is unknown when the existence lookup np depends on fails', async () => {
    const result = await checkDmarc(ctx, 'ghostfail.rfc9989.test');
    expect(result).toMatchObject({ inherited: true, policy: null });
    expect(byId(result.findings, 'dmarc_existence_unknown')).toMatchObject({ severity: 'unknown' });
    expect(byId(result.findings, 'dmarc_policy_enforced')).toBeUndefined();
  });

  it('applies a record with an invalid np as p=none (it has a report address), and names each bad value', async () => {
    const result = await checkDmarc(ctx, 'badtags.test');
    expect(result.policy).toBe('none');
    for (const id of ['dmarc_np_invalid', 'dmarc_psd_invalid', 'dmarc_t_invalid']) expect(byId(result.findings, id), id).toMatchObject({ severity: 'error' });
    expect(byId(result.findings, 'dmarc_np_invalid')!.message).toContain('p=none');
  });

  it("takes a public suffix domain's policy, with the Organizational Domain one label below it", async () => {
    const result = await checkDmarc(ctx, 'mail.shop.psd9989');
    expect(result).toMatchObject({ location: '_dmarc.psd9989', policy_domain: 'psd9989', organizational_domain: 'shop.psd9989', inherited: true, policy: 'quarantine' });
  });

  it('keeps the domain\'s own policy when the walk above it fails, and says the Organizational Domain is unknown', async () => {
    const result = await checkDmarc(ctx, 'own.brokenwalk');
    expect(result).toMatchObject({ policy: 'reject', policy_domain: 'own.brokenwalk', organizational_domain: null });
    expect(byId(result.findings, 'dmarc_organizational_domain_unknown')).toMatchObject({ severity: 'unknown' });
    await expect(checkDmarc(ctx, 'sub.brokenwalk')).rejects.toMatchObject({ code: 'upstream' });
  });
});

describe('checkTlsRpt', () => {
  it('reads the report destinations', async () => {
    const result = await checkTlsRpt(ctx, 'good.test');
    expect(result).toMatchObject({ kind: 'tls-rpt', record: 'v=TLSRPTv1; rua=mailto:tlsrpt@good.test,https://reports.good.test/tls', rua: ['mailto:tlsrpt@good.test', 'https://reports.good.test/tls'] });
    expect(ids(result.findings)).toEqual(['tls_rpt_found']);
  });

  it('reports absence as info, a record without rua or two records as errors', async () => {
    expect(byId((await checkTlsRpt(ctx, 'nothing.test')).findings, 'tls_rpt_absent')).toMatchObject({ severity: 'info' });
    expect(byId((await checkTlsRpt(ctx, 'norua.test')).findings, 'tls_rpt_invalid')).toMatchObject({ severity: 'error' });
    expect(byId((await checkTlsRpt(ctx, 'two.test')).findings, 'tls_rpt_multiple_records')).toMatchObject({ severity: 'error' });
  });
});
