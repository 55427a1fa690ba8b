import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { forEachCluster, standsAlone } from '../../src/output/human/display-width.js';

/** Offsets where Intl.Segmenter (ICU, the reference) starts a grapheme cluster, and the text's end. */
function referenceBoundaries(text: string): number[] {
  return [...new Intl.Segmenter().segment(text)].map((segment) => segment.index).concat(text.length);
}

function clusterBoundaries(text: string): number[] {
  const cuts: number[] = [];
  forEachCluster(text, (start) => cuts.push(start));
  return cuts.concat(text.length);
}

const STANDING_ALONE = [
  [0x20, 0x7e],
  [0xa0, 0x2ff],
  [0x2010, 0x2027],
  [0x2030, 0x205e],
  [0x2190, 0x2bff],
] as const;
const documented = STANDING_ALONE.flatMap(([first, last]) => Array.from({ length: last - first + 1 }, (_, i) => first + i));
/** What the code takes: the claims below are checked on these. */
const standing = Array.from({ length: 0x10000 }, (_, code) => code).filter(standsAlone);

describe('grapheme clusters without the segmenter', () => {
  it('takes exactly the characters of the documented ranges', () => {
    expect(standing).toEqual(documented);
  });

  it('has ICU put a boundary between any two characters that stand alone', () => {
    // Every character against the ends of each range and the special ones in them (© and ® are emoji bases, U+00AD
    // a format character, U+2028-U+2029 outside, U+20xx beside the combining marks for symbols); the complete square
    // (about 12 million pairs) agreed too when the ranges were chosen.
    const partners = [...STANDING_ALONE.flat(), 0x41, 0xa9, 0xad, 0xae, 0xb7, 0x2014, 0x2026, 0x2500, 0x2588, 0x2800, 0x2b50].map((code) => String.fromCharCode(code));
    const segmenter = new Intl.Segmenter();
    const joined: string[] = [];
    for (const code of standing) {
      const char = String.fromCharCode(code);
      for (const partner of partners) {
        for (const pair of [char + partner, partner + char]) {
          if ([...segmenter.segment(pair)].length !== 2) joined.push(`U+${pair.charCodeAt(0).toString(16)} U+${pair.charCodeAt(1).toString(16)}`);
        }
      }
    }
    expect(joined).toEqual([]);
  });

  it('cuts text as ICU does, whatever joins what stands alone', () => {
    const piece = fc.oneof(
      { arbitrary: fc.constantFrom(...standing).map((code) => String.fromCharCode(code)), weight: 8 },
      // What joins a neighbour: combining and enclosing marks, a spacing mark, joiners, a variation selector, an emoji
      // modifier, prepended characters (U+0600, U+0D4E), regional indicators, Hangul jamo, CR LF, a keycap.
      { arbitrary: fc.constantFrom('\u0301', '\u20dd', '\u093e', '\u200d', '\u200c', '\ufe0f', '\u{1f3fb}', '\u0600', '\u0d4e', '\u{1f1ef}', '\u{1f1f5}', '\u1100', '\u1161', '\u11a8', '\r', '\n', '\u20e3'), weight: 3 },
      // Others, and the neighbours of each range.
      { arbitrary: fc.constantFrom('漢', '한', '😀', '❤', 'क', '\u094d', '\u00ad', '\u0300', '\u200f', '\u2028', '\u205f', '\u218f', '\u2c00'), weight: 2 },
    );
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 60 }), (pieces) => {
        const text = pieces.join('');
        expect(clusterBoundaries(text)).toEqual(referenceBoundaries(text));
      }),
      { numRuns: 2000 },
    );
  });

  describe('which text needs the segmenter', () => {
    const Real = Intl.Segmenter;
    const useSegmenter = (value: typeof Intl.Segmenter) => Object.defineProperty(Intl, 'Segmenter', { value, configurable: true, writable: true });
    afterEach(() => {
      useSegmenter(Real);
      vi.resetModules();
    });

    it('is not made for the lines the views draw, and is for a combining mark', async () => {
      let made = 0;
      useSegmenter(
        class extends Real {
          constructor(...args: ConstructorParameters<typeof Intl.Segmenter>) {
            super(...args);
            made += 1;
          }
        },
      );
      vi.resetModules();
      const { displayWidth } = await import('../../src/output/human/display-width.js');
      expect(displayWidth('8.8.8.8  Mountain View, California, US · AS15169 Google LLC')).toBe(59);
      expect(displayWidth('┌──────┬─────┐ │ Zürich – Łódź … █▌ ⠋')).toBe(37);
      expect(made).toBe(0);
      expect(displayWidth('Cafe\u0301')).toBe(4);
      expect(made).toBe(1);
    });
  });
});
