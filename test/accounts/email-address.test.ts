/**
 * The one reading of an e-mail address (src/accounts/email-address.ts):
 * one canonical spelling per mailbox, and nothing invisible in it.
 */
import { domainToUnicode } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalEmail, canonicalEmailOrNull, needsSmtpUtf8 } from '../../src/accounts/email-address.js';

const atext = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&\'*+-/=?^_`{|}~'.split(''), 'é', 'ü', 'ß', 'ж', '中', 'ñ', 'ø');
const localPart = fc.array(fc.string({ unit: atext, minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 3 }).map((atoms) => atoms.join('.'));
const label = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'.split(''), 'ü', 'ö', 'é', 'ж'), minLength: 1, maxLength: 10 });
const domain = fc.tuple(fc.array(label, { minLength: 1, maxLength: 3 }), fc.constantFrom('com', 'org', 'de', 'рф')).map(([labels, tld]) => [...labels, tld].join('.'));
const address = fc.tuple(localPart, domain).map(([local, host]) => `${local}@${host}`);

/** Other spellings of the same mailbox: NFD local part, upper-case or A-label domain, a final dot, spaces around. */
const respelled = fc.tuple(address, fc.boolean(), fc.constantFrom('none', 'upper', 'a-label'), fc.boolean(), fc.constantFrom('', ' ', '\t')).map(([text, nfd, domainForm, dot, pad]) => {
  const at = text.lastIndexOf('@');
  const local = nfd ? text.slice(0, at).normalize('NFD') : text.slice(0, at);
  let host = text.slice(at + 1);
  if (domainForm === 'upper') host = host.toUpperCase();
  if (domainForm === 'a-label') host = canonicalEmail(text).split('@')[1]!;
  return { original: text, spelling: `${pad}${local}@${host}${dot ? '.' : ''}${pad}` };
});

describe('canonicalEmail', () => {
  it('is idempotent: the canonical form of a canonical form is itself', () => {
    fc.assert(
      fc.property(address, (text) => {
        const once = canonicalEmail(text);
        expect(canonicalEmail(once)).toBe(once);
      }),
    );
  });

  it('gives every spelling of one mailbox one form, so two spellings cannot both have accounts', () => {
    fc.assert(
      fc.property(respelled, ({ original, spelling }) => {
        expect(canonicalEmail(spelling)).toBe(canonicalEmail(original));
      }),
    );
    expect(canonicalEmail('a@münchen.de')).toBe('a@xn--mnchen-3ya.de');
    expect(canonicalEmail('a@xn--mnchen-3ya.de')).toBe('a@xn--mnchen-3ya.de');
    expect(canonicalEmail('jos\u0065\u0301@Example.COM')).toBe('jos\u00e9@example.com');
  });

  it('keeps the case of the local part (RFC 5321 §2.4) and the domain in lower-case A-labels', () => {
    fc.assert(
      fc.property(address, (text) => {
        const [local, host] = [canonicalEmail(text).slice(0, canonicalEmail(text).lastIndexOf('@')), canonicalEmail(text).split('@').at(-1)!];
        expect(local).toBe(text.slice(0, text.lastIndexOf('@')).normalize('NFC'));
        expect(host).toMatch(/^[a-z0-9.-]+$/);
        expect(domainToUnicode(host)).toBe(text.split('@').at(-1)!.toLowerCase().normalize('NFC'));
      }),
    );
  });

  it('refuses control, format, bidirectional and invisible characters anywhere, naming the character', () => {
    const hidden = fc.constantFrom('\u0000', '\u0007', '\u0008', '\u001b', '\u007f', '\u0085', '\u009b', '\u200b', '\u200d', '\u202e', '\u2066', '\u00ad', '\ufeff', '\u2028', '\ue000', '\ufe0f', '\u3164');
    fc.assert(
      fc.property(address, hidden, fc.nat(), (text, character, at) => {
        // Not at either end, where trimming would take a white-space one away.
        const position = 1 + (at % (text.length - 1));
        const spoiled = `${text.slice(0, position)}${character}${text.slice(position)}`;
        expect(() => canonicalEmail(spoiled)).toThrow(expect.objectContaining({ code: 'usage', message: expect.stringMatching(/U\+[0-9A-F]{4}/) }));
        expect(canonicalEmailOrNull(spoiled)).toBeNull();
      }),
    );
  });

  it('refuses what is not an address, with a usage error, and never throws anything else', () => {
    for (const bad of ['', 'ada', '@example.com', 'ada@', 'a b@example.com', 'ada@localhost', 'ada@1.2.3.4', 'ada@[192.0.2.1]', '"a b"@example.com', 'a..b@example.com', '.a@example.com', 'a.@example.com', 'a@-x.com', 'a@x-.com', `${'a'.repeat(65)}@example.com`, 'a@b@example.com']) {
      expect(() => canonicalEmail(bad), bad).toThrow(expect.objectContaining({ code: 'usage' }));
    }
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 80 }), (text) => {
        try {
          const canonical = canonicalEmail(text);
          expect(canonicalEmail(canonical)).toBe(canonical);
        } catch (error) {
          expect((error as { code?: string }).code).toBe('usage');
        }
      }),
    );
  });

  it('says which addresses need SMTPUTF8 to be sent to: those with more than ASCII before the @', () => {
    expect(needsSmtpUtf8('jos\u00e9@example.com')).toBe(true);
    expect(needsSmtpUtf8('jose@xn--mnchen-3ya.de')).toBe(false);
  });
});
