/**
 * Text of a stream cut at line ends: each piece holds whole lines only (the
 * last may lack its newline at the end of input), so a reader can split it
 * with indexOf. Memory holds one chunk and the longest line, whatever the
 * input's size. UTF-8 is decoded across chunk boundaries; invalid bytes read
 * as U+FFFD, which no address contains.
 */
export async function* wholeLineText(chunks: AsyncIterable<string | Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8');
  let rest = '';
  for await (const chunk of chunks) {
    const text = rest + (typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    const lastEnd = text.lastIndexOf('\n');
    if (lastEnd === -1) {
      rest = text;
      continue;
    }
    rest = text.slice(lastEnd + 1);
    yield text.slice(0, lastEnd + 1);
  }
  const tail = rest + decoder.decode();
  if (tail.length > 0) yield tail;
}

/** Calls `visit` with each line of a whole-line piece, without its line end (LF, or CRLF). */
export function eachLine(piece: string, visit: (line: string) => void): void {
  let from = 0;
  while (from < piece.length) {
    let to = piece.indexOf('\n', from);
    const next = to === -1 ? piece.length : to + 1;
    if (to === -1) to = piece.length;
    // A CRLF line's CR is not part of the line.
    visit(to > from && piece.charCodeAt(to - 1) === 13 ? piece.slice(from, to - 1) : piece.slice(from, to));
    from = next;
  }
}
