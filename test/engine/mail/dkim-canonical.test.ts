/**
 * The pieces under the DKIM verifier: the tag-list reader (RFC 6376 §3.2),
 * the message reader (RFC 5322 §2.2) and canonicalization (RFC 6376 §3.4),
 * checked with generated input against the rules written out plainly.
 */
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashDkimBodies, headerHashInput } from '../../../src/engine/mail/dkim-canonical.js';
import { readMessageParts } from '../../../src/engine/mail/dkim-message-reader.js';
import { parseDkimTagList } from '../../../src/engine/mail/dkim-tag-list.js';

const fws = fc.constantFrom('', ' ', '\t', '\r\n ', ' \r\n\t ');
const tagName = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{0,5}$/);
/** tval: VALCHAR runs (no ";"), several joined by whitespace. */
const tagValue = fc.array(fc.stringMatching(/^[\x21-\x3a\x3c-\x7e]{1,8}$/), { maxLength: 3 }).map((parts) => parts.join(' '));

describe('the tag-list reader (RFC 6376 §3.2)', () => {
  it('property: reads back any tag-list written with folding whitespace anywhere the grammar allows', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(tagName, tagValue), { selector: ([name]) => name, minLength: 1, maxLength: 6 }), fc.array(fws, { minLength: 30, maxLength: 30 }), fc.boolean(), (tags, spaces, trailing) => {
        let at = 0;
        const space = () => spaces[at++ % spaces.length]!;
        const text = tags.map(([name, value]) => `${space()}${name}${space()}=${space()}${value}${value === '' ? '' : space()}`).join(';') + (trailing ? ';' : '');
        const parsed = parseDkimTagList(text);
        expect(parsed.problems).toEqual([]);
        expect(parsed.tags).toEqual(tags.map(([name, value]) => ({ name, value })));
      }),
      { numRuns: 1000 },
    );
  });

  it('property: a repeated tag name, or a part that is not tag=value, makes the list invalid', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(tagName, tagValue), { minLength: 1, maxLength: 5 }), fc.nat(), fc.constantFrom('repeat', 'junk', 'empty'), (tags, pick, kind) => {
        const [name, value] = tags[pick % tags.length]!;
        const extra = kind === 'repeat' ? `${name}=${value}` : kind === 'junk' ? 'k rsa' : '';
        const text = [...tags.map(([n, v]) => `${n}=${v}`), extra, 'z=1'].join('; ');
        expect(parseDkimTagList(text).problems.length).toBeGreaterThan(0);
      }),
    );
  });
});

const fieldName = fc.constantFrom('From', 'To', 'Subject', 'X-Tag', 'Received', 'subject');
const word = fc.stringMatching(/^[\x21-\x7e]{1,10}$/);
/** A field value: words separated by spaces, tabs or folds (CRLF then whitespace). */
const fieldValue = fc.array(fc.tuple(fc.constantFrom(' ', '  ', '\t', '\r\n ', '\r\n\t', ' \r\n  '), word), { maxLength: 6 }).map((parts) => parts.map(([gap, text]) => gap + text).join(''));

describe('the message reader', () => {
  it('property: gives back each field whole, continuation lines joined, whether lines end in CRLF or LF', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fieldName, fieldValue), { minLength: 1, maxLength: 8 }), fc.string({ maxLength: 40 }), (fields, body) => {
        const header = fields.map(([name, value]) => `${name}:${value}\r\n`).join('');
        const crlf = readMessageParts(Buffer.from(`${header}\r\n${body}`, 'latin1'), 'm');
        const lf = readMessageParts(Buffer.from(`${header}\r\n`.replace(/\r\n/g, '\n') + body, 'latin1'), 'm');
        const expected = fields.map(([name, value]) => ({ name, key: name.toLowerCase(), raw: `${name}:${value}`, valueStart: name.length + 1 }));
        expect(crlf.fields).toEqual(expected);
        expect(lf.fields).toEqual(expected);
        expect(crlf.body.toString('latin1')).toBe(body);
      }),
      { numRuns: 500 },
    );
  });

  it('reads a message with no body, a field name with space before the colon, and a line that is no field', () => {
    expect(readMessageParts(Buffer.from('From: a@b.c\r\nSubject: x'), 'm')).toMatchObject({ fields: [{ name: 'From' }, { name: 'Subject', raw: 'Subject: x' }], body: Buffer.alloc(0) });
    expect(readMessageParts(Buffer.from('From: a@b.c\r\nSubject : x\r\n\r\n'), 'm').fields[1]).toMatchObject({ name: 'Subject', key: 'subject', valueStart: 9 });
    expect(readMessageParts(Buffer.from('From: a@b.c\r\nnot a field\r\n\r\n'), 'm').fields[1]).toEqual({ name: null, key: null, raw: 'not a field', valueStart: 0 });
  });
});

/** Canonical bodies written out as RFC 6376 §3.4.3 and §3.4.4 word them, for bodies whose lines end in CRLF. */
function referenceBody(body: string, canonicalization: 'simple' | 'relaxed'): string {
  let text = body;
  if (canonicalization === 'relaxed') text = text.replace(/[ \t]+\r\n/g, '\r\n').replace(/[ \t]+/g, ' ');
  text = text.replace(/(\r\n)+$/, '\r\n');
  if (text === '\r\n') text = '';
  if (canonicalization === 'simple' && text === '') return '\r\n';
  return text;
}

const sha256 = (text: string) => createHash('sha256').update(Buffer.from(text, 'latin1')).digest();
/** Bodies of lines ending in CRLF, with spaces, tabs and empty lines where they matter. */
const body = fc
  .array(fc.array(fc.constantFrom('a', 'b', ' ', '  ', '\t', 'é', '\r'), { maxLength: 8 }).map((chars) => chars.join('')), { maxLength: 8 })
  .map((lines) => lines.map((line) => `${line}\r\n`).join(''));

describe('body canonicalization (RFC 6376 §3.4.3, §3.4.4)', () => {
  it('property: hashes what the RFC words give, cut at any l=, with the canonical length', () => {
    fc.assert(
      fc.property(body, fc.constantFrom('simple' as const, 'relaxed' as const), fc.option(fc.nat({ max: 80 }), { nil: null }), (text, canonicalization, limit) => {
        const canonical = referenceBody(text, canonicalization);
        const request = { canonicalization, limit: limit === null ? null : BigInt(limit) };
        const [result] = [...hashDkimBodies(Buffer.from(text, 'latin1'), [request]).values()];
        expect(result!.canonicalLength).toBe(Buffer.byteLength(canonical, 'latin1'));
        expect(result!.digest.equals(sha256(limit === null ? canonical : canonical.slice(0, limit)))).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('property: LF line ends hash as CRLF, and relaxed ignores spaces added at line ends', () => {
    fc.assert(
      fc.property(body, (text) => {
        const hash = (value: string, canonicalization: 'simple' | 'relaxed') => [...hashDkimBodies(Buffer.from(value, 'latin1'), [{ canonicalization, limit: null }]).values()][0]!.digest;
        const lf = text.replace(/\r\n/g, '\n');
        if (!lf.includes('\r')) expect(hash(lf, 'simple').equals(hash(text, 'simple'))).toBe(true);
        expect(hash(text.replace(/\r\n/g, ' \t\r\n'), 'relaxed').equals(hash(text, 'relaxed'))).toBe(true);
      }),
    );
  });

  it('gives CRLF for an empty body under simple and nothing under relaxed, and adds a missing final CRLF', () => {
    const one = (text: string, canonicalization: 'simple' | 'relaxed') => [...hashDkimBodies(Buffer.from(text), [{ canonicalization, limit: null }]).values()][0]!;
    expect(one('', 'simple')).toMatchObject({ canonicalLength: 2, digest: sha256('\r\n') });
    expect(one('\r\n\r\n', 'relaxed')).toMatchObject({ canonicalLength: 0, digest: sha256('') });
    expect(one('last line', 'simple').digest).toEqual(sha256('last line\r\n'));
    expect(one('last  line \t', 'relaxed').digest).toEqual(sha256('last line\r\n'));
  });
});

describe('header canonicalization and the signature field (RFC 6376 §3.4.1, §3.4.2, §3.7)', () => {
  it('property: relaxed gives the lower-case name and the value unfolded, runs of space made one, none at the ends', () => {
    fc.assert(
      fc.property(fieldName, fieldValue, (name, value) => {
        const parts = readMessageParts(Buffer.from(`${name}:${value}\r\nDKIM-Signature: b=abc\r\n\r\n`, 'latin1'), 'm');
        const input = headerHashInput(parts.fields, [name.toLowerCase()], parts.fields[1]!, 'relaxed').toString('latin1');
        const expected = value.replace(/\r\n/g, '').replace(/[ \t]+/g, ' ').trim();
        expect(input).toBe(`${name.toLowerCase()}:${expected}\r\ndkim-signature:b=`);
      }),
    );
  });

  it('takes fields from the bottom up, a name listed twice the next one up, an absent one as nothing', () => {
    const parts = readMessageParts(Buffer.from('Received: one\r\nFrom: first@a.test\r\nReceived: two\r\nDKIM-Signature: v=1; h=received:received:received:from:x-absent; b=\r\n AbC= ;x=1\r\n\r\n'), 'm');
    expect(headerHashInput(parts.fields, ['received', 'received', 'received', 'from', 'x-absent'], parts.fields[3]!, 'simple').toString()).toBe(
      'Received: two\r\nReceived: one\r\nFrom: first@a.test\r\nDKIM-Signature: v=1; h=received:received:received:from:x-absent; b=;x=1',
    );
  });

  it('empties b= with the whitespace around its value, and never takes bh= for it', () => {
    const parts = readMessageParts(Buffer.from('DKIM-Signature: bh=xyz; b = \r\n\tAB CD \r\n ; d=a.test\r\n\r\n'), 'm');
    expect(headerHashInput(parts.fields, [], parts.fields[0]!, 'simple').toString()).toBe('DKIM-Signature: bh=xyz; b =; d=a.test');
    expect(headerHashInput(parts.fields, [], parts.fields[0]!, 'relaxed').toString()).toBe('dkim-signature:bh=xyz; b =; d=a.test');
  });
});
