import type { Outcome } from '../../src/engine/outcome.js';
import { createFormatter, type OutputFormat } from '../../src/output/formatter.js';
import type { RecordSchema } from '../../src/output/record-schema.js';
import { loadOperations } from '../../src/operations/operations.js';

/** Renders outcomes the way the CLI streams them: start, one write per outcome, end; a table with the view the record's operation declares. */
export async function render(
  schema: RecordSchema,
  format: OutputFormat,
  outcomes: ReadonlyArray<Outcome<unknown>>,
  options: { single: boolean; columns?: readonly string[] | null; header?: boolean; color?: boolean; width?: number; all?: boolean },
): Promise<string> {
  const record = (await loadOperations()).find((operation) => operation.record.columns === schema)?.record;
  const view = format === 'table' ? await (record?.view ?? schema.view)?.() : undefined;
  const formatter = await createFormatter({
    format,
    schema,
    columns: options.columns ?? null,
    header: options.header ?? true,
    color: options.color ?? false,
    single: options.single,
    width: options.width,
    all: options.all,
    ...(view ? { view } : {}),
  });
  return formatter.start() + outcomes.map((outcome) => formatter.write(outcome)).join('') + formatter.end();
}
