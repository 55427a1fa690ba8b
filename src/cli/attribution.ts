import type { RecordSchema } from '../output/record-schema.js';
import type { GlobalOptions } from './global-options.js';
import type { CliIo } from './io.js';
import { terminalWidth } from './terminal-width.js';

/** The runs (by their process surface) that printed a credit already. */
const credited = new WeakSet<CliIo>();

/**
 * The data licence's credit of the records shown (DB-IP's CC BY 4.0 asks for
 * it), on stderr, once per run: for the person at the terminal, never in the
 * data. Only when stdout is a terminal (output redirected into a file or a
 * pipe is data), not with -q, and only under at least one record;
 * wrapped to the terminal's width like the view above it.
 */
export async function printCredit(io: CliIo, options: Pick<GlobalOptions, 'quiet'>, schema: RecordSchema, records: number): Promise<void> {
  if (schema.credit === undefined || records === 0 || options.quiet || io.stdout.isTTY !== true || credited.has(io)) return;
  credited.add(io);
  // The wrapping module loads here: runs whose stdout is data never need it.
  const { wrapText } = await import('../output/human/wrap.js');
  io.stderr.write(`${wrapText(schema.credit, terminalWidth(io)).join('\n')}\n`);
}
