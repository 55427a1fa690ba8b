/**
 * Identifier alignment by the public suffix list (RFC 7489 §3.1, §3.2), as
 * dmarc-report and `headers` use it. mailauth 7 gives the same verdicts on
 * generated names: test/interop/alignment-mailauth.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { domainsAligned, organisationalDomain } from '../../../src/engine/mail/organisational-domain.js';

describe('organisationalDomain', () => {
  it('is the registrable domain under the ICANN and the private sections of the list', () => {
    expect(organisationalDomain('mail.example.com')).toBe('example.com');
    expect(organisationalDomain('a.b.example.co.uk')).toBe('example.co.uk');
    expect(organisationalDomain('alice.github.io')).toBe('alice.github.io');
    expect(organisationalDomain('Mail.Example.COM.')).toBe('example.com');
  });

  it('is the name itself when the list gives none: a public suffix, one label', () => {
    expect(organisationalDomain('co.uk')).toBe('co.uk');
    expect(organisationalDomain('localhost')).toBe('localhost');
  });

  it('compares internationalised names by their A-labels', () => {
    expect(organisationalDomain('mail.bücher.example.de')).toBe('example.de');
    expect(organisationalDomain('mail.bücher.de')).toBe('xn--bcher-kva.de');
  });
});

describe('domainsAligned', () => {
  it('in strict mode, only the same domain aligns (RFC 7489 §3.1.1: a subdomain of the From domain does not)', () => {
    expect(domainsAligned('example.com', 'mail.example.com', true)).toBe(false);
    expect(domainsAligned('mail.example.com', 'example.com', true)).toBe(false);
    expect(domainsAligned('a.example.co.uk', 'b.example.co.uk', true)).toBe(false);
    expect(domainsAligned('Example.COM', 'example.com.', true)).toBe(true);
    expect(domainsAligned('bücher.example', 'xn--bcher-kva.example', true)).toBe(true);
  });

  it('in relaxed mode, domains of one Organizational Domain align, and two sites under a private suffix do not', () => {
    expect(domainsAligned('example.com', 'mail.example.com', false)).toBe(true);
    expect(domainsAligned('a.example.co.uk', 'b.example.co.uk', false)).toBe(true);
    expect(domainsAligned('example.co.uk', 'other.co.uk', false)).toBe(false);
    expect(domainsAligned('alice.github.io', 'bob.github.io', false)).toBe(false);
    expect(domainsAligned('example.com', 'example.org', false)).toBe(false);
  });

  it('aligns an empty domain with nothing, itself included', () => {
    expect(domainsAligned('', '', false)).toBe(false);
    expect(domainsAligned('example.com', '', false)).toBe(false);
    expect(domainsAligned('.', 'example.com', true)).toBe(false);
  });

  it('answers for any text a report or a Received line can hold, without throwing; strict alignment implies relaxed, and a name aligns with itself', () => {
    const text = fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 80 }), fc.constantFrom('example.com', 'EXAMPLE.com.', 'a..b.com', 'xn--zz.com', '-x-.com', '1.2.3.4', '[192.0.2.1]', '..', '.'));
    fc.assert(
      fc.property(text, text, (a, b) => {
        const strict = domainsAligned(a, b, true);
        expect(typeof strict).toBe('boolean');
        if (strict) expect(domainsAligned(a, b, false)).toBe(true);
        expect(domainsAligned(a, b, false)).toBe(domainsAligned(b, a, false));
        expect(typeof organisationalDomain(a)).toBe('string');
        if (a.trim().replace(/\.+$/, '') !== '') expect(domainsAligned(a, a, true)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
