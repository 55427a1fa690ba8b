import { describe, expect, it } from 'vitest';
import { expandDnsTypes, parseDnsTypes } from '../../../src/engine/dns/dns-type.js';

describe('parseDnsTypes', () => {
  it('reads a comma-separated list in any case', () => {
    expect(parseDnsTypes('mx')).toEqual(['MX']);
    expect(parseDnsTypes('a, AAAA,txt')).toEqual(['A', 'AAAA', 'TXT']);
    expect(parseDnsTypes('all')).toEqual(['ALL']);
    expect(parseDnsTypes('ptr,caa,srv')).toEqual(['PTR', 'CAA', 'SRV']);
    expect(parseDnsTypes('ds,dnskey,rrsig,nsec,nsec3,tlsa,svcb,https')).toEqual(['DS', 'DNSKEY', 'RRSIG', 'NSEC', 'NSEC3', 'TLSA', 'SVCB', 'HTTPS']);
  });

  it('refuses an unknown or empty type with usage, listing the supported ones', () => {
    expect(() => parseDnsTypes('A,ANY')).toThrow(
      expect.objectContaining({ code: 'usage', message: expect.stringContaining('"ANY"') }),
    );
    expect(() => parseDnsTypes('A,')).toThrow(expect.objectContaining({ message: expect.stringContaining('an empty type') }));
    expect(() => parseDnsTypes('ANY')).toThrow(
      expect.objectContaining({ message: expect.stringContaining('A, AAAA, CNAME, MX, NS, SOA, TXT, CAA, PTR, SRV, DS, DNSKEY, RRSIG, NSEC, NSEC3, TLSA, SVCB, HTTPS or ALL') }),
    );
  });
});

describe('expandDnsTypes', () => {
  it('expands ALL to the eight concurrent questions and drops repeats', () => {
    expect(expandDnsTypes(['ALL'])).toEqual(['A', 'AAAA', 'CNAME', 'MX', 'NS', 'SOA', 'TXT', 'CAA']);
    expect(expandDnsTypes(['TXT', 'ALL', 'PTR', 'TXT'])).toEqual(['TXT', 'A', 'AAAA', 'CNAME', 'MX', 'NS', 'SOA', 'CAA', 'PTR']);
  });
});
