import { createReadStream } from 'node:fs';
import type { Command } from 'commander';
import { isAsnText, lookupAsn } from '../engine/asn/lookup-asn.js';
import { mapOrdered } from '../engine/bulk/map-ordered.js';
import { readTargetBatches, type Target } from '../engine/bulk/read-targets.js';
import { createAdaptiveIpLookup } from '../engine/ip/ip-target-lookup.js';
import type { Outcome } from '../engine/outcome.js';
import { NetintelError, toNetintelError } from '../errors.js';
import { BULK_SCHEMA } from '../output/schemas/bulk-schema.js';
import { emitOutcomes } from '../cli/emit.js';
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
      if (files.length === 0 && io.stdin.isTTY === true) {
        throw new NetintelError('usage', 'bulk reads targets from files or stdin: give a file, or pipe the list in');
      }
      const lookupIp = createAdaptiveIpLookup(ctx);
      const lookup = (target: Target): Outcome<unknown> => {
        try {
          const value = isAsnText(target.text) ? lookupAsn(ctx, target.text, 'memory') : lookupIp(target.text);
          return { ok: true, query: target.text, value };
        } catch (error) {
          return { ok: false, query: target.text, error: withLine(toNetintelError(error), target.line) };
        }
      };
      const outcomes = mapOrdered(readTargetBatches(inputChunks(files, io.stdin)), lookup, options.concurrency);
      runtime.exitCode = await emitOutcomes(io, options, BULK_SCHEMA, outcomes, { single: false, bulk: true });
    });
}

function withLine(error: NetintelError, line: number): NetintelError {
  return new NetintelError(error.code, `line ${line}: ${error.message}`, { cause: error, details: { ...error.details, line } });
}

/** The chunks of every input in order: each file, or stdin for "-" or when no file is named. */
async function* inputChunks(files: readonly string[], stdin: AsyncIterable<string | Uint8Array>): AsyncGenerator<string | Uint8Array> {
  if (files.length === 0) {
    yield* stdin;
    return;
  }
  for (const file of files) {
    if (file === '-') {
      yield* stdin;
      continue;
    }
    const stream = createReadStream(file);
    try {
      yield* stream;
    } catch (error) {
      throw new NetintelError('usage', `cannot read ${file}: ${(error as Error).message}`, { details: { path: file } });
    }
    // A file without a final newline must not run into the next file's first line.
    yield '\n';
  }
}
