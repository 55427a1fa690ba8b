import { describe, expect, it } from 'vitest';
import type { AsnResult } from '../../src/engine/asn/lookup-asn.js';
import { ipv6Space, SHOWN_PREFIXES } from '../../src/output/human/asn-view.js';
import { ASN_SCHEMA } from '../../src/output/schemas/asn-schema.js';
import { IP_SCHEMA } from '../../src/output/schemas/ip-schema.js';
import { RANGE_SCHEMA } from '../../src/output/schemas/range-schema.js';
import { describeRange } from '../../src/engine/ip/ip-range-record.js';
import { ASN_BY_NUMBER, AWKWARD_V6, GOOGLE_DNS as GOOGLE, failed, GOOGLE_DNS, INVALID_IP_ERROR, ok, PRIVATE_V4 } from './fixtures.js';
import { render } from './render.js';

const prefixes = Array.from({ length: 5968 }, (_, i) => `10.${i >> 8}.${i & 255}.0/24`);
const LARGE_AS: AsnResult = {
  ...ASN_BY_NUMBER,
  prefixes: { ipv4: prefixes, ipv6: ['2001:db8::/32'] },
  counts: { ...ASN_BY_NUMBER.counts!, ipv4_prefixes: prefixes.length },
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

describe('the IPv6 space of an AS', () => {
  it('is a count of /48s, of /32s from one /32 on, the unit named, never 39 digits of addresses', () => {
    expect(ipv6Space(3n << 80n)).toBe('3 /48s');
    expect(ipv6Space(1n << 80n)).toBe('1 /48');
    expect(ipv6Space((1n << 96n) - (1n << 80n))).toBe('65,535 /48s');
    expect(ipv6Space(1n << 96n)).toBe('1 /32');
    expect(ipv6Space(12n << 96n)).toBe('12 /32s');
    // AS15169's 45 prefixes: 574,288 /48s and some smaller blocks.
    expect(ipv6Space(694_269_173_243_206_930_225_310_990_336n)).toBe('about 8.7 /32s');
    expect(ipv6Space((1n << 80n) + (1n << 64n))).toBe('about 1.0 /48s');
    expect(ipv6Space(256n << 64n)).toBe('256 /64s');
    expect(ipv6Space(1n)).toBe('1 address');
    expect(ipv6Space(0n)).toBe('no addresses');
  });

  it('is what the view of an AS says, IPv4 still as addresses', async () => {
    const text = await render(ASN_SCHEMA, 'table', [ok('AS64500', ASN_BY_NUMBER)], { single: true, width: 80 });
    expect(text).toContain('IPv4  2 prefixes, 768 addresses\n');
    expect(text).toContain('IPv6  1 prefix, 1 /32\n');
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

describe('the columns a narrow table keeps', () => {
  const header = (text: string) => text.split('\n')[1]!.split('│').map((cell) => cell.trim()).filter((cell) => cell !== '');

  it('keeps the flags of addresses asked by host name at 80 columns: the AS number and the organization go first', async () => {
    const rows = [ok('dns.google.example', GOOGLE), ok('dns.google.example', { ...GOOGLE, ip: '8.8.4.4' }), ok('vpn.example', AWKWARD_V6)];
    const text = await render(IP_SCHEMA, 'table', rows, { single: false, width: 80 });
    expect(header(text)).toEqual(['query', 'ip', 'location', 'flags']);
    expect(text).toContain('hosting');
    expect(text).toContain('vpn');
    expect(header(await render(IP_SCHEMA, 'table', rows.slice(0, 2), { single: false, width: 80 }))).toEqual(['query', 'ip', 'location', 'organization', 'flags']);
    expect(text).toContain('dns.google.example');
    for (const line of text.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    // With room for it, every column.
    expect(header(await render(IP_SCHEMA, 'table', rows, { single: false, width: 120 }))).toEqual(['query', 'ip', 'location', 'AS', 'organization', 'flags']);
  });

  it('keeps the count of every range at 80 columns, an IPv6 address never broken', async () => {
    const rows = ['192.0.2.5-192.0.2.77', '2001:db8::/32', '198.51.100.9/30'].map((input) => ok(input, describeRange(input)));
    const text = await render(RANGE_SCHEMA, 'table', rows, { single: false, width: 80 });
    expect(header(text)).toEqual(['range', 'count', 'first - last']);
    expect(text).toMatch(/│ 192\.0\.2\.5-192\.0\.2\.77 │ +73 │ 192\.0\.2\.5 - 192\.0\.2\.77 +│/);
    expect(text).toMatch(/│ +2\^96 │ 2001:db8:: - +│\n│ +│ +│ 2001:db8:ffff:ffff:ffff:ffff:ffff:ffff +│/);
    for (const line of text.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    expect(header(await render(RANGE_SCHEMA, 'table', rows, { single: false, width: 130 }))).toEqual(['range', 'count', 'first - last', 'CIDR blocks']);
  });
});
