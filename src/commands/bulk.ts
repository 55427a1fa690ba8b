import { createReadStream } from 'node:fs';
import type { Command } from 'commander';
import { isAsnText, lookupAsn } from '../engine/asn/lookup-asn.js';
import { mapBatches } from '../engine/bulk/map-batches.js';
import { readTargetBatches, type Target } from '../engine/bulk/read-targets.js';
import { createAdaptiveIpLookup } from '../engine/ip/ip-target-lookup.js';
import type { Outcome } from '../engine/outcome.js';
import { NetintelError, toNetintelError } from '../errors.js';
import { BULK_SCHEMA } from '../output/schemas/bulk-schema.js';
import { emitOutcomes } from '../cli/emit.js';
import { stdinBringsList } from '../cli/io.js';
import type { CommandRuntime } from '../cli/runtime.js';

export function registerBulkCommand(program: Command, runtime: CommandRuntime): void {
  program
    .command('bulk')
    .description('many IPs and AS numbers, one per line: one output row per line, in input order, failures included')
    .argument('[files...]', 'files with one target per line ("-" or none: stdin); blank lines and # comments are skipped')
    .addHelpText(
      'after',
      '\nExit status: 0 all rows ok, 7 some failed, the failure\'s own code when all failed.\nExamples:\n  netintel bulk ips.txt -f csv > out.csv\n  zcat ips.gz | netintel bulk --fields location,security -f ndjson',
    )
    .action(async (files: string[], _flags: unknown, command: Command) => {
      const options = runtime.options(command);
      const ctx = runtime.context(options);
      const { io } = runtime;
      if (files.length === 0 && !stdinBringsList(io)) {
        throw new NetintelError('usage', 'bulk reads targets from files or stdin: give a file, or pipe the list in');
      }
      const lookupIp = createAdaptiveIpLookup(ctx);
      const lookup = (target: SourcedTarget): Outcome<unknown> => {
        try {
          const value = isAsnText(target.text) ? lookupAsn(ctx, target.text, 'memory') : lookupIp(target.text);
          return { ok: true, query: target.text, value };
        } catch (error) {
          return { ok: false, query: target.text, error: withLine(toNetintelError(error), target) };
        }
      };
      // Local lookups never wait, so they need no concurrency window. Remote
      // mode (--server): the same rows, asked of a netintel server in batches of the plan's size.
      const remote = options.remote ? (await import('../remote/remote-mode.js')).openRemoteEngine(options, io) : null;
      const outcomes = remote
        ? remote.bulkOutcomes(inputTargets(files, io.stdin), withLine)
        : mapBatches(inputTargets(files, io.stdin), lookup);
      runtime.exitCode = await emitOutcomes(io, options, BULK_SCHEMA, outcomes, { single: false, bulk: true });
    });
}

/** A target and the input it came from (null when the run reads a single input). */
type SourcedTarget = Target & { source: string | null };

function withLine(error: NetintelError, target: SourcedTarget): NetintelError {
  const where = target.source === null ? `line ${target.line}` : `${target.source} line ${target.line}`;
  const details = target.source === null ? { ...error.details, line: target.line } : { ...error.details, file: target.source, line: target.line };
  return new NetintelError(error.code, `${where}: ${error.message}`, { cause: error, details });
}

/**
 * The targets of every input in order: each file, or stdin for "-" or when no
 * file is named. Line numbers count within each input, and with several
 * inputs each target names its own.
 */
async function* inputTargets(files: readonly string[], stdin: AsyncIterable<string | Uint8Array>): AsyncGenerator<SourcedTarget[]> {
  const inputs = files.length === 0 ? ['-'] : files;
  for (const file of inputs) {
    const source = inputs.length === 1 ? null : file === '-' ? 'stdin' : file;
    try {
      for await (const batch of readTargetBatches(file === '-' ? stdin : createReadStream(file))) {
        for (const target of batch) (target as SourcedTarget).source = source;
        yield batch as SourcedTarget[];
      }
    } catch (error) {
      if (error instanceof NetintelError) throw error;
      throw new NetintelError('usage', `cannot read ${file}: ${(error as Error).message}`, { details: { path: file } });
    }
  }
}
