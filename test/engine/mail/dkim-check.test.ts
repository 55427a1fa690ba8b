/**
 * checkDkim() against a real DNS server on 127.0.0.1 publishing keys made
 * by the test (dkim-zone.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext, type EngineContext } from '../../../src/engine/context.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import type { Finding } from '../../../src/engine/findings.js';
import { checkDkim } from '../../../src/engine/mail/check-dkim.js';
import { COMMON_DKIM_SELECTORS } from '../../../src/engine/mail/dkim-selectors.js';
import { NetintelError } from '../../../src/errors.js';
import { startDnsServer, type DnsTestServer } from '../../support/dns-server.js';
import { makeDkimZone } from './dkim-zone.js';

let server: DnsTestServer;
let ctx: EngineContext;
const zone = makeDkimZone();

beforeAll(async () => {
  server = await startDnsServer({ records: zone.records, behaviours: { 'broken._domainkey.dkim.test': 'servfail', 'slow._domainkey.dkim.test': 'silent' } });
  ctx = createEngineContext({ resolvers: [parseResolverAddress(server.address)], timeoutMs: 1000, dnsRetries: 0 });
});

afterAll(async () => {
  await ctx.close();
  await server.close();
});

const ids = (findings: readonly Finding[]) => findings.map((item) => item.id);
const one = async (selector: string) => {
  const result = await checkDkim(ctx, 'dkim.test', { selectors: [selector] });
  expect(result.selectors).toHaveLength(1);
  return { result, selector: result.selectors[0]! };
};

describe('checkDkim: key strength from the key itself', () => {
  it('passes an RSA 2048 key and reads its size from the DER SubjectPublicKeyInfo', async () => {
    const { result, selector } = await one('rsa2048');
    expect(result).toMatchObject({ kind: 'dkim', domain: 'dkim.test', status: 'valid', probed: 'given' });
    expect(selector).toMatchObject({ selector: 'rsa2048', name: 'rsa2048._domainkey.dkim.test', found: true, key: { type: 'rsa', bits: 2048, encoding: 'spki' } });
    expect(selector.record).toMatchObject({ version: 'DKIM1', key_type: 'rsa', public_key: zone.keys.rsa2048.p, testing: false });
    expect(ids(selector.findings)).toEqual(['dkim_record_found', 'dkim_key_strength']);
    expect(result.findings.every((item) => item.severity === 'pass')).toBe(true);
  });

  it('warns on RSA 1024, reading a key folded with whitespace inside p=', async () => {
    const { result, selector } = await one('rsa1024');
    expect(selector.key).toMatchObject({ type: 'rsa', bits: 1024 });
    expect(selector.record?.public_key).toBe(zone.keys.rsa1024.p);
    expect(selector.record?.hash_algorithms).toEqual(['sha256']);
    const weak = selector.findings.find((item) => item.id === 'dkim_key_1024');
    expect(weak).toMatchObject({ severity: 'warning', rfc: 'RFC 8301 §3.2' });
    expect(result.status).toBe('valid');
  });

  it('makes RSA under 1024 bits an error and the domain invalid', async () => {
    const { result, selector } = await one('rsa512');
    expect(selector.key).toMatchObject({ bits: 512 });
    expect(selector.findings.find((item) => item.id === 'dkim_key_weak')).toMatchObject({ severity: 'error' });
    expect(ids(selector.findings)).not.toContain('dkim_record_found');
    expect(result.status).toBe('invalid');
  });

  it('reads an Ed25519 key as the 32 raw octets of RFC 8463', async () => {
    const { selector } = await one('ed');
    expect(selector.key).toEqual({ type: 'ed25519', bits: 256, encoding: 'raw' });
    expect(ids(selector.findings)).toEqual(['dkim_record_found', 'dkim_key_strength']);
  });

  it('reads a PKCS#1 RSA key and warns that p= should be a SubjectPublicKeyInfo', async () => {
    const { selector } = await one('pkcs1');
    expect(selector.key).toMatchObject({ type: 'rsa', bits: 2048, encoding: 'pkcs1' });
    expect(selector.findings.find((item) => item.id === 'dkim_key_encoding')).toMatchObject({ severity: 'warning' });
  });
});

describe('checkDkim: revoked, testing, delegated', () => {
  it('reports a revoked key (empty p=) and no key object', async () => {
    const { result, selector } = await one('revoked');
    expect(selector.found).toBe(true);
    expect(selector.key).toBeNull();
    expect(selector.record?.public_key).toBe('');
    expect(ids(selector.findings)).toEqual(['dkim_key_revoked']);
    expect(selector.findings[0]!.severity).toBe('warning');
    expect(result.status).toBe('invalid');
  });

  it('warns on testing mode and keeps the s flag', async () => {
    const { selector } = await one('testing');
    expect(selector.record).toMatchObject({ flags: ['y', 's'], testing: true, strict_subdomains: true });
    expect(selector.findings.find((item) => item.id === 'dkim_testing_mode')).toMatchObject({ severity: 'warning', rfc: 'RFC 6376 §3.6.1' });
  });

  it('follows a CNAME-delegated selector to the ESP and reports where it leads', async () => {
    const { result, selector } = await one('esp');
    expect(selector).toMatchObject({ found: true, cname: 's1.domainkey.u123.wl.esp.test', key: { type: 'rsa', bits: 2048 } });
    expect(ids(selector.findings)).toEqual(['dkim_record_found', 'dkim_cname_delegated', 'dkim_key_strength']);
    expect(result.status).toBe('valid');
  });

  it('makes a CNAME to a name that does not exist an error', async () => {
    const { result, selector } = await one('gone');
    expect(selector).toMatchObject({ found: false, cname: 's2.domainkey.u999.wl.esp.test' });
    expect(selector.findings[0]).toMatchObject({ id: 'dkim_cname_dangling', severity: 'error' });
    expect(result.status).toBe('none');
  });
});

describe('checkDkim: malformed records', () => {
  const cases: Array<[selector: string, id: string]> = [
    ['v2', 'dkim_bad_version'],
    ['late-v', 'dkim_bad_version'],
    ['dup', 'dkim_duplicate_tag'],
    ['nokey', 'dkim_no_public_key'],
    ['garbage', 'dkim_key_invalid'],
    ['dsa', 'dkim_unknown_key_type'],
    ['sha1', 'dkim_sha1_only'],
    ['noemail', 'dkim_not_for_email'],
    ['syntax', 'dkim_syntax_error'],
  ];
  it.each(cases)('selector %s gives %s as an error, and no usable key', async (name, id) => {
    const { result, selector } = await one(name);
    const item = selector.findings.find((entry) => entry.id === id);
    expect(item).toMatchObject({ severity: 'error' });
    expect(item!.rfc).toMatch(/^RFC \d+ §/);
    expect(item!.evidence).toMatchObject({ selector: name });
    expect(result.status).toBe('invalid');
  });

  it('warns when a selector publishes two key records', async () => {
    const { selector } = await one('two');
    expect(selector.findings.find((item) => item.id === 'dkim_multiple_records')).toMatchObject({ severity: 'warning' });
  });

  it('says when a given selector has no key, and names other TXT records there', async () => {
    const missing = await one('absent');
    expect(missing.selector.findings[0]).toMatchObject({ id: 'dkim_selector_not_found', severity: 'warning' });
    expect(missing.result.status).toBe('none');
    const other = await one('other');
    expect(other.selector.found).toBe(false);
    expect(other.selector.findings[0]!.evidence).toMatchObject({ otherRecords: ['google-site-verification=abc'] });
  });
});

describe('checkDkim: common selectors and failures', () => {
  it('probes the common selectors at once and finds the Google and Microsoft 365 ones', async () => {
    const before = server.queries.length;
    const result = await checkDkim(ctx, 'common.test');
    expect(result.probed).toBe('common');
    expect(result.selectors.map((item) => item.selector)).toEqual(COMMON_DKIM_SELECTORS);
    expect(result.selectors.filter((item) => item.found).map((item) => item.selector)).toEqual(['google', 'selector1']);
    expect(result.selectors.find((item) => item.selector === 'selector1')?.cname).toBe('selector1-common-test._domainkey.tenant.onmicrosoft.test');
    expect(result.findings.find((item) => item.id === 'dkim_common_selector_found')).toMatchObject({ severity: 'info' });
    // Selectors not found stay quiet when probing.
    expect(result.selectors.filter((item) => !item.found).every((item) => item.findings.length === 0)).toBe(true);
    expect(server.queries.length - before).toBe(COMMON_DKIM_SELECTORS.length);
    expect(result.status).toBe('valid');
  });

  it('says plainly that no common selector is not "no DKIM"', async () => {
    const result = await checkDkim(ctx, 'nodkim.test');
    expect(result.status).toBe('none');
    expect(result.findings).toHaveLength(1);
    expect(result.findings[0]).toMatchObject({ id: 'dkim_no_common_selector', severity: 'info', rfc: 'RFC 6376 §3.1' });
    expect(result.findings[0]!.message).toContain('does not mean the domain has no DKIM');
  });

  it('keeps a failed lookup apart from "no key" (temperror), and throws when every lookup failed', async () => {
    const mixed = await checkDkim(ctx, 'dkim.test', { selectors: ['broken', 'absent'] });
    expect(mixed.status).toBe('temperror');
    expect(mixed.selectors[0]).toMatchObject({ selector: 'broken', found: false, error: { code: 'upstream' } });
    expect(mixed.selectors[0]!.findings[0]).toMatchObject({ id: 'dkim_lookup_failed', severity: 'unknown', evidence: { error: { code: 'upstream' } } });
    await expect(checkDkim(ctx, 'dkim.test', { selectors: ['broken'] })).rejects.toMatchObject({ code: 'upstream' });
  });

  it('refuses a bad domain or selector as invalid input', async () => {
    await expect(checkDkim(ctx, 'dkim.test', { selectors: ['bad selector'] })).rejects.toBeInstanceOf(NetintelError);
    await expect(checkDkim(ctx, 'dkim.test', { selectors: ['a..b'] })).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(checkDkim(ctx, '.')).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('lower-cases selectors and asks each once', async () => {
    const result = await checkDkim(ctx, 'DKIM.test', { selectors: ['RSA2048', 'rsa2048'] });
    expect(result.selectors.map((item) => item.selector)).toEqual(['rsa2048']);
  });
});
