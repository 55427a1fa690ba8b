import { describe, expect, it } from 'vitest';
import { canonicalIp, isPlainAsciiName, normaliseDomain, parseDnsTarget, reverseName } from '../../../src/engine/dns/dns-name.js';
import { NetintelError } from '../../../src/errors.js';

function invalid(input: string): NetintelError {
  try {
    normaliseDomain(input);
  } catch (error) {
    expect(error).toBeInstanceOf(NetintelError);
    expect((error as NetintelError).code).toBe('invalid_input');
    return error as NetintelError;
  }
  throw new Error(`${JSON.stringify(input)} was accepted`);
}

describe('normaliseDomain', () => {
  it('lower-cases a plain name and drops one trailing dot', () => {
    expect(normaliseDomain('Example.COM.')).toEqual({ ascii: 'example.com', unicode: 'example.com' });
  });

  it('converts an internationalised name to punycode and keeps the Unicode form', () => {
    expect(normaliseDomain('bücher.example')).toEqual({ ascii: 'xn--bcher-kva.example', unicode: 'bücher.example' });
    expect(normaliseDomain('Bücher.Example.')).toEqual({ ascii: 'xn--bcher-kva.example', unicode: 'bücher.example' });
    expect(normaliseDomain('例え.テスト')).toEqual({ ascii: 'xn--r8jz45g.xn--zckzah', unicode: '例え.テスト' });
  });

  it('shows the Unicode form of a name given in punycode', () => {
    expect(normaliseDomain('xn--bcher-kva.example')).toEqual({ ascii: 'xn--bcher-kva.example', unicode: 'bücher.example' });
  });

  it('accepts ideographic full stops as label separators (UTS #46)', () => {
    expect(normaliseDomain('bücher\u3002example').ascii).toBe('xn--bcher-kva.example');
  });

  it('accepts underscore labels, a wildcard label, and the root', () => {
    expect(normaliseDomain('_dmarc.example.com').ascii).toBe('_dmarc.example.com');
    expect(normaliseDomain('_sip._tcp.example.com').ascii).toBe('_sip._tcp.example.com');
    expect(normaliseDomain('*.example.com').ascii).toBe('*.example.com');
    expect(normaliseDomain('.')).toEqual({ ascii: '.', unicode: '.' });
  });

  it('refuses an xn-- label that is not valid Punycode or does not encode back to itself', () => {
    for (const name of ['xn--zz.example', 'xn--.com', 'xn--zz-.com', 'XN--ZZ-.com']) {
      expect(() => normaliseDomain(name), name).toThrow(expect.objectContaining({ code: 'invalid_input' }));
    }
    expect(() => normaliseDomain('xn--zz-.com')).toThrow(/not a valid IDNA A-label/);
    expect(normaliseDomain('xn--bcher-kva.example')).toEqual({ ascii: 'xn--bcher-kva.example', unicode: 'bücher.example' });
  });

  it('refuses a label that IDNA maps to characters a host name cannot hold (found by fuzzing)', () => {
    expect(() => normaliseDomain('\u207a')).toThrow(/maps to "\+"/);
    expect(() => normaliseDomain('\u203c.example')).toThrow(/maps to "!!"/);
  });

  it('refuses a zero-width space or another invisible character instead of querying the name without it', () => {
    expect(() => normaliseDomain('ex\u200bample.com')).toThrow(/U\+200B/);
    expect(() => normaliseDomain('ex\u00adample.com')).toThrow(/U\+00AD/);
    expect(() => normaliseDomain('ex\u200dample.com')).toThrow(/U\+200D/);
    expect(() => normaliseDomain('bu\ufe0fcher.example')).toThrow(/U\+FE0F/);
    expect(() => normaliseDomain('bü\u034fcher.example')).toThrow(/U\+034F/);
  });

  it('accepts "/" only in classless in-addr.arpa names (RFC 2317)', () => {
    expect(normaliseDomain('5.0/26.2.0.192.in-addr.arpa.').ascii).toBe('5.0/26.2.0.192.in-addr.arpa');
  });

  it('keeps all-digit labels below the top as names instead of reading them as IPv4 numbers', () => {
    expect(normaliseDomain('123.example').ascii).toBe('123.example');
    expect(normaliseDomain('0x7f.1.example').ascii).toBe('0x7f.1.example');
  });

  it('refuses an all-numeric top-level label (RFC 3696 §2), whatever the path', () => {
    for (const name of ['123', '0x7f.1', '1e3.0.0.1', '1.2.3.4.5', '1.2.3.4.5.', 'a.b.0']) {
      expect(() => normaliseDomain(name), name).toThrow(expect.objectContaining({ code: 'invalid_input' }));
      expect(() => parseDnsTarget(name), name).toThrow(/all digits/);
      expect(isPlainAsciiName(name), name).toBe(false);
    }
  });

  it('accepts a 63-octet label and a 253-octet name', () => {
    const label63 = 'a'.repeat(63);
    expect(normaliseDomain(`${label63}.example`).ascii).toBe(`${label63}.example`);
    const name253 = [label63, label63, label63, 'a'.repeat(61)].join('.');
    expect(name253).toHaveLength(253);
    expect(normaliseDomain(`${name253}.`).ascii).toBe(name253);
  });

  it.each([
    ['', 'the name is empty'],
    ['..', 'empty label'],
    ['a..b', 'empty label'],
    ['.example.com', 'empty label'],
    ['example.com..', 'empty label'],
    [`${'a'.repeat(64)}.example`, 'is 64 octets long (at most 63)'],
    [[...Array(4)].map(() => 'a'.repeat(63)).join('.'), 'is 255 octets long (at most 253)'],
    ['exa mple.com', 'a space'],
    [' example.com', 'a space'],
    ['example.com\t', 'a control character (U+0009)'],
    ['exa\u00a0mple.com', 'a space character (U+00A0)'],
    ['ex,ample.com', 'the character "," (U+002C)'],
    ['example.com/path', 'the character "/" (U+002F)'],
    ['https://example.com', 'it is a URL: give its host name, "example.com"'],
    ['https://Bücher.example:8443/a?b', 'it is a URL: give its host name, "xn--bcher-kva.example"'],
    ['example.com:25', 'the character ":" (U+003A)'],
    ['user@example.com', 'it is an e-mail address: give its domain, "example.com"'],
    ['a@b@example.com', 'the character "@" (U+0040)'],
    ['mailto:user@example.com', 'it is an e-mail address: give its domain, "example.com"'],
    ['a*b.example', 'the character "*" (U+002A)'],
    ['bü/cher.example', 'the character "/" (U+002F)'],
    ['１２３.example', 'not a valid internationalised label'],
  ])('refuses %j with invalid_input (%s)', (input, reason) => {
    const error = invalid(input);
    expect(error.message).toContain(reason);
    expect(error.details).toEqual({ input });
  });

  it('names the input in the message with control characters escaped', () => {
    const error = invalid('evil\u0000.example\n');
    expect(error.message).toBe('invalid domain name "evil\\u0000.example\\n": it contains a control character (U+0000)');
    const bidi = invalid('abc\u202edef.example');
    expect(bidi.message).toContain('"abc\\u202edef.example"');
    expect(bidi.message).not.toContain('\u202e');
  });

  it('shortens a very long input in the message', () => {
    const error = invalid(`${'x'.repeat(500)} y`);
    expect(error.message.length).toBeLessThan(200);
    expect(error.message).toContain('…');
  });
});

describe('reverse_name', () => {
  it('gives the in-addr.arpa name of an IPv4 address', () => {
    expect(reverseName('192.0.2.10')).toBe('10.2.0.192.in-addr.arpa');
  });

  it('gives the 32-nibble ip6.arpa name of an IPv6 address', () => {
    expect(reverseName('2001:db8::1')).toBe(
      '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa',
    );
    expect(reverseName('2001:db8::1').split('.')).toHaveLength(34);
  });

  it('refuses text that is not an IP address with invalid_input', () => {
    expect(() => reverseName('example.com')).toThrow(expect.objectContaining({ code: 'invalid_input' }));
  });
});

describe('parseDnsTarget', () => {
  it('treats an IP address as a reverse lookup and echoes it in canonical form', () => {
    expect(parseDnsTarget('2001:0DB8::0001')).toEqual({
      target: '2001:db8::1',
      ascii: '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa',
      unicode: '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa',
      reverse: true,
    });
    expect(canonicalIp('192.0.2.1')).toBe('192.0.2.1');
  });

  it('treats anything else as a domain name', () => {
    expect(parseDnsTarget('Bücher.example')).toEqual({
      target: 'xn--bcher-kva.example',
      ascii: 'xn--bcher-kva.example',
      unicode: 'bücher.example',
      reverse: false,
    });
  });
});
