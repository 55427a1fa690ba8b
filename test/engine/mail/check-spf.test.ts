/**
 * checkSpf() and check_host() against a real DNS server on 127.0.0.1
 * serving the SPF zone of mail-zone.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext, type EngineContext } from '../../../src/engine/context.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import type { Finding } from '../../../src/engine/findings.js';
import { parseIpAddress } from '../../../src/engine/address/ip-address.js';
import { checkSpf } from '../../../src/engine/mail/check-spf.js';
import { createMailDns } from '../../../src/engine/mail/mail-dns.js';
import { evaluateSpf } from '../../../src/engine/mail/spf-evaluate.js';
import { NetintelError } from '../../../src/errors.js';
import { buildZone, startZoneServer } from '../../../scripts/conformance-spf.js';
import { startDnsServer, type DnsTestServer } from '../../support/dns-server.js';
import { MAIL_BEHAVIOURS, SPF_ZONE } from './mail-zone.js';

let server: DnsTestServer;
let ctx: EngineContext;

beforeAll(async () => {
  server = await startDnsServer({ records: SPF_ZONE, behaviours: MAIL_BEHAVIOURS });
  ctx = createEngineContext({ resolvers: [parseResolverAddress(server.address)], timeoutMs: 1000, dnsRetries: 0, now: () => new Date('2024-01-01T00:00:00Z') });
});

afterAll(async () => {
  await ctx.close();
  await server.close();
});

const ids = (findings: readonly Finding[]) => findings.map((item) => item.id);
const byId = (findings: readonly Finding[], id: string) => findings.find((item) => item.id === id);

describe('checkSpf: the record and its tree', () => {
  it('finds the one record among other TXT records, walks the include and counts lookups per node', async () => {
    const result = await checkSpf(ctx, 'good.test');
    expect(result).toMatchObject({
      kind: 'spf',
      domain: 'good.test',
      status: 'valid',
      record: 'v=spf1 ip4:192.0.2.0/24 include:_spf.good.test -all',
      records: ['v=spf1 ip4:192.0.2.0/24 include:_spf.good.test -all'],
      lookups: 2,
      lookup_limit: 10,
      void_lookups: 0,
      evaluation: null,
    });
    expect(result.tree).toMatchObject({
      domain: 'good.test',
      via: null,
      status: 'ok',
      lookups: 1,
      total_lookups: 2,
      children: [{ domain: '_spf.good.test', via: 'include:_spf.good.test', status: 'ok', lookups: 1, total_lookups: 1, children: [] }],
    });
    expect(ids(result.findings)).toEqual(expect.arrayContaining(['spf_record_found', 'spf_lookup_count', 'spf_fail_all']));
    expect(result.findings.every((item) => item.severity === 'pass')).toBe(true);
    expect(result.terms?.map((term) => term.text)).toEqual(['ip4:192.0.2.0/24', 'include:_spf.good.test', '-all']);
  });

  it('counts lookups across nested includes and reports the limit with each record\'s share', async () => {
    const result = await checkSpf(ctx, 'over.test');
    expect(result.lookups).toBe(12);
    expect(result.status).toBe('permerror');
    const limit = byId(result.findings, 'spf_lookup_limit')!;
    expect(limit).toMatchObject({ severity: 'error', rfc: 'RFC 7208 §4.6.4' });
    expect(limit.message).toContain('12 DNS lookups');
    expect(limit.evidence!.per_record).toEqual([
      { domain: 'over.test', lookups: 1 },
      { domain: 'n1.over.test', lookups: 3 },
      { domain: 'n2.over.test', lookups: 4 },
      { domain: 'n3.over.test', lookups: 4 },
    ]);
    expect(result.tree!.children[0]!.children[0]!.total_lookups).toBe(8);
  });

  it('counts void lookups: over two is an error, up to two a warning', async () => {
    const over = await checkSpf(ctx, 'void.test');
    expect(over.void_lookups).toBe(3);
    expect(byId(over.findings, 'spf_void_lookup_limit')).toMatchObject({ severity: 'error' });
    expect(over.status).toBe('permerror');
    const at = await checkSpf(ctx, 'void2.test');
    expect(at.void_lookups).toBe(2);
    expect(byId(at.findings, 'spf_void_lookup')).toMatchObject({ severity: 'warning' });
    expect(at.status).toBe('valid');
  });

  it('detects an include loop and stops walking it', async () => {
    const result = await checkSpf(ctx, 'loop.test');
    expect(byId(result.findings, 'spf_include_loop')).toMatchObject({ severity: 'error', evidence: { chain: ['loop.test', 'loop2.test', 'loop.test'] } });
    expect(result.tree!.children[0]!.children[0]).toMatchObject({ domain: 'loop.test', status: 'loop' });
    expect(result.status).toBe('permerror');
  });

  it('reports two records as a permerror with both records', async () => {
    const result = await checkSpf(ctx, 'two.test');
    expect(result.record).toBeNull();
    expect(result.records).toHaveLength(2);
    expect(byId(result.findings, 'spf_multiple_records')).toMatchObject({ severity: 'error', rfc: 'RFC 7208 §4.5' });
    expect(result.status).toBe('permerror');
  });

  it('reports syntax errors with their position and unknown mechanisms, and still counts the valid terms', async () => {
    const result = await checkSpf(ctx, 'syntax.test');
    const syntax = byId(result.findings, 'spf_syntax_error')!;
    expect(syntax.evidence).toMatchObject({ position: 26, term: 'ip4:1.2.3' });
    expect(syntax.message).toContain('position 26');
    expect(byId(result.findings, 'spf_unknown_mechanism')!.evidence).toMatchObject({ position: 32, term: 'foo:bar' });
    expect(result.tree!.status).toBe('invalid');
    expect(result.status).toBe('permerror');
  });

  it('flags ptr, +all, ?all, a missing all, +all in an include, terms after all and unknown modifiers', async () => {
    expect(byId((await checkSpf(ctx, 'ptr.test')).findings, 'spf_ptr_mechanism')).toMatchObject({ severity: 'warning', rfc: 'RFC 7208 §5.5' });
    expect(byId((await checkSpf(ctx, 'plusall.test')).findings, 'spf_permissive_all')).toMatchObject({ severity: 'error' });
    expect(byId((await checkSpf(ctx, 'neutral.test')).findings, 'spf_neutral_all')).toMatchObject({ severity: 'warning' });
    expect(byId((await checkSpf(ctx, 'noall.test')).findings, 'spf_no_all')).toMatchObject({ severity: 'warning', rfc: 'RFC 7208 §4.7' });
    expect(byId((await checkSpf(ctx, 'inclplus.test')).findings, 'spf_permissive_all')).toMatchObject({ severity: 'error', evidence: { domain: 'plusall.test' } });
    const after = await checkSpf(ctx, 'after.test');
    expect(ids(after.findings)).toEqual(expect.arrayContaining(['spf_terms_after_all', 'spf_redirect_ignored', 'spf_unknown_modifier']));
    expect(after.lookups).toBe(0);
    expect(byId((await checkSpf(ctx, 'dupinc.test')).findings, 'spf_duplicate_include')).toMatchObject({ severity: 'warning' });
    expect(byId((await checkSpf(ctx, 'missinc.test')).findings, 'spf_include_no_record')).toMatchObject({ severity: 'error' });
    expect(byId((await checkSpf(ctx, 'redir404.test')).findings, 'spf_redirect_no_record')).toMatchObject({ severity: 'error' });
  });

  it('does not walk a target that depends on macros, and says the count is a lower bound', async () => {
    const result = await checkSpf(ctx, 'macroinc.test');
    expect(byId(result.findings, 'spf_macro_target')).toMatchObject({ severity: 'info' });
    expect(result.tree!.children[0]).toMatchObject({ status: 'not_followed', via: 'include:%{l}.users.macroinc.test' });
    expect(byId(result.findings, 'spf_lookup_count')!.message).toContain('at least 1');
  });

  it('flags records over 255, 450 and 512 octets', async () => {
    const r300 = await checkSpf(ctx, 'long300.test');
    expect(r300.record_strings).toHaveLength(2);
    expect(ids(r300.findings)).toContain('spf_record_over_255');
    expect(ids(r300.findings)).not.toContain('spf_record_over_450');
    expect(ids((await checkSpf(ctx, 'long470.test')).findings)).toEqual(expect.arrayContaining(['spf_record_over_255', 'spf_record_over_450']));
    const r540 = await checkSpf(ctx, 'long540.test');
    expect(r540.record_octets).toBeGreaterThan(512);
    expect(ids(r540.findings)).toEqual(expect.arrayContaining(['spf_record_over_255', 'spf_record_over_512']));
  });

  it('flags an mx target with more than 10 MX records', async () => {
    expect(byId((await checkSpf(ctx, 'manymx.test')).findings, 'spf_mx_too_many')).toMatchObject({ severity: 'error', evidence: { count: 11 } });
  });

  it('reports a timed-out include as temperror, never as "no record"', async () => {
    const result = await checkSpf(ctx, 'slowinc.test');
    const failed = byId(result.findings, 'spf_lookup_failed')!;
    expect(failed).toMatchObject({ severity: 'unknown', evidence: { target: 'silent.test', error: { code: 'timeout' } } });
    expect(ids(result.findings)).not.toContain('spf_include_no_record');
    expect(result.tree!.children[0]).toMatchObject({ status: 'error', error: { code: 'timeout' } });
    expect(result.status).toBe('temperror');
  });

  it('throws the lookup error when the domain\'s own record cannot be fetched', async () => {
    await expect(checkSpf(ctx, 'silentroot.test')).rejects.toMatchObject({ code: 'timeout' });
    const servfail = await checkSpf(ctx, 'servfail.test').catch((error: unknown) => error);
    expect(servfail).toBeInstanceOf(NetintelError);
    expect((servfail as NetintelError).code).toBe('upstream');
    expect((servfail as NetintelError).message).toContain('SPF (TXT) lookup of servfail.test');
  });

  it('tells a domain without a record from one that does not exist', async () => {
    const none = await checkSpf(ctx, 'nospf.test');
    expect(none).toMatchObject({ status: 'none', record: null, tree: null });
    expect(byId(none.findings, 'spf_no_record')).toMatchObject({ severity: 'warning' });
    const missing = await checkSpf(ctx, 'nowhere.test');
    expect(byId(missing.findings, 'spf_domain_not_found')).toMatchObject({ severity: 'error' });
  });

  it('says when the SPF RR type could not be checked', async () => {
    const result = await checkSpf(ctx, 'good.test');
    // The test server answers type 99 with NODATA: no finding either way.
    expect(ids(result.findings)).not.toContain('spf_rr_type_deprecated');
  });
});

describe('check_host() through checkSpf --ip', () => {
  it('gives pass and the matched mechanism with its path through an include', async () => {
    const result = await checkSpf(ctx, 'good.test', { ip: '198.51.100.7' });
    expect(result.evaluation).toMatchObject({
      ip: '198.51.100.7',
      sender: 'postmaster@good.test',
      domain: 'good.test',
      result: 'pass',
      matched: {
        mechanism: 'ip4:198.51.100.0/24',
        qualifier: '+',
        domain: '_spf.good.test',
        path: [
          { domain: 'good.test', term: 'include:_spf.good.test' },
          { domain: '_spf.good.test', term: 'ip4:198.51.100.0/24' },
        ],
      },
      explanation: null,
      lookups: 1,
    });
    expect(byId(result.findings, 'spf_check_host')).toMatchObject({ severity: 'pass' });
  });

  it('follows a redirect and an a mechanism inside the include for IPv6 and IPv4', async () => {
    const v6 = await checkSpf(ctx, 'redirect.test', { ip: '2001:db8::25' });
    expect(v6.evaluation!.result).toBe('pass');
    expect(v6.evaluation!.matched!.path.map((step) => step.term)).toEqual(['redirect=good.test', 'include:_spf.good.test', 'ip6:2001:db8::/32']);
    const relay = await checkSpf(ctx, 'good.test', { ip: '203.0.113.9' });
    expect(relay.evaluation!.matched!.mechanism).toBe('a:relay.good.test');
  });

  it('gives fail with -all, and softfail/neutral from the qualifiers', async () => {
    const fail = await checkSpf(ctx, 'good.test', { ip: '203.0.113.200' });
    expect(fail.evaluation).toMatchObject({ result: 'fail', matched: { mechanism: '-all', domain: 'good.test' } });
    expect(byId(fail.findings, 'spf_check_host')).toMatchObject({ severity: 'error' });
    expect((await checkSpf(ctx, 'neutral.test', { ip: '203.0.113.200' })).evaluation!.result).toBe('neutral');
    expect((await checkSpf(ctx, 'noall.test', { ip: '203.0.113.200' })).evaluation).toMatchObject({ result: 'neutral', matched: null });
  });

  it('expands macros from the IP, sender and domain, and the exp explanation', async () => {
    const pass = await checkSpf(ctx, 'macro.test', { ip: '192.0.2.4', sender: 'alice+news@macro.test', helo: 'mta.example.net' });
    expect(pass.evaluation).toMatchObject({ result: 'pass', matched: { mechanism: 'exists:%{ir}.%{l1r+-}._spf.%{d}' } });
    const fail = await checkSpf(ctx, 'macro.test', { ip: '192.0.2.5', sender: 'alice@macro.test', helo: 'mta.example.net' });
    expect(fail.evaluation).toMatchObject({ result: 'fail', explanation: '192.0.2.5 may not send for macro.test (sender alice@macro.test, helo mta.example.net)' });
    expect(fail.lookups).toBe(1);
  });

  it('stops at the lookup limit with permerror, and at the void limit', async () => {
    const over = await checkSpf(ctx, 'over.test', { ip: '192.0.2.99' });
    expect(over.evaluation).toMatchObject({ result: 'permerror', lookups: 11 });
    expect(over.evaluation!.reason).toContain('more than 10');
    expect((await checkSpf(ctx, 'void.test', { ip: '192.0.2.99' })).evaluation).toMatchObject({ result: 'permerror', void_lookups: 3 });
  });

  it('gives temperror for a timeout and permerror for a loop or two records', async () => {
    expect((await checkSpf(ctx, 'slowinc.test', { ip: '192.0.2.99' })).evaluation!.result).toBe('temperror');
    expect((await checkSpf(ctx, 'loop.test', { ip: '192.0.2.99' })).evaluation!.result).toBe('permerror');
    expect((await checkSpf(ctx, 'two.test', { ip: '192.0.2.1' })).evaluation!.result).toBe('permerror');
  });

  it('evaluates the HELO identity for the null reverse-path and rejects a bad IP', async () => {
    const evaluation = await evaluateSpf(createMailDns(ctx), { ip: parseIpAddress('192.0.2.1'), sender: '', helo: 'two.test' });
    expect(evaluation).toMatchObject({ sender: 'postmaster@two.test', domain: 'two.test', result: 'permerror' });
    const single = await evaluateSpf(createMailDns(ctx), { ip: parseIpAddress('192.0.2.1'), sender: '', helo: 'localhost' });
    expect(single.result).toBe('none');
    await expect(checkSpf(ctx, 'good.test', { ip: '300.1.1.1' })).rejects.toMatchObject({ code: 'invalid_input' });
  });
});

describe('the retired SPF RR type', () => {
  it('warns when the domain still publishes type 99', async () => {
    const zone = await startZoneServer(buildZone({ 'legacy.test': [{ SPF: 'v=spf1 -all' }, { TXT: 'v=spf1 -all' }], 'quiet99.test': [{ TXT: 'v=spf1 -all' }, 'TIMEOUT'] }));
    const local = createEngineContext({ resolvers: [parseResolverAddress(zone.address)], timeoutMs: 1000, dnsRetries: 0 });
    try {
      const result = await checkSpf(local, 'legacy.test');
      expect(byId(result.findings, 'spf_rr_type_deprecated')).toMatchObject({ severity: 'warning', evidence: { records: ['v=spf1 -all'] } });
      // TXT answered, type 99 never: that is "could not check", not "none published".
      const quiet = await checkSpf(local, 'quiet99.test');
      expect(byId(quiet.findings, 'spf_rr_type_unchecked')).toMatchObject({ severity: 'info', evidence: { error: { code: 'timeout' } } });
      expect(quiet.status).toBe('valid');
    } finally {
      await local.close();
      await zone.close();
    }
  });
});
