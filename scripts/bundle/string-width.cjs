'use strict';
// cli-table3's string-width in the bundle (scripts/bundle.mjs). cli-table3
// measures every cell with string-width, whose emoji expression costs
// several ms to compile on first use, more than the rest of a table. Text
// made only of printable ASCII, Latin-1 and Latin Extended letters, general
// punctuation (the ellipsis cli-table3 truncates with) and box drawing
// (colour codes aside) holds no emoji, wide or zero-width characters, so
// string-width counts one column per character; any other text still goes
// to string-width. test/output/string-width.test.ts holds the two to the
// same answers.
const COLOUR_CODE = /\x1b\[[0-9;]*m/g;
const ONE_COLUMN_EACH = /^[\x20-\x7e\xa0-\u02ff\u2010-\u2027\u2500-\u257f]*$/;

let stringWidth;

module.exports = function width(text) {
  const plain = typeof text === 'string' && text.includes('\x1b') ? text.replace(COLOUR_CODE, '') : text;
  if (typeof plain === 'string' && ONE_COLUMN_EACH.test(plain)) return plain.length;
  stringWidth ??= require('string-width');
  return stringWidth(text);
};
