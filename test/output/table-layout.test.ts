import { describe, expect, it } from 'vitest';
import type { AsnResult } from '../../src/engine/asn/lookup-asn.js';
import { ASN_SCHEMA } from '../../src/output/schemas/asn-schema.js';
import { TABLE_LIST_ITEMS } from '../../src/output/table.js';
import { IP_SCHEMA } from '../../src/output/schemas/ip-schema.js';
import { ASN_BY_NUMBER, AWKWARD_V6, failed, GOOGLE_DNS, INVALID_IP_ERROR, ok, PRIVATE_V4 } from './fixtures.js';
import { render } from './render.js';

const prefixes = Array.from({ length: 5968 }, (_, i) => `10.${i >> 8}.${i & 255}.0/24`);
const LARGE_AS: AsnResult = {
  ...ASN_BY_NUMBER,
  prefixes: { ipv4: prefixes, ipv6: ['2001:db8::/32'] },
  counts: { ...ASN_BY_NUMBER.counts!, ipv4Prefixes: prefixes.length },
};

describe('lists in table cells', () => {
  it('shows the first items of a long list and how many there are, on one line of bounded width', async () => {
    const text = await render(ASN_SCHEMA, 'table', [ok('AS64500', LARGE_AS)], { single: true });
    const line = text.split('\n').find((row) => row.includes('prefixes.ipv4'))!;
    expect(line).toContain(`"10.0.0.0/24","10.0.1.0/24"`);
    expect(line).toContain(`"10.0.${TABLE_LIST_ITEMS - 1}.0/24",…] (${TABLE_LIST_ITEMS} of 5968 shown; -f json or -f csv for all)`);
    expect(line).not.toContain(`10.0.${TABLE_LIST_ITEMS}.0/24`);
    expect(line.length).toBeLessThan(300);
    // A short list is shown whole, as before.
    expect(text).toMatch(/prefixes\.ipv6 +│ \["2001:db8::\/32"\]/);
  });

  it('keeps every item in json and csv', async () => {
    const json = JSON.parse(await render(ASN_SCHEMA, 'json', [ok('AS64500', LARGE_AS)], { single: true }));
    expect(json.prefixes.ipv4).toHaveLength(5968);
    const csv = await render(ASN_SCHEMA, 'csv', [ok('AS64500', LARGE_AS)], { single: true });
    expect(csv).toContain('10.23.79.0/24');
  });
});

describe('table rules', () => {
  const rules = (text: string) => text.split('\n').filter((line) => line.startsWith('├')).length;

  it('draws no rule between fields of one record', async () => {
    const text = await render(IP_SCHEMA, 'table', [ok('8.8.8.8', GOOGLE_DNS)], { single: true });
    expect(rules(text)).toBe(0);
    expect(text).toMatch(/│ ip +│ 8\.8\.8\.8 +│\n│ type +│ ipv4 +│/);
  });

  it('rules off the header only when every row is one line, and between rows when one is an error', async () => {
    const clean = await render(IP_SCHEMA, 'table', [ok('8.8.8.8', GOOGLE_DNS), ok('10.0.0.1', PRIVATE_V4), ok('2001:db8::1', AWKWARD_V6)], { single: false });
    const lines = clean.split('\n');
    expect(lines[2]!.startsWith('├')).toBe(true);
    expect(lines[2]!.length).toBe(lines[0]!.length);
    expect(rules(clean)).toBe(1);
    expect(lines.filter((line) => line.startsWith('│')).length).toBe(4);
    const withError = await render(IP_SCHEMA, 'table', [ok('8.8.8.8', GOOGLE_DNS), failed('not-an-ip', INVALID_IP_ERROR), ok('10.0.0.1', PRIVATE_V4)], { single: false });
    expect(rules(withError)).toBe(3);
    expect(withError).not.toMatch(/┴┴/);
  });
});
