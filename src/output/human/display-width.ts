import stringWidth from 'string-width';

/**
 * How many terminal columns text takes, grapheme cluster by grapheme
 * cluster (UAX #29): the one measure the human views wrap, fit and pad
 * with, so that a line wrapped to a width is padded to that width.
 *
 * Every step is linear in the text's length. Two things in the way are
 * avoided on purpose:
 * - V8's Intl.Segmenter (Node 20) is quadratic in the length of the string
 *   it segments (a 64 KB string takes seconds; chromium issue 326176949):
 *   text is segmented in windows of a few hundred code units instead.
 * - What the views show most (ASCII, Latin names, their punctuation and box
 *   drawing: see standsAlone) never reaches it; making the first segmenter
 *   of a run alone costs ICU about 10 ms.
 */

/** Code units segmented at a time; Node 20's segmenter is quadratic within one call, so this bounds its cost per character. */
const WINDOW = 256;

let segmenter: Intl.Segmenter | undefined;

/** A character of one column that never joins the next (U+0020 to U+007E). */
export function isPrintableAscii(code: number): boolean {
  return code >= 0x20 && code <= 0x7e;
}

/**
 * A character with a grapheme cluster boundary between it and the next when
 * that one is such a character too (UAX #29 GB999: no rule joins two of
 * them; none is a mark, joiner, prepended character, regional indicator,
 * Hangul jamo or CR). Printable ASCII; Latin-1 to the spacing modifier
 * letters (U+00A0-U+02FF: accented names); and the punctuation, arrows, box
 * drawing, blocks and shapes the views draw with (U+2010-U+2027,
 * U+2030-U+205E, U+2190-U+2BFF). test/output/display-width.test.ts holds
 * ICU to this on every Node the tests run on.
 */
export function standsAlone(code: number): boolean {
  return (
    (code >= 0x20 && code <= 0x7e) ||
    (code >= 0xa0 && code <= 0x2ff) ||
    (code >= 0x2010 && code <= 0x2027) ||
    (code >= 0x2030 && code <= 0x205e) ||
    (code >= 0x2190 && code <= 0x2bff)
  );
}

/**
 * Calls `visit(start, end)` for each grapheme cluster of `text`, in order,
 * with its code unit offsets. Linear in the length of the text, whatever it
 * holds (a cluster of thousands of combining marks included).
 */
export function forEachCluster(text: string, visit: (start: number, end: number) => void): void {
  const length = text.length;
  let start = 0;
  while (start < length) {
    // Two characters that stand alone always have a cluster boundary between them; one before anything else may
    // take a combining mark or joiner: the segmenter decides.
    if (standsAlone(text.charCodeAt(start)) && (start + 1 === length || standsAlone(text.charCodeAt(start + 1)))) {
      visit(start, start + 1);
      start += 1;
      continue;
    }
    segmenter ??= new Intl.Segmenter();
    // Every boundary the segmenter finds inside a window is final (it depends on the text before it and the one
    // character after it), except the window's end: its last cluster is segmented again from its start, with the
    // next window. A window never ends between the two halves of a surrogate pair. A cluster longer than the
    // window (thousands of combining marks) makes the window grow until the cluster ends inside it.
    let window = WINDOW;
    for (;;) {
      let end = Math.min(length, start + window);
      if (end < length && end - start > 1 && (text.charCodeAt(end - 1) & 0xfc00) === 0xd800) end -= 1;
      let last = 0;
      for (const { index } of segmenter.segment(text.slice(start, end))) {
        if (index === 0) continue;
        visit(start + last, start + index);
        last = index;
      }
      if (end === length) {
        visit(start + last, end);
        start = end;
        break;
      }
      if (last > 0) {
        start += last;
        break;
      }
      window *= 2;
    }
  }
}

/** Widths of the clusters met lately (a text repeats its characters); cleared when full. */
const clusterWidths = new Map<string, number>();
const MAX_CACHED = 4096;

/** Emoji and what makes an emoji sequence: string-width's emoji expression sees the whole cluster. */
const PICTOGRAPHIC = /[\p{Extended_Pictographic}\p{Regional_Indicator}\u20e3]/u;
/** What takes no column of its own: nonspacing and enclosing marks, joiners and other format characters, controls. */
const NO_BASE = /[\p{Mn}\p{Me}\p{Cf}\p{Cc}]/u;
/** What adds to the base's width: spacing marks, halfwidth and fullwidth forms (string-width 8's rule). */
const WIDENING = /[\p{Mc}\uff00-\uffef]/u;

/**
 * Columns of one grapheme cluster: its base character's (string-width
 * counts East Asian wide characters 2, controls 0) plus its spacing marks';
 * 2 for an emoji sequence; 0 when it has no base (a lone combining mark,
 * a joiner, a control). Never more than 2: terminals draw a cluster in one
 * or two cells, and a bound keeps every cluster within any width of 2 or
 * more, whatever marks it carries.
 */
export function clusterWidth(cluster: string): number {
  if (cluster.length === 1 && isPrintableAscii(cluster.charCodeAt(0))) return 1;
  const cached = clusterWidths.get(cluster);
  if (cached !== undefined) return cached;
  let width = 0;
  if (PICTOGRAPHIC.test(cluster)) {
    width = Math.min(2, stringWidth(cluster));
  } else {
    let based = false;
    for (const char of cluster) {
      if (!based) {
        if (NO_BASE.test(char)) continue;
        based = true;
        width = stringWidth(char);
      } else if (WIDENING.test(char)) {
        width += stringWidth(char);
      }
      if (width >= 2) break;
    }
  }
  width = Math.min(2, width);
  if (cluster.length <= 16) {
    if (clusterWidths.size >= MAX_CACHED) clusterWidths.clear();
    clusterWidths.set(cluster, width);
  }
  return width;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
// SGR sequences (what chalk writes) take no column. Text from the network reaches the views escaped (terminal-text.ts): any ESC left is ours.
// eslint-disable-next-line no-control-regex
const SGR = /\u001b\[[0-9;]*m/g;

/**
 * Display columns of a text: the sum of its grapheme clusters' widths
 * (clusterWidth); colour codes count 0. A line break counts 0: measure
 * lines one by one.
 */
export function displayWidth(text: string): number {
  if (PRINTABLE_ASCII.test(text)) return text.length;
  const plain = text.includes('\u001b') ? text.replace(SGR, '') : text;
  let width = 0;
  forEachCluster(plain, (start, end) => {
    width += end - start === 1 && isPrintableAscii(plain.charCodeAt(start)) ? 1 : clusterWidth(plain.slice(start, end));
  });
  return width;
}
