import { describe, expect, it } from 'vitest';
import { expandMacroTokens, parseDomainSpec, parseMacroString, truncateDomain, type MacroValues } from '../../../src/engine/mail/spf-macro.js';
import { inNetwork, ipv6Bytes, isSpfRecordText, parseSpfRecord } from '../../../src/engine/mail/spf-record.js';

describe('SPF record parsing (RFC 7208 §4.5, §4.6.1, §12)', () => {
  it('recognises the version only when followed by a space or the end, in any case', () => {
    expect(isSpfRecordText('v=spf1 -all')).toBe(true);
    expect(isSpfRecordText('V=SpF1')).toBe(true);
    expect(isSpfRecordText('v=spf10 -all')).toBe(false);
    expect(isSpfRecordText('v=spf1\t-all')).toBe(false);
    expect(isSpfRecordText(' v=spf1 -all')).toBe(false);
  });

  it('gives every term with its 1-based position, qualifier, value and CIDR lengths', () => {
    const parsed = parseSpfRecord('v=spf1  ip4:192.0.2.0/24 -a:mail.example.com/28//64 ~mx include:_spf.example.com ?all exp=why.%{d}');
    expect(parsed.problems).toEqual([]);
    expect(parsed.terms.map((term) => [term.position, term.name, term.qualifier, term.value, term.cidr4, term.cidr6, term.counts_lookup])).toEqual([
      [9, 'ip4', '+', '192.0.2.0/24', 24, null, false],
      [26, 'a', '-', 'mail.example.com', 28, 64, true],
      [53, 'mx', '~', null, null, null, true],
      [57, 'include', '+', '_spf.example.com', null, null, true],
      [82, 'all', '?', null, null, null, false],
      [87, 'exp', null, 'why.%{d}', null, null, false],
    ]);
    expect(parsed.exp?.text).toBe('exp=why.%{d}');
  });

  it('points at the offending character of a syntax error', () => {
    const parsed = parseSpfRecord('v=spf1 ip4:192.0.2.1 ip4:1.2.3 -all');
    expect(parsed.problems).toHaveLength(1);
    expect(parsed.problems[0]).toMatchObject({ code: 'syntax', position: 26, term: 'ip4:1.2.3' });
    expect(parsed.problems[0]!.message).toContain('is not an IPv4 network');
  });

  it('reports control characters and non-ASCII where they are', () => {
    const control = parseSpfRecord('v=spf1 a:ctrl.example.com\rptr -all');
    expect(control.problems[0]).toMatchObject({ code: 'syntax', position: 26 });
    expect(control.problems[0]!.message).toContain('U+000D');
    const utf8 = parseSpfRecord('v=spf1 a:\u00efgarbage.example.net -all');
    expect(utf8.problems[0]).toMatchObject({ position: 10 });
  });

  it('tells unknown mechanisms, bad modifiers and duplicate redirect/exp apart', () => {
    expect(parseSpfRecord('v=spf1 foo:bar -all').problems[0]).toMatchObject({ code: 'unknown_mechanism', position: 8 });
    expect(parseSpfRecord('v=spf1 redirect:example.com').problems[0]).toMatchObject({ code: 'unknown_mechanism' });
    expect(parseSpfRecord('v=spf1 1up=foo').problems[0]).toMatchObject({ code: 'syntax' });
    expect(parseSpfRecord('v=spf1 =all').problems[0]).toMatchObject({ code: 'syntax' });
    expect(parseSpfRecord('v=spf1 -redirect=example.com').problems[0]!.message).toContain('no qualifier');
    const twice = parseSpfRecord('v=spf1 redirect=a.example.com redirect=b.example.com');
    expect(twice.problems[0]).toMatchObject({ code: 'duplicate_modifier', position: 31 });
    const unknown = parseSpfRecord('v=spf1 moo.cow-far_out=man:dog/cat -all');
    expect(unknown.problems).toEqual([]);
    expect(unknown.terms[0]).toMatchObject({ kind: 'modifier', name: 'moo.cow-far_out', known: false });
  });

  it('checks CIDR lengths, IP networks and domain-specs as the grammar says', () => {
    const bad = [
      'v=spf1 ip4:1.2.3.4/33',
      'v=spf1 ip4:1.2.3.4/032',
      'v=spf1 ip4:1.2.3.4//32',
      'v=spf1 ip4',
      'v=spf1 ip6:::1/129',
      'v=spf1 ip6::CAFE::BABE',
      'v=spf1 a/33',
      'v=spf1 a//129',
      'v=spf1 a/24/64',
      'v=spf1 a:museum',
      'v=spf1 a:museum.',
      'v=spf1 a:abc.123',
      'v=spf1 a:example.-com',
      'v=spf1 a:example.com:8080',
      'v=spf1 include',
      'v=spf1 include:',
      'v=spf1 include:example.com/24',
      'v=spf1 exists:example.com/24',
      'v=spf1 ptr/0',
      'v=spf1 -all.',
      'v=spf1 all:foo',
      'v=spf1 exp=',
      'v=spf1 a:%{a}.example.com',
      'v=spf1 exp=%{r}.example.com',
      'v=spf1 foo=%abc',
      'v=spf1 exists:%{i0}.example.com',
    ];
    for (const record of bad) expect(parseSpfRecord(record).problems, record).not.toEqual([]);
    const good = ['v=spf1 a//0 mx/0 -all', 'v=spf1 a:foo:bar/baz.example.com', 'v=spf1 a:foo.example.xn--zckzah', 'v=spf1 ip6:::1.1.1.1/0', 'v=spf1 default=+', 'v=spf1 a:%{H}.bar'];
    for (const record of good) expect(parseSpfRecord(record).problems, record).toEqual([]);
  });
});

describe('SPF macros (RFC 7208 §7)', () => {
  const values = (overrides: Partial<MacroValues> = {}): MacroValues => ({
    s: 'strong-bad@email.example.com',
    l: 'strong-bad',
    o: 'email.example.com',
    d: 'email.example.com',
    i: '192.0.2.3',
    p: async () => 'unknown',
    v: 'in-addr',
    h: 'mx.example.org',
    c: '192.0.2.3',
    r: 'unknown',
    t: '0',
    ...overrides,
  });
  const expand = async (text: string, mode: 'domain' | 'explain' = 'domain', overrides: Partial<MacroValues> = {}) => {
    const parsed = parseMacroString(text, mode);
    if (!parsed.ok) throw new Error(parsed.error.message);
    return expandMacroTokens(parsed.tokens, values(overrides));
  };

  it('expands the examples of RFC 7208 §7.4', async () => {
    expect(await expand('%{s}')).toBe('strong-bad@email.example.com');
    expect(await expand('%{o}')).toBe('email.example.com');
    expect(await expand('%{d}')).toBe('email.example.com');
    expect(await expand('%{d4}')).toBe('email.example.com');
    expect(await expand('%{d3}')).toBe('email.example.com');
    expect(await expand('%{d2}')).toBe('example.com');
    expect(await expand('%{d1}')).toBe('com');
    expect(await expand('%{dr}')).toBe('com.example.email');
    expect(await expand('%{d2r}')).toBe('example.email');
    expect(await expand('%{l}')).toBe('strong-bad');
    expect(await expand('%{l-}')).toBe('strong.bad');
    expect(await expand('%{lr}')).toBe('strong-bad');
    expect(await expand('%{lr-}')).toBe('bad.strong');
    expect(await expand('%{l1r-}')).toBe('strong');
    expect(await expand('%{ir}.%{v}._spf.%{d2}')).toBe('3.2.0.192.in-addr._spf.example.com');
    expect(await expand('%{lr-}.lp._spf.%{d2}')).toBe('bad.strong.lp._spf.example.com');
    expect(await expand('%{lr-}.lp.%{ir}.%{v}._spf.%{d2}')).toBe('bad.strong.lp.3.2.0.192.in-addr._spf.example.com');
    expect(await expand('%{ir}.%{v}.%{l1r-}.lp._spf.%{d2}')).toBe('3.2.0.192.in-addr.strong.lp._spf.example.com');
    expect(await expand('%{d2}.trusted-domains.example.net')).toBe('example.com.trusted-domains.example.net');
    const v6 = { i: '1.0.b.c.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2', v: 'ip6' };
    expect(await expand('%{ir}.%{v}._spf.%{d2}', 'domain', v6)).toBe('2.0.0.1.0.d.b.8.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.c.b.0.1.ip6._spf.example.com');
  });

  it('URL-escapes upper-case macros and expands the escapes %% %_ %-', async () => {
    expect(await expand('%{L}', 'domain', { l: '~jack&jill=up-a_b3.c' })).toBe('~jack%26jill%3Dup-a_b3.c');
    expect(await expand('macro%%percent%_%_space%-url-space.example.com')).toBe('macro%percent  space%20url-space.example.com');
  });

  it('allows c, r and t only in explanations', () => {
    expect(parseMacroString('%{c}', 'domain').ok).toBe(false);
    expect(parseMacroString('%{c} at %{t}', 'explain').ok).toBe(true);
  });

  it('needs a domain-spec to end with a macro or a dot and a top label', () => {
    expect(parseDomainSpec('%{d}').ok).toBe(true);
    expect(parseDomainSpec('_spf.%{d2}').ok).toBe(true);
    expect(parseDomainSpec('foo.example.com.').ok).toBe(true);
    expect(parseDomainSpec('foo-bar').ok).toBe(false);
    expect(parseDomainSpec('').ok).toBe(false);
  });

  it('drops labels from the left of an expanded name longer than 253 characters', () => {
    const long = `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.example.com`;
    const truncated = truncateDomain(long);
    expect(truncated.length).toBeLessThanOrEqual(253);
    expect(truncated).toBe(`${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.example.com`);
  });
});

describe('address matching', () => {
  it('matches prefixes bit by bit and keeps the families apart', () => {
    expect(inNetwork(Uint8Array.from([192, 0, 2, 130]), Uint8Array.from([192, 0, 2, 128]), 25)).toBe(true);
    expect(inNetwork(Uint8Array.from([192, 0, 2, 127]), Uint8Array.from([192, 0, 2, 128]), 25)).toBe(false);
    expect(inNetwork(ipv6Bytes('2001:db8::1'), ipv6Bytes('2001:db8::'), 32)).toBe(true);
    expect(inNetwork(Uint8Array.from([1, 2, 3, 4]), ipv6Bytes('::'), 0)).toBe(false);
    expect([...ipv6Bytes('::1.1.1.1')].slice(12)).toEqual([1, 1, 1, 1]);
  });
});
