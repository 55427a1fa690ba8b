import { createReadStream } from 'node:fs';
import type { Command } from 'commander';
import { integerIn } from '../cli/integer-option.js';
import { createBulkLookup, withLine, type SourcedTarget } from '../engine/bulk/bulk-lookup.js';
import { readTargetBatches } from '../engine/bulk/read-targets.js';
import { withoutZoneIndex } from '../engine/bulk/zone-index.js';
import { DEFAULT_MAX_EXPAND, expandRangeTargets, isRangeTarget, rangeFailure } from '../engine/ip/ip-range-expand.js';
import { NetintelError } from '../errors.js';
import { BULK_SCHEMA } from '../output/schemas/bulk-schema.js';
import { bulkRows, DEFAULT_MAX_BULK_THREADS, defaultBulkThreads, rowsShowEvidence } from '../cli/bulk-threads.js';
import { emitOutcomes } from '../cli/emit.js';
import { stdinBringsList } from '../cli/io.js';
import type { CommandRuntime } from '../cli/runtime.js';
import { regularFileSize } from '../cli/progress.js';
import { maxExpandOption } from './ip.js';

/** The most threads --threads accepts: each worker holds its own copy of the datasets. */
const MAX_THREADS = 64;

export function registerBulkCommand(program: Command, runtime: CommandRuntime): void {
  program
    .command('bulk')
    .description('many IPs and AS numbers, one per line: one output row per line, in input order, failures included')
    .argument('[files...]', 'files with one target per line ("-" or none: stdin); blank lines and # comments are skipped; a range line (192.0.2.0/28, 192.0.2.1-192.0.2.9) gives one row per address in its place')
    .addOption(maxExpandOption())
    .option('--threads <n>', `lookup threads for long lists, except in table output (default: one per CPU but one, at most ${DEFAULT_MAX_BULK_THREADS}; 1: no worker threads)`, integerIn('--threads', 1, MAX_THREADS))
    .addHelpText(
      'after',
      '\nExit status: 0 all rows ok, 7 some failed, the failure\'s own code when all failed.\nExamples:\n  netintel bulk ips.txt -f csv > out.csv\n  zcat ips.gz | netintel bulk --fields location,security -f ndjson',
    )
    .action(async (files: string[], flags: { threads?: number; maxExpand?: number }, command: Command) => {
      const options = runtime.options(command);
      const maxExpand = flags.maxExpand ?? DEFAULT_MAX_EXPAND;
      const ctx = runtime.context(options);
      const { io } = runtime;
      if (files.length === 0 && !stdinBringsList(io)) {
        throw new NetintelError('usage', 'bulk reads targets from files or stdin: give a file, or pipe the list in');
      }
      // Remote mode (--server): the same rows, asked of a netintel server in batches of the plan's size.
      const remote = options.remote ? (await import('../cli/remote-mode.js')).openRemoteEngine(options, io, runtime.progress) : null;
      // Local lookups never wait, so they need no concurrency window; a long list spreads over threads.
      const { progress } = runtime;
      // The inputs' total size, when every one is a regular file: the progress line's ETA.
      const size = () => {
        const sizes = (files.length === 0 ? ['-'] : files).map((file) => regularFileSize(file === '-' ? 0 : file));
        return sizes.every((bytes) => bytes !== null) ? sizes.reduce((sum, bytes) => sum + bytes, 0) : null;
      };
      const read = (chunks: AsyncIterable<string | Uint8Array>) => progress.input(chunks, size);
      // Rows are counted as their targets are taken: local rows are made as the output takes them.
      // A range line within --max-expand becomes its addresses here, each a row with the range's line number.
      const targets = progress.track(expandRangeTargets(inputTargets(files, io.stdin, read), maxExpand), true);
      const outcomes = remote
        ? remote.bulkOutcomes(targets, (error, target) => withLine(isRangeTarget(target.text) ? rangeFailure(target.text, maxExpand) : error, target))
        : bulkRows(targets, progress.watchLookup(createBulkLookup(ctx, { evidence: rowsShowEvidence(options.format, options.fields), maxExpand })), flags.threads ?? defaultBulkThreads(), {
            dataDir: options.dataDir,
            format: options.format,
            fields: options.fields,
            verbose: options.verbose,
            maxExpand,
          }, ctx.debug);
      runtime.exitCode = await emitOutcomes(io, options, BULK_SCHEMA, progress.track(outcomes, false), { single: false, bulk: true });
    });
}

/**
 * The targets of every input in order: each file, or stdin for "-" or when no
 * file is named. Line numbers count within each input, and with several
 * inputs each target names its own. An address with a zone index is taken
 * without it here, before the local, threaded and remote lookups alike.
 */
async function* inputTargets(
  files: readonly string[],
  stdin: AsyncIterable<string | Uint8Array>,
  read: (chunks: AsyncIterable<string | Uint8Array>) => AsyncIterable<string | Uint8Array>,
): AsyncGenerator<SourcedTarget[]> {
  const inputs = files.length === 0 ? ['-'] : files;
  for (const file of inputs) {
    const source = inputs.length === 1 ? null : file === '-' ? 'stdin' : file;
    try {
      for await (const batch of readTargetBatches(read(file === '-' ? stdin : createReadStream(file)), source)) {
        for (const target of batch) if (target.text.includes('%')) target.text = withoutZoneIndex(target.text);
        yield batch;
      }
    } catch (error) {
      if (error instanceof NetintelError) throw error;
      throw new NetintelError('usage', `cannot read ${file}: ${(error as Error).message}`, { details: { path: file } });
    }
  }
}
