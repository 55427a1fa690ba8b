import type { Outcome } from '../../engine/outcome.js';
import type { RecordSchema } from '../record-schema.js';
import { safe } from './blocks.js';
import { fittedTable, type TableRow } from './fitted-table.js';
import { columnsView } from './generic-view.js';
import { viewContext, type ViewContext } from './style.js';
import { failureText, type HumanView, type ViewRow } from './view.js';
import { wrapHanging } from './wrap.js';

export interface HumanViewOptions {
  schema: RecordSchema;
  /** `--fields`: these columns only, or null. */
  columns: readonly string[] | null;
  width: number;
  color: boolean;
  /** `--all`: every field, as the record has it. */
  all: boolean;
  /** The run reports each failed lookup's message on stderr: the view names the failure without repeating it. */
  errorsOnStderr?: boolean;
  /** The record's own view; absent: its columns. */
  view?: HumanView;
}

/** A failed lookup among many: its query and error, on one wrapped red line. */
function errorLine(ctx: ViewContext, row: ViewRow): string {
  const text = failureText(row);
  return `${wrapHanging(safe(text), ctx.width, '', '  ').map((line) => ctx.chalk.red(line)).join('\n')}\n`;
}

/** The view a run's records are drawn with: the record's own, or the chosen columns (`--fields`), or every column (`--all`). */
function chooseView(options: HumanViewOptions): HumanView {
  const { schema } = options;
  if (options.columns) return columnsView(schema, options.columns, options.columns);
  if (options.all) return columnsView(schema, schema.columns, schema.tableColumns);
  return options.view ?? columnsView(schema, schema.columns, schema.tableColumns);
}

/**
 * The human view of a run (format `table`): one record as a block
 * (headline, facts, findings), many as a table fitted to the width, or one
 * block each when no table fits (and with `--all`).
 */
export function createHumanView(options: HumanViewOptions) {
  const ctx = viewContext(options);
  const view = chooseView(options);
  const blocks = (rows: readonly ViewRow[]) => rows.map((row) => (row.error ? errorLine(ctx, row) : view.block(ctx, row.record))).join('\n');
  return {
    single(outcome: Outcome<unknown>): string {
      return outcome.ok ? view.block(ctx, outcome.value) : '';
    },
    many(given: readonly ViewRow[]): string {
      // Every lookup failed: stderr has said why, as for one lookup (nothing is left to show).
      if (given.length === 0 || (options.errorsOnStderr && given.every((row) => row.error !== null))) return '';
      const rows = options.errorsOnStderr ? given.map((row) => (row.error ? { ...row, error: { code: row.error.code, message: '' } } : row)) : given;
      if (options.all) return blocks(rows);
      if (view.many && !options.columns) {
        const text = view.many(ctx, rows);
        if (text !== null) return text;
      }
      const { columns, cells, key } = view.table;
      // The query column only where it tells something the record's own name does not.
      const withQuery = rows.some((row) => row.error === null && key(row.record) !== row.query);
      // The query column wraps between words (host names are not broken): it gives up its spare width before a column of the record is left out.
      const tableColumns = withQuery ? [{ header: 'query', priority: 0, wrap: true, wholeWords: true }, ...columns] : columns;
      const tableRows: TableRow[] = rows.map((row) =>
        row.error ? { error: failureText(row) } : { cells: withQuery ? [row.query, ...cells(row.record)] : cells(row.record) },
      );
      return fittedTable(ctx, tableColumns, tableRows) ?? blocks(rows);
    },
  };
}
