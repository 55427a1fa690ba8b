import { scanLine, type AddressMatch, type ScanOptions } from './address-scanner.js';

/** The line of the address a scan visits, located when asked about: read it during the visit only. */
export interface FoundLine {
  /** The line's number in its input, from 1 (a scan that counts lines only). */
  readonly number: number;
  /** Where the line starts in its piece: the lines of a piece differ in it. */
  readonly start: number;
  /** The line decoded from UTF-8, without its line end (LF, or CRLF). */
  text(): string;
  /** Where a match of this line starts in text(), in UTF-16 code units. */
  column(match: AddressMatch): number;
}

export type FoundAddressVisitor = (match: AddressMatch, line: FoundLine) => void;

const CARRIAGE_RETURN = 13;

/**
 * The scan of one input, piece by piece (wholeLineBytes): each piece is
 * scanned whole, as Latin-1 text (one code unit per byte, see scanLine).
 * The line of an address is located only when asked about, and decoded
 * only when its text is asked for; a scan that counts lines (for their
 * numbers) steps over every line, one that does not reads none it is not
 * asked about (`grep -o` prints the addresses alone).
 */
export class InputScan implements FoundLine {
  private piece: Buffer = Buffer.alloc(0);
  /** The piece read as Latin-1: the same offsets as its bytes. */
  private pieceText = '';
  /** Where the address being visited starts in the piece. */
  private at = 0;
  private lineStart = 0;
  /** Where the located line's LF is, or the piece's end; -1 when no line of the piece is located. */
  private lineEnd = -1;
  private lineText: string | null = null;
  private lines = 0;
  private readonly found: AddressMatch[] = [];

  constructor(
    private readonly options: ScanOptions,
    private readonly filter: (match: AddressMatch) => boolean,
    private readonly countLines: boolean,
  ) {}

  get number(): number {
    if (!this.countLines) throw new Error('this scan does not count lines');
    this.locate();
    return this.lines;
  }

  get start(): number {
    this.locate();
    return this.lineStart;
  }

  text(): string {
    this.locate();
    this.lineText ??= this.piece.toString('utf8', this.lineStart, this.contentEnd());
    return this.lineText;
  }

  column(match: AddressMatch): number {
    // Text as long as its bytes is ASCII, where byte offsets are UTF-16 offsets.
    const ascii = this.text().length === this.contentEnd() - this.lineStart;
    return ascii ? match.start - this.lineStart : this.piece.toString('utf8', this.lineStart, match.start).length;
  }

  /** Scans a piece of whole lines, calling `visit` for each kept address, in order. */
  scanPiece(piece: Buffer, visit: FoundAddressVisitor): void {
    this.piece = piece;
    this.pieceText = piece.toString('latin1');
    this.lineStart = 0;
    this.lineEnd = -1;
    const { found } = this;
    found.length = 0;
    scanLine(this.pieceText, this.options, found);
    for (const match of found) {
      if (!this.filter(match)) continue;
      this.at = match.start;
      visit(match, this);
    }
    // The lines after the last one located are counted for the next piece's numbers.
    if (this.countLines) while (this.lineEnd + 1 < piece.length) this.nextLine();
  }

  /** Where the current line's text ends: before its LF, or its CRLF. */
  private contentEnd(): number {
    const end = this.lineEnd;
    return end > this.lineStart && this.piece[end - 1] === CARRIAGE_RETURN ? end - 1 : end;
  }

  /** Makes the line of the address being visited the located one. */
  private locate(): void {
    if (this.at >= this.lineStart && this.at <= this.lineEnd) return;
    if (this.countLines) {
      // Addresses come in order: the line is at or after the located one.
      while (this.lineEnd < this.at) this.nextLine();
      return;
    }
    this.lineStart = this.pieceText.lastIndexOf('\n', this.at) + 1;
    this.setLineEnd();
  }

  private nextLine(): void {
    this.lineStart = this.lineEnd + 1;
    this.setLineEnd();
    this.lines++;
  }

  private setLineEnd(): void {
    const end = this.pieceText.indexOf('\n', this.lineStart);
    this.lineEnd = end === -1 ? this.piece.length : end;
    this.lineText = null;
  }
}
