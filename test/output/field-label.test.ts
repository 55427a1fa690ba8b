import { describe, expect, it } from 'vitest';
import { fieldLabel } from '../../src/output/field-label.js';

describe('fieldLabel', () => {
  it('says a snake_case path in words, with the acronyms in capitals', () => {
    expect(fieldLabel('mta_sts.policy_error.message')).toBe('MTA-STS policy error message');
    expect(fieldLabel('tls_rpt.records')).toBe('TLS-RPT records');
    expect(fieldLabel('domain_unicode')).toBe('Domain unicode');
    expect(fieldLabel('ttl_seconds')).toBe('TTL seconds');
    expect(fieldLabel('network.asn')).toBe('Network ASN');
    expect(fieldLabel('id')).toBe('ID');
    expect(fieldLabel('counts.ipv4_prefixes')).toBe('Counts IPv4 prefixes');
  });

  it('reads a nesting that repeats a word once', () => {
    expect(fieldLabel('dnssec.dnssec_status')).toBe('DNSSEC status');
  });

  it('prefers the label a column declares', () => {
    expect(fieldLabel('limits.per_minute', { 'limits.per_minute': 'Requests a minute' })).toBe('Requests a minute');
    expect(fieldLabel('limits.daily', { 'limits.per_minute': 'Requests a minute' })).toBe('Limits daily');
  });
});
