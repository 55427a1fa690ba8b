import Table from 'cli-table3';
import { safe } from './blocks.js';
import type { ViewContext } from './style.js';
import { displayWidth, wrapText } from './wrap.js';

export interface TableColumn {
  header: string;
  /** 0: always shown; otherwise the higher the number, the sooner the column is left out when the table does not fit. */
  priority: number;
  /** The column may be narrowed, its cells wrapped (text); otherwise it keeps its widest cell's width (numbers, codes, addresses). */
  wrap?: boolean;
  /** Right for quantities, so that their digits line up; left otherwise. */
  align?: 'left' | 'right';
}

/** A row: its cells (one per column, in order), or an error that spans the row. */
export type TableRow = { cells: readonly string[] } | { error: string };

/** The narrowest a wrapped column is made before columns are left out. */
const MIN_WRAPPED = 12;

/** Borders and padding of a table of `count` columns: a space either side of each cell and a rule between and around them. */
function chrome(count: number): number {
  return count * 3 + 1;
}

function cellWidth(text: string): number {
  return Math.max(0, ...text.split('\n').map(displayWidth));
}

/**
 * The widths of the columns kept, or null when the table cannot fit: every
 * column at its widest cell if that fits; else wrapped columns narrowed,
 * widest first; else the lowest-priority column left out, and again.
 */
export function fitColumns(columns: readonly TableColumn[], natural: readonly number[], width: number): Map<number, number> | null {
  const kept = columns.map((_, index) => index);
  for (;;) {
    const widths = new Map(kept.map((index) => [index, natural[index]!]));
    const total = () => [...widths.values()].reduce((sum, value) => sum + value, 0) + chrome(widths.size);
    const floor = (index: number) => (columns[index]!.wrap ? Math.min(natural[index]!, Math.max(MIN_WRAPPED, displayWidth(columns[index]!.header))) : natural[index]!);
    const minimum = kept.reduce((sum, index) => sum + floor(index), 0) + chrome(kept.length);
    if (minimum <= width) {
      while (total() > width) {
        let widest = -1;
        for (const index of kept) {
          if (widths.get(index)! > floor(index) && (widest === -1 || widths.get(index)! > widths.get(widest)!)) widest = index;
        }
        widths.set(widest, widths.get(widest)! - 1);
      }
      return widths;
    }
    const droppable = kept.filter((index) => columns[index]!.priority > 0);
    if (droppable.length === 0) return null;
    const drop = droppable.reduce((worst, index) => (columns[index]!.priority >= columns[worst]!.priority ? index : worst));
    kept.splice(kept.indexOf(drop), 1);
  }
}

const COMPACT_ROWS = { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' };

/**
 * Rows as a box-drawn table that fits `ctx.width`: columns chosen by
 * priority and narrowed by wrapping (fitColumns). Null when even the
 * columns that must stay do not fit: the caller shows one block per record.
 */
export function fittedTable(ctx: ViewContext, allColumns: readonly TableColumn[], allRows: readonly TableRow[]): string | null {
  // A column no row has a value in is left out, as a null field is.
  const filled = allColumns.flatMap((_, index) => (allRows.some((row) => 'cells' in row && (row.cells[index] ?? '') !== '') ? [index] : []));
  const columns = filled.map((index) => allColumns[index]!);
  const rows: TableRow[] = allRows.map((row) => ('cells' in row ? { cells: filled.map((index) => row.cells[index] ?? '') } : row));
  if (columns.length === 0) return null;
  const texts: TableRow[] = rows.map((row) => ('cells' in row ? { cells: row.cells.map((cell) => safe(cell)) } : { error: safe(row.error) }));
  const natural = columns.map((column, index) =>
    Math.max(displayWidth(column.header), ...texts.map((row) => ('cells' in row ? cellWidth(row.cells[index] ?? '') : 0)), 1),
  );
  const widths = fitColumns(columns, natural, ctx.width);
  if (widths === null) return null;
  const kept = [...widths.keys()].sort((a, b) => a - b);
  const inner = kept.reduce((sum, index) => sum + widths.get(index)!, 0) + (kept.length - 1) * 3;
  const wrapCell = (text: string, width: number) => text.split('\n').flatMap((line) => wrapText(line, width)).join('\n');
  const cells = texts.map((row) =>
    'cells' in row
      ? kept.map((index) => wrapCell(row.cells[index] ?? '', widths.get(index)!))
      : [{ colSpan: kept.length, content: ctx.chalk.red(wrapCell(row.error, inner)) }],
  );
  const oneLineRows = cells.every((row) => row.every((cell) => typeof cell === 'string' && !cell.includes('\n')));
  const table = new Table({
    head: kept.map((index) => ctx.chalk.bold(safe(columns[index]!.header))),
    colWidths: kept.map((index) => widths.get(index)! + 2),
    colAligns: kept.map((index) => columns[index]!.align ?? 'left'),
    wordWrap: false,
    style: { head: [], border: [] },
    ...(oneLineRows ? { chars: COMPACT_ROWS } : {}),
  });
  table.push(...cells);
  const text = table.toString();
  if (!oneLineRows || rows.length === 0) return `${text}\n`;
  // Without row rules cli-table3 draws none under the header either: put it back.
  const lines = text.split('\n');
  lines.splice(2, 0, lines[0]!.replace('┌', '├').replaceAll('┬', '┼').replace('┐', '┤'));
  return `${lines.join('\n')}\n`;
}
