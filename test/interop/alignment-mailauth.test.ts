/**
 * Identifier alignment by the public suffix list against an independent
 * implementation: mailauth 7's getAlignment (`mailauth7` in
 * devDependencies), strict and relaxed, on generated pairs of names built
 * around suffixes of every kind the list has (ICANN, private, wildcard and
 * exception rules), in any case, with trailing dots and internationalised
 * labels. The suffixes are ones both copies of the list have held for years,
 * so a newer list on one side cannot make them disagree.
 */
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { domainsAligned } from '../../src/engine/mail/organisational-domain.js';

type GetAlignment = (fromDomain: string, domains: string[], strict: boolean) => { domain: string } | false;
const { getAlignment } = createRequire(import.meta.url)('mailauth7/lib/tools.js') as { getAlignment: GetAlignment };

const SUFFIXES = ['com', 'org', 'de', 'co.uk', 'com.au', 'jp', 'kyoto.jp', 'ck', 'www.ck', 'github.io', 'blogspot.com', 'appspot.com', 'example', 'test'];
const LABELS = ['mail', 'example', 'a', 'b', 'news', 'bücher', 'xn--bcher-kva', 'münchen', '_dmarc', 'www'];

const domain = fc
  .tuple(fc.array(fc.constantFrom(...LABELS), { maxLength: 3 }), fc.constantFrom(...SUFFIXES), fc.boolean(), fc.boolean())
  .map(([labels, suffix, upper, dot]) => {
    const name = [...labels, suffix].join('.');
    return `${upper ? name.toUpperCase() : name}${dot ? '.' : ''}`;
  });

describe('identifier alignment against mailauth 7', () => {
  it('gives mailauth\'s verdict, strict and relaxed, for generated pairs of names', () => {
    fc.assert(
      fc.property(domain, domain, fc.boolean(), (from, other, strict) => {
        expect(domainsAligned(from, other, strict)).toBe(getAlignment(from, [other], strict) !== false);
      }),
      { numRuns: 3000 },
    );
  });

  it('agrees on the pairs the strict reading turns on', () => {
    const pairs: Array<[string, string]> = [
      ['example.com', 'mail.example.com'],
      ['a.example.co.uk', 'b.example.co.uk'],
      ['alice.github.io', 'bob.github.io'],
      ['foo.bar.ck', 'baz.bar.ck'],
      ['www.ck', 'mail.www.ck'],
    ];
    for (const [from, other] of pairs) {
      for (const strict of [true, false]) expect([from, other, strict, domainsAligned(from, other, strict)]).toEqual([from, other, strict, getAlignment(from, [other], strict) !== false]);
    }
  });
});
