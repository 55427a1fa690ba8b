import { scanLine, type AddressMatch, type ScanOptions } from './address-scanner.js';

/** A line holding kept addresses, as a scan visits it: read it during the visit only. */
export interface FoundLine {
  /** The line's number in its input, from 1. */
  readonly number: number;
  /** The line decoded from UTF-8, without its line end (LF, or CRLF). */
  text(): string;
  /** Where a match of this line starts in text(), in UTF-16 code units. */
  column(match: AddressMatch): number;
}

export type FoundLineVisitor = (line: FoundLine, matches: readonly AddressMatch[]) => void;

const CARRIAGE_RETURN = 13;

/**
 * The scan of one input, piece by piece (wholeLineBytes): each piece is
 * scanned whole, as Latin-1 text (one code unit per byte, see scanLine),
 * and only the lines that hold a kept address are located and, when asked
 * for, decoded; the lines between are counted, not read.
 */
export class InputScan implements FoundLine {
  private piece: Buffer = Buffer.alloc(0);
  /** The piece read as Latin-1: the same offsets as its bytes. */
  private pieceText = '';
  private lineStart = 0;
  /** Where the current line's LF is, or the piece's end; -1 before the first line of a piece. */
  private lineEnd = -1;
  private lineText: string | null = null;
  private lines = 0;
  private readonly found: AddressMatch[] = [];
  /** The kept matches of the current line: a new array for each line (emptying one costs more). */
  private kept: AddressMatch[] = [];

  constructor(
    private readonly options: ScanOptions,
    private readonly filter: (match: AddressMatch) => boolean,
  ) {}

  get number(): number {
    return this.lines;
  }

  text(): string {
    this.lineText ??= this.piece.toString('utf8', this.lineStart, this.contentEnd());
    return this.lineText;
  }

  column(match: AddressMatch): number {
    // Text as long as its bytes is ASCII, where byte offsets are UTF-16 offsets.
    const ascii = this.text().length === this.contentEnd() - this.lineStart;
    return ascii ? match.start - this.lineStart : this.piece.toString('utf8', this.lineStart, match.start).length;
  }

  /** Where the current line's text ends: before its LF, or its CRLF. */
  private contentEnd(): number {
    const end = this.lineEnd;
    return end > this.lineStart && this.piece[end - 1] === CARRIAGE_RETURN ? end - 1 : end;
  }

  /** Scans a piece of whole lines, calling `visit` for each line that holds a kept address, in order. */
  scanPiece(piece: Buffer, visit: FoundLineVisitor): void {
    this.piece = piece;
    this.lineEnd = -1;
    this.pieceText = piece.toString('latin1');
    const { found } = this;
    found.length = 0;
    scanLine(this.pieceText, this.options, found);
    for (const match of found) {
      if (!this.filter(match)) continue;
      if (match.start > this.lineEnd) {
        if (this.kept.length > 0) this.visitLine(visit);
        while (this.lineEnd < match.start) this.nextLine();
      }
      this.kept.push(match);
    }
    if (this.kept.length > 0) this.visitLine(visit);
    // The lines after the last address are counted for the next piece's numbers.
    while (this.lineEnd + 1 < piece.length) this.nextLine();
  }

  private visitLine(visit: FoundLineVisitor): void {
    const matches = this.kept;
    this.kept = [];
    visit(this, matches);
  }

  private nextLine(): void {
    this.lineStart = this.lineEnd + 1;
    const end = this.pieceText.indexOf('\n', this.lineStart);
    this.lineEnd = end === -1 ? this.piece.length : end;
    this.lineText = null;
    this.lines++;
  }
}
