import { describe, expect, it } from 'vitest';
import type { AsnResult } from '../../src/engine/asn/lookup-asn.js';
import { SHOWN_PREFIXES } from '../../src/output/human/asn-view.js';
import { ASN_SCHEMA } from '../../src/output/schemas/asn-schema.js';
import { IP_SCHEMA } from '../../src/output/schemas/ip-schema.js';
import { ASN_BY_NUMBER, AWKWARD_V6, failed, GOOGLE_DNS, INVALID_IP_ERROR, ok, PRIVATE_V4 } from './fixtures.js';
import { render } from './render.js';

const prefixes = Array.from({ length: 5968 }, (_, i) => `10.${i >> 8}.${i & 255}.0/24`);
const LARGE_AS: AsnResult = {
  ...ASN_BY_NUMBER,
  prefixes: { ipv4: prefixes, ipv6: ['2001:db8::/32'] },
  counts: { ...ASN_BY_NUMBER.counts!, ipv4Prefixes: prefixes.length },
};

describe('the prefixes of an AS', () => {
  it('shows the first prefixes in columns that fit the width and says how many there are', async () => {
    const text = await render(ASN_SCHEMA, 'table', [ok('AS64500', LARGE_AS)], { single: true, width: 80 });
    expect(text).toContain(`IPv4 prefixes (5,968, first ${SHOWN_PREFIXES} shown; -f json or -f csv for all)`);
    expect(text).toContain('10.0.0.0/24');
    expect(text).toContain(`10.0.${SHOWN_PREFIXES - 1}.0/24`);
    expect(text).not.toContain(`10.0.${SHOWN_PREFIXES}.0/24`);
    for (const line of text.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    // A short list is shown whole.
    expect(text).toMatch(/IPv6 prefixes \(1\)\n {2}2001:db8::\/32\n/);
  });

  it('keeps every prefix in json and csv', async () => {
    const json = JSON.parse(await render(ASN_SCHEMA, 'json', [ok('AS64500', LARGE_AS)], { single: true }));
    expect(json.prefixes.ipv4).toHaveLength(5968);
    const csv = await render(ASN_SCHEMA, 'csv', [ok('AS64500', LARGE_AS)], { single: true });
    expect(csv).toContain('10.23.79.0/24');
  });
});

describe('table rules', () => {
  const rules = (text: string) => text.split('\n').filter((line) => line.startsWith('├')).length;

  it('shows one record as a headline and facts, with no table', async () => {
    const text = await render(IP_SCHEMA, 'table', [ok('8.8.8.8', GOOGLE_DNS)], { single: true });
    expect(text).not.toMatch(/[│┌├]/);
    expect(text.split('\n')[0]).toMatch(/^8\.8\.8\.8 {2}\S/);
  });

  it('rules off the header only when every row is one line, and between rows when one is an error', async () => {
    const clean = await render(IP_SCHEMA, 'table', [ok('8.8.8.8', GOOGLE_DNS), ok('10.0.0.1', PRIVATE_V4), ok('2001:db8::1', AWKWARD_V6)], { single: false, width: 160 });
    const lines = clean.split('\n');
    expect(lines[2]!.startsWith('├')).toBe(true);
    expect(lines[2]!.length).toBe(lines[0]!.length);
    expect(rules(clean)).toBe(1);
    expect(lines.filter((line) => line.startsWith('│')).length).toBe(4);
    const withError = await render(IP_SCHEMA, 'table', [ok('8.8.8.8', GOOGLE_DNS), failed('not-an-ip', INVALID_IP_ERROR), ok('10.0.0.1', PRIVATE_V4)], { single: false, width: 160 });
    expect(rules(withError)).toBe(3);
    expect(withError).not.toMatch(/┴┴/);
  });
});
