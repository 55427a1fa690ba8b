import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseResolverAddress, parseResolverCa } from '../../../src/engine/dns/resolver-address.js';
import { NetintelError } from '../../../src/errors.js';
import { createCertificateAuthority } from '../../support/smtp-servers.js';

describe('parseResolverAddress: DNS over HTTPS and TLS', () => {
  it.each([
    ['https://dns.example/dns-query', { protocol: 'https', host: 'dns.example', port: 443, family: 0, label: 'https://dns.example/dns-query', url: 'https://dns.example/dns-query', method: 'POST' }],
    ['https://dns.example/dns-query{?dns}', { protocol: 'https', host: 'dns.example', port: 443, family: 0, label: 'https://dns.example/dns-query', url: 'https://dns.example/dns-query', method: 'GET' }],
    ['HTTPS://DNS.Example:8443/q?ct', { protocol: 'https', host: 'dns.example', port: 8443, family: 0, label: 'https://dns.example:8443/q?ct', url: 'https://dns.example:8443/q?ct', method: 'POST' }],
    ['https://[2001:db8::53]/dns-query', { protocol: 'https', host: '2001:db8::53', port: 443, family: 6, label: 'https://[2001:db8::53]/dns-query', url: 'https://[2001:db8::53]/dns-query', method: 'POST' }],
    ['https://192.0.2.53', { protocol: 'https', host: '192.0.2.53', port: 443, family: 4, label: 'https://192.0.2.53/', url: 'https://192.0.2.53/', method: 'POST' }],
    ['tls://dns.example', { protocol: 'tls', host: 'dns.example', port: 853, family: 0, label: 'tls://dns.example:853' }],
    ['tls://192.0.2.53:8853', { protocol: 'tls', host: '192.0.2.53', port: 8853, family: 4, label: 'tls://192.0.2.53:8853' }],
    ['tls://[2001:db8::53]', { protocol: 'tls', host: '2001:db8::53', port: 853, family: 6, label: 'tls://[2001:db8::53]:853' }],
    [' tls://dns.example:853/ ', { protocol: 'tls', host: 'dns.example', port: 853, family: 0, label: 'tls://dns.example:853' }],
  ])('reads %j', (text, expected) => {
    expect(parseResolverAddress(text)).toEqual(expected);
  });

  it('carries the trusted CAs on encrypted resolvers only', () => {
    expect(parseResolverAddress('tls://dns.example', { ca: ['PEM'] }).ca).toEqual(['PEM']);
    expect(parseResolverAddress('192.0.2.53', { ca: ['PEM'] }).ca).toBeUndefined();
  });

  it.each([
    ['http://dns.example/dns-query', 'is not one netintel speaks'],
    ['quic://dns.example', 'is not one netintel speaks'],
    ['https://', 'expected a URL'],
    ['https://user:pw@dns.example/dns-query', 'credentials'],
    ['https://dns.example/dns-query#x', 'fragment'],
    ['https://dns.example/{name}', 'URI template'],
    ['https://dns.example/dns-query?dns=AAAB', 'dns= parameter'],
    ['tls://dns.example/path', 'nothing after the port'],
    ['tls://dns.example:0', 'from 1 to 65535'],
    ['tls://dns.example:70000', 'expected tls://host'],
    ['tls://', 'expected tls://host'],
  ])('refuses %j with invalid_input', (text, why) => {
    expect(() => parseResolverAddress(text)).toThrow(expect.objectContaining({ code: 'invalid_input', message: expect.stringContaining(why) }));
  });

  it('never throws anything but invalid_input, and what it accepts has a sane port and label (property)', () => {
    const schemeText = fc.oneof(
      fc.string(),
      fc.tuple(fc.constantFrom('https://', 'tls://', 'HTTPS://', 'tls:/', 'dns://'), fc.string()).map(([scheme, rest]) => scheme + rest),
      fc.tuple(fc.constantFrom('https://', 'tls://'), fc.domain(), fc.option(fc.integer({ min: 0, max: 99999 })), fc.webPath()).map(
        ([scheme, host, port, path]) => `${scheme}${host}${port === null ? '' : `:${port}`}${path}`,
      ),
    );
    fc.assert(
      fc.property(schemeText, (text) => {
        let resolver;
        try {
          resolver = parseResolverAddress(text);
        } catch (error) {
          expect(error).toBeInstanceOf(NetintelError);
          expect((error as NetintelError).code).toBe('invalid_input');
          return;
        }
        expect(resolver.port).toBeGreaterThanOrEqual(1);
        expect(resolver.port).toBeLessThanOrEqual(65535);
        expect(resolver.host.length).toBeGreaterThan(0);
        if (resolver.protocol === 'tls') expect(resolver.label).toMatch(/^tls:\/\/.+:\d+$/);
        if (resolver.protocol === 'https') {
          expect(resolver.label.startsWith('https://')).toBe(true);
          expect(new URL(resolver.url!).searchParams.has('dns')).toBe(false);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('reads back its own labels (property)', () => {
    fc.assert(
      fc.property(fc.domain(), fc.integer({ min: 1, max: 65535 }), fc.boolean(), (host, port, overTls) => {
        const text = overTls ? `tls://${host}:${port}` : `https://${host}:${port}/dns-query`;
        const first = parseResolverAddress(text);
        expect(parseResolverAddress(first.label)).toEqual(first);
        expect(first.port).toBe(overTls || port !== 443 ? port : 443);
      }),
    );
  });
});

describe('parseResolverCa', () => {
  it('gives the certificates of a PEM bundle', () => {
    const a = createCertificateAuthority('CA one').cert;
    const b = createCertificateAuthority('CA two').cert;
    expect(parseResolverCa(`comment\n${a}\n${b}`, 'ca.pem')).toHaveLength(2);
  });

  it.each([
    ['', 'holds no PEM certificate'],
    ['-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', 'not an X.509 certificate'],
  ])('refuses %j as usage', (text, why) => {
    expect(() => parseResolverCa(text, 'ca.pem')).toThrow(expect.objectContaining({ code: 'usage', message: expect.stringContaining(why) }));
  });
});
