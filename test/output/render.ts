import type { Outcome } from '../../src/engine/outcome.js';
import { createFormatter, type OutputFormat } from '../../src/output/formatter.js';
import type { RecordSchema } from '../../src/output/record-schema.js';

/** Renders outcomes the way the CLI streams them: start, one write per outcome, end. */
export async function render(
  schema: RecordSchema,
  format: OutputFormat,
  outcomes: ReadonlyArray<Outcome<unknown>>,
  options: { single: boolean; columns?: readonly string[] | null; header?: boolean; color?: boolean; width?: number; all?: boolean },
): Promise<string> {
  const formatter = await createFormatter({
    format,
    schema,
    columns: options.columns ?? null,
    header: options.header ?? true,
    color: options.color ?? false,
    single: options.single,
    width: options.width,
    all: options.all,
  });
  return formatter.start() + outcomes.map((outcome) => formatter.write(outcome)).join('') + formatter.end();
}
