import { describe, expect, it } from 'vitest';
import { dnsblQueryName, readDnsblAnswer } from '../../../src/engine/blacklist/dnsbl-answer.js';
import { customZone, findRegisteredZone, loadDnsblRegistry } from '../../../src/engine/blacklist/dnsbl-registry.js';
import { parseIpAddress } from '../../../src/engine/address/ip-address.js';

const registry = loadDnsblRegistry(null);
const zen = findRegisteredZone(registry, 'zen.spamhaus.org')!;
const dbl = findRegisteredZone(registry, 'dbl.spamhaus.org')!;
const uribl = findRegisteredZone(registry, 'multi.uribl.com')!;
const surbl = findRegisteredZone(registry, 'multi.surbl.org')!;
const custom = customZone('bl.example.net', 'ip', false);

describe('dnsblQueryName', () => {
  it('reverses the octets of an IPv4 address (RFC 5782 §2.1)', () => {
    expect(dnsblQueryName(parseIpAddress('192.0.2.1'), 'zen.spamhaus.org')).toBe('1.2.0.192.zen.spamhaus.org');
  });

  it('reverses the 32 nibbles of an IPv6 address (RFC 5782 §2.4)', () => {
    expect(dnsblQueryName(parseIpAddress('2001:db8::1'), 'bl.example.net')).toBe(
      '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.bl.example.net',
    );
  });

  it('asks an IPv4-mapped IPv6 address as the IPv4 address it carries', () => {
    expect(dnsblQueryName(parseIpAddress('::ffff:192.0.2.1'), 'bl.example.net')).toBe('1.2.0.192.bl.example.net');
  });

  it('prepends a domain to a domain list (RFC 5782 §3)', () => {
    expect(dnsblQueryName('example.com', 'dbl.spamhaus.org')).toBe('example.com.dbl.spamhaus.org');
  });
});

describe('readDnsblAnswer', () => {
  it('reads NXDOMAIN and an answer without A records as clean', () => {
    expect(readDnsblAnswer(zen, 'nxdomain', []).status).toBe('clean');
    expect(readDnsblAnswer(zen, 'nodata', []).status).toBe('clean');
  });

  it('reads a listing code with its meaning from the registry', () => {
    const reading = readDnsblAnswer(zen, 'answer', ['127.0.0.2', '127.0.0.10', '127.0.0.10']);
    expect(reading.status).toBe('listed');
    expect(reading.codes).toEqual([
      { address: '127.0.0.2', meaning: expect.stringMatching(/^SBL/) },
      { address: '127.0.0.10', meaning: expect.stringMatching(/^PBL/) },
    ]);
  });

  it.each(['127.255.255.252', '127.255.255.254', '127.255.255.255', '127.255.255.250'])(
    'never reads the Spamhaus error code %s as a listing',
    (code) => {
      const reading = readDnsblAnswer(zen, 'answer', [code]);
      expect(reading.status).toBe('refused');
      expect(reading.codes[0]!.address).toBe(code);
    },
  );

  it('says why Spamhaus refused: a public resolver for 127.255.255.254', () => {
    expect(readDnsblAnswer(zen, 'answer', ['127.255.255.254']).detail).toMatch(/public\/open resolver/);
  });

  it('reads a refusal code as refused even next to a listing code', () => {
    expect(readDnsblAnswer(zen, 'answer', ['127.0.0.2', '127.255.255.254']).status).toBe('refused');
  });

  it('reads 127.0.0.1 from URIBL and SURBL as a refusal, and DBL 127.0.1.255 as a query error', () => {
    expect(readDnsblAnswer(uribl, 'answer', ['127.0.0.1']).status).toBe('refused');
    expect(readDnsblAnswer(surbl, 'answer', ['127.0.0.1']).status).toBe('refused');
    expect(readDnsblAnswer(dbl, 'answer', ['127.0.1.255']).detail).toMatch(/IP address queries/);
  });

  it('decodes the bits of a bitmasked list', () => {
    expect(readDnsblAnswer(uribl, 'answer', ['127.0.0.14']).codes[0]!.meaning).toBe(
      'black: domain used by spammers; grey: domain seen in bulk mail, may honour opt-out; red: young or whois-privacy domain seen in mail flow',
    );
    expect(readDnsblAnswer(surbl, 'answer', ['127.0.0.72']).codes[0]!.meaning).toMatch(/^PH: phishing; ABUSE/);
  });

  it('reads any other 127.0.0.0/8 answer as a listing whose meaning is not recorded', () => {
    expect(readDnsblAnswer(custom, 'answer', ['127.0.0.9'])).toEqual({ status: 'listed', codes: [{ address: '127.0.0.9', meaning: null }], detail: null });
  });

  it('reads an answer outside 127.0.0.0/8 as an error, neither listed nor clean', () => {
    const reading = readDnsblAnswer(custom, 'answer', ['198.51.100.7']);
    expect(reading.status).toBe('error');
    expect(reading.detail).toMatch(/outside 127\.0\.0\.0\/8/);
  });
});
