import { fieldLabel } from '../field-label.js';
import { getPath, type RecordSchema } from '../record-schema.js';
import { factList, safe, type Fact } from './blocks.js';
import type { ViewContext } from './style.js';
import type { HumanView } from './view.js';

/** A cell's text: lists joined, objects as JSON, nothing for null. */
export function plainText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value) && value.every((item) => typeof item !== 'object' || item === null)) return value.join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * The view of chosen columns (`--fields`, `--all`, and kinds without a
 * view of their own): each column a fact (null ones shown as `-` only
 * with `--all`), each a table column.
 */
export function columnsView(schema: RecordSchema, columns: readonly string[], tableColumns: readonly string[]): HumanView {
  const read = schema.presentColumn ?? schema.readColumn ?? getPath;
  return {
    block: (ctx: ViewContext, record: unknown) => {
      const facts: Fact[] = columns.map((column) => {
        const text = plainText(read(record, column));
        return [fieldLabel(column, schema.labels), text === '' && ctx.all ? '-' : text];
      });
      return factList(ctx, facts);
    },
    table: {
      columns: tableColumns.map((column, index) => ({ header: safe(schema.labels?.[column] ?? fieldLabel(column.split('.').pop()!)), priority: index === 0 ? 0 : index, wrap: true })),
      cells: (record) => tableColumns.map((column) => plainText(read(record, column))),
      key: (record) => plainText(read(record, tableColumns[0] ?? '')),
    },
  };
}
