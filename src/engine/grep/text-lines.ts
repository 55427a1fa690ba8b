/** UTF-8's byte order mark: the TextDecoder that read the input before drops it at the start, as here. */
const BYTE_ORDER_MARK = Buffer.of(0xef, 0xbb, 0xbf);
const NEWLINE = 10;

/**
 * The bytes of a stream cut at line ends: each piece holds whole lines only
 * (the last may lack its newline at the end of input), so that a piece can
 * be read without the next one. Memory holds one chunk and the longest
 * line, whatever the input's size; a line longer than a chunk is copied
 * once, when its end arrives. LF is never part of a multi-byte UTF-8
 * sequence, so every piece decodes on its own as the whole stream would.
 * String chunks are encoded as UTF-8; a byte order mark at the start of
 * the input is dropped.
 */
export async function* wholeLineBytes(chunks: AsyncIterable<string | Uint8Array>): AsyncGenerator<Buffer> {
  /** The start of a line whose end has not arrived. */
  let held: Buffer[] = [];
  let first = true;
  const piece = (bytes: Buffer): Buffer => {
    const whole = first ? withoutByteOrderMark(bytes) : bytes;
    first = false;
    return whole;
  };
  for await (const chunk of chunks) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const lastEnd = bytes.lastIndexOf(NEWLINE);
    if (lastEnd === -1) {
      if (bytes.length > 0) held.push(bytes);
      continue;
    }
    let from = 0;
    if (held.length > 0) {
      // The held line ends in this chunk: it is copied with its end alone, not with the whole chunk.
      from = bytes.indexOf(NEWLINE) + 1;
      yield piece(Buffer.concat([...held, bytes.subarray(0, from)]));
    }
    if (from <= lastEnd) yield piece(bytes.subarray(from, lastEnd + 1));
    held = lastEnd + 1 < bytes.length ? [bytes.subarray(lastEnd + 1)] : [];
  }
  const tail = held.length === 1 ? held[0]! : Buffer.concat(held);
  if (tail.length > 0) {
    const last = piece(tail);
    if (last.length > 0) yield last;
  }
}

function withoutByteOrderMark(piece: Buffer): Buffer {
  return piece.subarray(0, 3).equals(BYTE_ORDER_MARK) ? piece.subarray(3) : piece;
}

/**
 * Text of a stream cut at line ends (wholeLineBytes, decoded): each piece
 * holds whole lines only, so a reader can split it with indexOf. Invalid
 * UTF-8 bytes read as U+FFFD, which no address contains.
 */
export async function* wholeLineText(chunks: AsyncIterable<string | Uint8Array>): AsyncGenerator<string> {
  for await (const piece of wholeLineBytes(chunks)) {
    const text = piece.toString('utf8');
    if (text.length > 0) yield text;
  }
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
