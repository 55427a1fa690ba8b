import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import wrapAnsi from 'wrap-ansi';
import { wrapText } from '../../src/output/human/wrap.js';

/**
 * wrap-ansi (`{ hard: true, trim: true }`) is the reference the views'
 * wrapping keeps to, as csv-stringify is for the CSV writer: the same lines
 * for the same text, on characters both measure alike. wrap-ansi is not
 * used to draw: it segments a whole word at once, and V8's segmenter is
 * quadratic in the length of what it segments.
 */

/** The lines wrap-ansi gives, with wrapText's handling of line breaks and indentation. */
function reference(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    const indent = /^ */.exec(paragraph)![0];
    const keep = indent.length < width / 2 ? indent : '';
    const body = paragraph.slice(indent.length);
    if (body.trim() === '') {
      lines.push('');
      continue;
    }
    for (const line of wrapAnsi(body, width - keep.length, { hard: true, trim: true, wordWrap: true }).split('\n')) lines.push(keep + line);
  }
  return lines;
}

// Characters whose width both agree on: ASCII, East Asian wide and halfwidth forms, precomposed and combining accents, emoji,
// and a control (a cluster of no width: views escape controls first, but the rule for clusters of no width is the same).
// (No mark after a space or an emoji: wrap-ansi breaks at a space a mark follows, where wrapText keeps the cluster whole,
// and string-width 8 counts an emoji with a mark one column.)
const character = fc.constantFrom('a', 'b', 'Z', '9', '.', '-', '=', '"', '漢', '字', '한', 'Ａ', 'ｱ', 'é', 'e\u0301', 'o\u0308\u0301', '😀', '👍🏻', '🇯🇵', '❤️', '👩‍🚀', '\u0001');
const run = (maxLength: number) => fc.array(character, { minLength: 1, maxLength }).map((chars) => chars.join(''));
const word = run(40);
const gap = fc.constantFrom(' ', ' ', ' ', '  ', '   ', '\n', '\n  ');
// wrap-ansi composes the text (NFC) first; wrapText keeps it as it is: compare on composed text.
const text = fc
  .tuple(fc.constantFrom('', ' ', '  '), fc.array(fc.tuple(word, gap), { minLength: 1, maxLength: 30 }), fc.constantFrom('', ' ', '  '))
  .map(([lead, parts, tail]) => (lead + parts.map(([w, g]) => w + g).join('') + tail).normalize('NFC'));

describe('wrapText against wrap-ansi', () => {
  it('gives the lines wrap-ansi gives, spaces, line breaks and words wider than the width included', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 2, max: 90 }), (input, width) => {
        expect(wrapText(input, width)).toEqual(reference(input, width));
      }),
      { numRuns: 2000 },
    );
  });

  it('breaks long unbreakable runs as wrap-ansi does, wherever they start on a line', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(run(400), gap)), fc.integer({ min: 2, max: 90 }), (parts, width) => {
        const input = parts.map(([w, g]) => w + g).join('').normalize('NFC');
        expect(wrapText(input, width)).toEqual(reference(input, width));
      }),
      { numRuns: 300 },
    );
  });
});
