import { safe } from './blocks.js';
import { drawBoxTable, type BoxRow, type CellLines } from './box-table.js';
import { clusterWidth, displayWidth, forEachCluster } from './display-width.js';
import type { ViewContext } from './style.js';
import { wrapText } from './wrap.js';

export interface TableColumn {
  header: string;
  /** 0: always shown; otherwise the higher the number, the sooner the column is left out when the table does not fit. */
  priority: number;
  /** The column may be narrowed, its cells wrapped (text); otherwise it keeps its widest cell's width (numbers, codes, addresses). */
  wrap?: boolean;
  /** Right for quantities, so that their digits line up; left otherwise. */
  align?: 'left' | 'right';
  /** A wrapped column is narrowed no further than its longest word (an IPv6 address broken in two reads as two). */
  wholeWords?: boolean;
}

/** A row: its cells (one per column, in order), or an error that spans the row. */
export type TableRow = { cells: readonly string[] } | { error: string };

/** The narrowest a wrapped column is made before columns are left out. */
const MIN_WRAPPED = 12;

/** Borders and padding of a table of `count` columns: a space either side of each cell and a rule between and around them. */
function chrome(count: number): number {
  return count * 3 + 1;
}

/** The widest word of a cell (what is between spaces and line breaks). */
function longestWord(text: string): number {
  let widest = 0;
  for (const word of text.split(/[ \n]+/)) widest = Math.max(widest, displayWidth(word));
  return widest;
}

/** The widest line of a cell. */
function cellWidth(text: string): number {
  let widest = 0;
  for (const line of text.split('\n')) widest = Math.max(widest, displayWidth(line));
  return widest;
}

/**
 * The widths of the columns kept, or null when the table cannot fit: every
 * column at its widest cell if that fits; else wrapped columns narrowed,
 * widest first; else the lowest-priority column left out, and again.
 */
export function fitColumns(columns: readonly TableColumn[], natural: readonly number[], width: number, longestWords: readonly number[] = []): Map<number, number> | null {
  const kept = columns.map((_, index) => index);
  const floors = columns.map((column, index) =>
    column.wrap ? Math.min(natural[index]!, Math.max(MIN_WRAPPED, displayWidth(column.header), column.wholeWords ? (longestWords[index] ?? 0) : 0)) : natural[index]!,
  );
  for (;;) {
    const minimum = kept.reduce((sum, index) => sum + floors[index]!, 0) + chrome(kept.length);
    if (minimum <= width) return narrowed(kept, natural, floors, kept.reduce((sum, index) => sum + natural[index]!, 0) + chrome(kept.length) - width);
    const droppable = kept.filter((index) => columns[index]!.priority > 0);
    // Not even one column fits (a table with none would be only its borders).
    if (droppable.length === 0 || kept.length === 1) return null;
    const drop = droppable.reduce((worst, index) => (columns[index]!.priority >= columns[worst]!.priority ? index : worst));
    kept.splice(kept.indexOf(drop), 1);
  }
}

/**
 * The columns' widths `excess` columns narrower in all, taken one at a time
 * from the widest column above its floor (the first of equals), so that
 * the widest columns come down level together. Computed a level at a time,
 * not a column at a time: a cell of 64 KB is 64,000 columns too wide.
 */
function narrowed(kept: readonly number[], natural: readonly number[], floors: readonly number[], excess: number): Map<number, number> {
  const widths = new Map(kept.map((index) => [index, natural[index]!]));
  let left = excess;
  while (left > 0) {
    const narrowable = kept.filter((index) => widths.get(index)! > floors[index]!);
    if (narrowable.length === 0) break;
    const top = Math.max(...narrowable.map((index) => widths.get(index)!));
    const widest = narrowable.filter((index) => widths.get(index) === top);
    // The level where this group changes: the next width below, or the highest floor among it.
    const below = Math.max(...narrowable.filter((index) => widths.get(index)! < top).map((index) => widths.get(index)!), ...widest.map((index) => floors[index]!));
    const levels = Math.min(top - below, Math.floor(left / widest.length));
    if (levels > 0) {
      for (const index of widest) widths.set(index, top - levels);
      left -= levels * widest.length;
      continue;
    }
    // Fewer steps left than columns at the top: the first of them give one each.
    for (const index of widest.slice(0, left)) widths.set(index, top - 1);
    left = 0;
  }
  return widths;
}

/**
 * A cell's plain lines (escaped, not coloured), coloured as one text by
 * `paint` (chalk closes and reopens its codes at each line break), each
 * measured as drawn, after the space of padding: a line that starts with a
 * combining mark is one cluster with that space.
 */
function cellOf(lines: readonly string[], paint?: (text: string) => string): CellLines {
  return { lines: paint ? paint(lines.join('\n')).split('\n') : lines, widths: lines.map((line) => displayWidth(` ${line}`) - 1) };
}

/**
 * Each line of `text` wrapped to `width` columns. A character wider than
 * the width (a wide CJK character or an emoji in a column one wide) cannot
 * be wrapped: its line ends in "…" within the width, as cli-table3 cuts it.
 */
function wrapLines(text: string, width: number): string[] {
  return text.split('\n').flatMap((line) => wrapText(line, width).map((wrapped) => clipped(wrapped, width)));
}

function clipped(line: string, width: number): string {
  if (displayWidth(line) <= width) return line;
  let kept = 0;
  let used = 0;
  forEachCluster(line, (start, end) => {
    const cluster = clusterWidth(line.slice(start, end));
    if (kept === start && used + cluster <= width - 1) {
      used += cluster;
      kept = end;
    }
  });
  return `${line.slice(0, kept)}…`;
}

/**
 * Rows as a box-drawn table that fits `ctx.width`: columns chosen by
 * priority and narrowed by wrapping (fitColumns). Null when even the
 * columns that must stay do not fit: the caller shows one block per record.
 * Linear in the size of the cells.
 */
export function fittedTable(ctx: ViewContext, allColumns: readonly TableColumn[], allRows: readonly TableRow[]): string | null {
  // A column no row has a value in is left out, as a null field is.
  const filled = allColumns.flatMap((_, index) => (allRows.some((row) => 'cells' in row && (row.cells[index] ?? '') !== '') ? [index] : []));
  const columns = filled.map((index) => allColumns[index]!);
  const rows: TableRow[] = allRows.map((row) => ('cells' in row ? { cells: filled.map((index) => row.cells[index] ?? '') } : row));
  if (columns.length === 0) return null;
  const texts: TableRow[] = rows.map((row) => ('cells' in row ? { cells: row.cells.map((cell) => safe(cell)) } : { error: safe(row.error) }));
  const natural = columns.map((column, index) => {
    let widest = Math.max(1, displayWidth(column.header));
    for (const row of texts) if ('cells' in row) widest = Math.max(widest, cellWidth(row.cells[index] ?? ''));
    return widest;
  });
  const longestWords = columns.map((column, index) => {
    let widest = 0;
    if (column.wholeWords) for (const row of texts) if ('cells' in row) widest = Math.max(widest, longestWord(row.cells[index] ?? ''));
    return widest;
  });
  const widths = fitColumns(columns, natural, ctx.width, longestWords);
  if (widths === null) return null;
  const kept = [...widths.keys()].sort((a, b) => a - b);
  const inner = kept.reduce((sum, index) => sum + widths.get(index)!, 0) + (kept.length - 1) * 3;
  const body: BoxRow[] = texts.map((row) =>
    'cells' in row
      ? { cells: kept.map((index) => cellOf(wrapLines(row.cells[index] ?? '', widths.get(index)!))) }
      : { span: cellOf(wrapLines(row.error, inner), (text) => ctx.chalk.red(text)) },
  );
  // Rules between the rows only where a row takes several lines (or spans the columns); else the header's alone.
  const ruled = body.some((row) => 'span' in row || row.cells.some((cell) => cell.lines.length > 1));
  const lines = drawBoxTable({
    widths: kept.map((index) => widths.get(index)!),
    aligns: kept.map((index) => columns[index]!.align ?? 'left'),
    head: kept.map((index) => cellOf(safe(columns[index]!.header).split('\n'), (text) => ctx.chalk.bold(text))),
    rows: body,
    ruled,
  });
  return `${lines.join('\n')}\n`;
}
