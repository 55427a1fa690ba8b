/** Room reserved when a chunk starts; it grows for longer batches. */
const INITIAL_BYTES = 1 << 16;
/** Text up to this length is copied code by code by `appendShort` and `appendAsciiUnmarked`. */
const SHORT_TEXT = 48;
/** No ASCII code marked: `appendShort` copies any short ASCII text. */
const NOTHING_MARKED = new Uint8Array(128);

/**
 * Collects rows of text as UTF-8 bytes, for output written in large chunks.
 * Appending each row to a string and converting the whole batch at the end
 * makes V8 build a rope of thousands of pieces and flatten it before
 * encoding, which costs more per row than encoding each row into a buffer
 * as it comes.
 */
export class Utf8Chunk {
  private bytes: Buffer = Buffer.allocUnsafe(INITIAL_BYTES);
  private used = 0;

  /** Bytes collected so far. */
  get length(): number {
    return this.used;
  }

  append(text: string): void {
    // A UTF-16 code unit takes at most three UTF-8 bytes.
    const worst = text.length * 3;
    if (this.used + worst > this.bytes.length) this.grow(worst);
    this.used += this.bytes.write(text, this.used);
  }

  /**
   * Like `append`, for short text that is mostly ASCII (addresses, codes):
   * copied code by code, which for a few characters costs less than a call
   * into the UTF-8 encoder. Other text goes to `append`.
   */
  appendShort(text: string): void {
    if (!this.appendAsciiUnmarked(text, NOTHING_MARKED)) this.append(text);
  }

  /**
   * Copies short ASCII text in which no character is marked in `marked`
   * (a table of the 128 ASCII codes, non-zero where the caller needs a
   * different encoding) and returns true; returns false, having written
   * nothing, for longer text, any other character or a marked one.
   */
  appendAsciiUnmarked(text: string, marked: Uint8Array): boolean {
    const length = text.length;
    if (length > SHORT_TEXT) return false;
    if (this.used + length > this.bytes.length) this.grow(length);
    const bytes = this.bytes;
    const at = this.used;
    for (let i = 0; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code > 0x7f || marked[code] !== 0) return false;
      bytes[at + i] = code;
    }
    this.used = at + length;
    return true;
  }

  /** Appends bytes already encoded (a cached piece of a row). */
  appendBytes(piece: Uint8Array): void {
    const length = piece.length;
    if (this.used + length > this.bytes.length) this.grow(length);
    this.bytes.set(piece, this.used);
    this.used += length;
  }

  /** Appends one byte (an ASCII separator). */
  appendByte(byte: number): void {
    if (this.used === this.bytes.length) this.grow(1);
    this.bytes[this.used++] = byte;
  }

  /** The bytes collected, which the caller now owns; the chunk starts empty again in a new buffer. */
  take(): Uint8Array {
    const taken = this.bytes.subarray(0, this.used);
    this.bytes = Buffer.allocUnsafe(Math.max(INITIAL_BYTES, this.used));
    this.used = 0;
    return taken;
  }

  private grow(needed: number): void {
    const larger = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.used + needed));
    this.bytes.copy(larger, 0, 0, this.used);
    this.bytes = larger;
  }
}
