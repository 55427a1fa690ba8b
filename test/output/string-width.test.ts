import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
/** The string-width cli-table3 itself would load. */
const stringWidth = createRequire(require.resolve('cli-table3'))('string-width') as (text: string) => number;
const bundledWidth = require('../../scripts/bundle/string-width.cjs') as (text: unknown) => number;

const CORPUS = [
  '', 'Mountain View', 'São Paulo', 'Zürich', 'Łódź', 'Đà Nẵng', 'Reykjavík', 'İstanbul', 'Århus',
  'long value…', '─│┌┐', '\x1b[36mlocation.city\x1b[39m', '\x1b[2m-\x1b[22m', '\x1b[1mquery\x1b[22m',
  '東京', '서울', 'Москва', 'e\u0301', 'tab\there', 'bell\x07', '😀 smile', '👩‍💻', '©', '©\uFE0F', '⌚', 'Ω', '\u00ad',
  '{"signal":"hosting_asn","matched":"AS15169"}', 'a\u200bb', '\x1b]8;;http://x\x07link\x1b]8;;\x07',
];

describe("the bundle's string-width for cli-table3", () => {
  it('gives what string-width gives, for Latin, CJK, Cyrillic, emoji, combining and control characters and colour codes', () => {
    for (const text of CORPUS) expect([text, bundledWidth(text)]).toEqual([text, stringWidth(text)]);
  });

  it('gives what string-width gives for every character of the first 0x3000 code points', () => {
    for (let code = 0; code < 0x3000; code++) {
      const text = `x${String.fromCharCode(code)}y`;
      expect([code, bundledWidth(text)]).toEqual([code, stringWidth(text)]);
    }
  });
});
