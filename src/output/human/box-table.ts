/**
 * A laid-out table drawn with box-drawing characters, in the look of
 * cli-table3 (its default characters, a space of padding either side of a
 * cell; test/output/box-table.test.ts compares the two on random tables).
 * fitted-table.ts chooses the widths and wraps the cells first, so drawing
 * is only rules and padding, linear in the size of the table. cli-table3
 * itself is not used to draw: its Cell.draw truncates the whole cell to ten
 * columns for a debug message on every line it draws (re-measuring the text
 * after each character it removes), which made a wrapped cell of a few
 * kilobytes, such as a TXT record, take seconds to minutes.
 */

/** A cell's lines as drawn (colour codes allowed) with the display width of each. */
export interface CellLines {
  lines: readonly string[];
  widths: readonly number[];
}

/** A row: one cell per column, or one cell across every column (an error). */
export type BoxRow = { cells: readonly CellLines[] } | { span: CellLines };

export interface BoxTable {
  /** Width of each column's text, padding and rules not included. */
  widths: readonly number[];
  aligns: ReadonlyArray<'left' | 'right'>;
  head: readonly CellLines[];
  rows: readonly BoxRow[];
  /** Rules between body rows; without them only the header is ruled off (every row is one line). */
  ruled: boolean;
}

/** `text` padded to `width` columns, on the side its alignment says. */
function padded(text: string, textWidth: number, width: number, align: 'left' | 'right'): string {
  const fill = ' '.repeat(Math.max(0, width - textWidth));
  return align === 'right' ? fill + text : text + fill;
}

/** The lines of a row of cells, `height` lines high (shorter cells padded with blank lines). */
function cellLines(out: string[], table: BoxTable, cells: readonly CellLines[]): void {
  const height = Math.max(1, ...cells.map((cell) => cell.lines.length));
  for (let line = 0; line < height; line++) {
    let text = '│';
    cells.forEach((cell, index) => {
      const content = line < cell.lines.length ? cell.lines[line]! : '';
      const contentWidth = line < cell.lines.length ? cell.widths[line]! : 0;
      text += ` ${padded(content, contentWidth, table.widths[index]!, table.aligns[index] ?? 'left')} │`;
    });
    out.push(text);
  }
}

/** A rule line: `left`, each column's run of `─` (its text and padding) with `junction` between them, `right`. */
function rule(widths: readonly number[], left: string, junction: string, right: string): string {
  return left + widths.map((width) => '─'.repeat(width + 2)).join(junction) + right;
}

/**
 * The table as text, one line per element: a top rule, the header, a rule
 * under it, the rows (with rules between them when `ruled`), a bottom rule.
 * A row spanning the columns meets the column rules with `┴` above it and
 * `┬` below it.
 */
export function drawBoxTable(table: BoxTable): string[] {
  const { widths } = table;
  const inner = widths.reduce((sum, width) => sum + width, 0) + (widths.length - 1) * 3;
  const out: string[] = [rule(widths, '┌', '┬', '┐')];
  cellLines(out, table, table.head);
  let aboveSpans = false;
  table.rows.forEach((row, index) => {
    const spans = 'span' in row;
    if (index === 0 || table.ruled) {
      out.push(rule(widths, '├', aboveSpans ? (spans ? '─' : '┬') : spans ? '┴' : '┼', '┤'));
    }
    if ('span' in row) {
      const { lines, widths: lineWidths } = row.span;
      for (let line = 0; line < Math.max(1, lines.length); line++) {
        // Aligned as the first column is (as cli-table3 aligns a cell spanning from it).
        out.push(`│ ${padded(lines[line] ?? '', lineWidths[line] ?? 0, inner, table.aligns[0] ?? 'left')} │`);
      }
    } else {
      cellLines(out, table, row.cells);
    }
    aboveSpans = spans;
  });
  out.push(rule(widths, '└', aboveSpans ? '─' : '┴', '┘'));
  return out;
}
