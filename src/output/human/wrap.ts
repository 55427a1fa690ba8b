import stringWidth from 'string-width';
import wrapAnsi from 'wrap-ansi';

/** Display columns of a text: East Asian wide characters count 2, ANSI colour codes 0. */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

/**
 * Text wrapped to `width` display columns: broken at spaces, a word wider
 * than the width (a TXT record, a DKIM key) broken hard. A line break in
 * the text stays one; the indentation a line starts with is kept on each
 * line it wraps into.
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
    const wrapped = wrapAnsi(body, columns - keep.length, { hard: true, trim: true, wordWrap: true });
    for (const line of wrapped.split('\n')) lines.push(keep + line);
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
