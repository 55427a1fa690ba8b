import { clusterWidth, displayWidth, forEachCluster, isPrintableAscii } from './display-width.js';

// Not wrap-ansi: it measures whole words with Intl.Segmenter, which is quadratic in a word's
// length on Node 20 (display-width.ts), so one long unbroken value (a TXT record, a DKIM key)
// took seconds to minutes. wrap-ansi stays the reference this wrapper is tested against.

/**
 * A space the line may break at: one no mark or joiner follows (a space
 * followed by a combining mark is one grapheme cluster, the way a lone
 * accent is written, and stays whole).
 */
const BREAKING_SPACE = / (?![\p{M}\u200c\u200d\u{1f3fb}-\u{1f3ff}])/u;

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * Lines of a paragraph (no line break in it) of at most `columns` columns:
 * broken at spaces; a word wider than the columns broken between grapheme
 * clusters, starting on the current line when that costs no extra line;
 * spaces at the ends of lines dropped. The lines wrap-ansi gives with
 * `{ hard: true, trim: true }` (test/output/wrap-reference.test.ts checks
 * it), in time linear in the text's length.
 */
function wrapParagraph(text: string, columns: number): string[] {
  const rows: string[] = [];
  // The row being filled, as pieces joined when it ends, and its width in columns.
  let pieces: string[] = [];
  let rowWidth = 0;
  const endRow = () => {
    rows.push(pieces.join(''));
    pieces = [];
    rowWidth = 0;
  };
  const words = text.split(BREAKING_SPACE);
  for (let index = 0; index < words.length; index++) {
    const word = words[index]!;
    if (index > 0 && rowWidth > 0) {
      pieces.push(' ');
      rowWidth += 1;
    }
    const width = displayWidth(word);
    if (width > columns) {
      // Start on this line only if that does not add a line break (wrap-ansi's rule).
      const breaksStartingHere = 1 + Math.floor((width - (columns - rowWidth) - 1) / columns);
      const breaksStartingNext = Math.floor((width - 1) / columns);
      if (breaksStartingNext < breaksStartingHere) endRow();
      breakWord(word, columns);
      continue;
    }
    if (rowWidth + width > columns && rowWidth > 0 && width > 0) endRow();
    pieces.push(word);
    rowWidth += width;
  }
  endRow();
  return rows.map(trimEndSpaces);

  /** A word wider than the columns, cluster by cluster: a row ends when the next cluster does not fit or when it is full. */
  function breakWord(word: string, columns: number): void {
    if (PRINTABLE_ASCII.test(word)) {
      // One column a character, each a cluster: rows of `columns` characters, the first what this row has room for.
      for (let from = 0; from < word.length; ) {
        if (rowWidth >= columns) endRow();
        const take = Math.min(columns - rowWidth, word.length - from);
        pieces.push(word.slice(from, from + take));
        rowWidth += take;
        from += take;
      }
      return;
    }
    let from = 0;
    let pending = -1;
    forEachCluster(word, (start, end) => {
      // A row filled exactly by the previous cluster ends before this one.
      if (pending !== -1) {
        pieces.push(word.slice(from, pending));
        endRow();
        from = pending;
        pending = -1;
      }
      const width = end - start === 1 && isPrintableAscii(word.charCodeAt(start)) ? 1 : clusterWidth(word.slice(start, end));
      if (width > 0 && rowWidth > 0 && rowWidth + width > columns) {
        pieces.push(word.slice(from, start));
        endRow();
        from = start;
      }
      rowWidth += width;
      if (rowWidth === columns) pending = end;
    });
    const rest = word.slice(from);
    if (rowWidth === 0 && rest !== '' && rows.length > 0) {
      // Clusters of no width after a row the word filled exactly stay on that row, which goes on (as in wrap-ansi).
      pieces = [rows.pop()!, rest];
      rowWidth = columns;
    } else {
      pieces.push(rest);
    }
  }
}

/** A row without the spaces at its end (a loop: a regular expression would backtrack over a long run of spaces). */
function trimEndSpaces(row: string): string {
  let end = row.length;
  while (end > 0 && row.charCodeAt(end - 1) === 0x20) end -= 1;
  return end === row.length ? row : row.slice(0, end);
}

/**
 * Text wrapped to `width` display columns: broken at spaces, a word wider
 * than the width (a TXT record, a DKIM key) broken hard. A line break in
 * the text stays one; the indentation a line starts with is kept on each
 * line it wraps into. The text is plain: escaped (terminal-text.ts) and
 * not yet coloured. Linear in the text's length.
 */
export function wrapText(text: string, width: number): string[] {
  const columns = Math.max(1, Math.floor(width));
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    const indent = /^ */.exec(paragraph)![0];
    const keep = indent.length < columns / 2 ? indent : '';
    const body = paragraph.slice(indent.length);
    if (body.trim() === '') {
      lines.push('');
      continue;
    }
    for (const line of wrapParagraph(body, columns - keep.length)) lines.push(keep + line);
  }
  return lines;
}

/**
 * Text after `first` on its first line and `rest` on the lines it wraps
 * into (a hanging indent), within `width` columns.
 */
export function wrapHanging(text: string, width: number, first: string, rest: string): string[] {
  const room = width - Math.max(displayWidth(first), displayWidth(rest));
  return wrapText(text, Math.max(1, room)).map((line, index) => `${index === 0 ? first : rest}${line}`.trimEnd());
}
