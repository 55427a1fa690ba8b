import { createReadStream } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import { integerIn } from '../cli/integer-option.js';
import type { SourcedTarget } from '../engine/bulk/bulk-lookup.js';
import { wholeLineText } from '../engine/grep/text-lines.js';
import type { Outcome } from '../engine/outcome.js';
import { addressTargets } from '../engine/summarize/summarize-input.js';
import type { SummaryReport } from '../engine/summarize/summary-report.js';
import { SummaryTally, type InputCounts } from '../engine/summarize/summary-tally.js';
import { NetintelError, type ErrorCode } from '../errors.js';
import { SUMMARIZE_SCHEMA, summaryCsv, summaryJson, summaryNdjson } from '../output/schemas/summarize-schema.js';
import { printCredit } from '../cli/attribution.js';
import { exitCodeForRun } from '../cli/exit-codes.js';
import type { GlobalOptions } from '../cli/global-options.js';
import { createSink, OutputClosed, stdinBringsList, type CliIo } from '../cli/io.js';
import { regularFileSize } from '../cli/progress.js';
import { writeOutputFile } from '../cli/output-file.js';
import { markWrittenToStdout } from '../cli/report-failure.js';
import type { CommandRuntime } from '../cli/runtime.js';
import { terminalWidth } from '../cli/terminal-width.js';
import { escapeTerminalText } from '../output/terminal-text.js';
import { BULK } from '../operations/bulk.js';
import { lookupMany } from '../operations/engine.js';
import { fileErrorReason } from '../file-error.js';

/** Rows each ranked table shows unless --top says otherwise. */
export const DEFAULT_TOP = 10;
const MAX_TOP = 1000;

export function registerSummarizeCommand(program: Command, runtime: CommandRuntime): void {
  program
    .command('summarize')
    .description('a report on the addresses in lists or logs: totals, top countries, networks and cities, security flags, threat levels')
    .argument('[files...]', 'address lists or any text with addresses in it (logs, mail headers; "-" or none: stdin); blank lines and # lines are skipped')
    .option('--top <n>', `rows of each ranked table before "other" (1 to ${MAX_TOP}, default ${DEFAULT_TOP})`, integerIn('--top', 1, MAX_TOP))
    .option('--svg <file>', 'also write a world map of the addresses per country, an SVG image, to this file (replaced whole)', parseMapPath)
    .addHelpText(
      'after',
      [
        '',
        'Every address counts once per occurrence; to count each address once, pipe',
        'through `netintel grep -ou` first. Distinct addresses are counted exactly up',
        'to 1,000,000, then shown as a lower bound (1,000,000+).',
        'Exit status: 0 with a report, 3 when the input holds no address (after the',
        'all-zero report), 7 when some lookups failed (remote mode), 2 for bad usage.',
        'Examples:',
        '  netintel summarize access.log',
        '  netintel grep -ou access.log | netintel summarize',
        '  netintel summarize --top 20 ips.txt',
        '  netintel summarize access.log --svg visitors.svg',
        '  zcat access.log.gz | netintel summarize -f csv > report.csv',
      ].join('\n'),
    )
    .action(async (files: string[], flags: { top?: number; svg?: string }, command: Command) => {
      const options = runtime.options(command);
      const { io, progress } = runtime;
      if (options.format === 'value') {
        throw new NetintelError('usage', 'summarize has no -f value output (use -f table, json, ndjson, csv or xml)');
      }
      if (options.fields !== null) {
        throw new NetintelError('usage', 'summarize has no --fields (its report has one shape: use -f csv or -f json and pick from it)');
      }
      if (files.length === 0 && !stdinBringsList(io)) {
        throw new NetintelError('usage', 'summarize reads addresses or logs from files or stdin: give a file, or pipe the text in');
      }
      const top = flags.top ?? DEFAULT_TOP;
      const tally = new SummaryTally();
      const inputs = files.length === 0 ? ['-'] : files;
      const size = () => {
        const sizes = inputs.map((file) => regularFileSize(file === '-' ? 0 : file));
        return sizes.every((bytes) => bytes !== null) ? sizes.reduce((sum, bytes) => sum + bytes, 0) : null;
      };
      const read = (chunks: AsyncIterable<string | Uint8Array>) => progress.input(chunks, size);
      const targets = progress.track(inputTargets(inputs, io, read, tally.input), true);
      // The lookups bulk makes, through the run's engine (a netintel server with --server, in batches of the plan's size).
      // One thread: bulk's worker threads hand back rows rendered as bytes, which a report cannot count.
      const engine = await runtime.engine(options);
      const lookup = await engine.lookup(BULK, {
        threads: 1,
        rows: { dataDir: options.dataDir, format: 'table', fields: null, verbose: false },
        evidence: false,
        watch: (each) => progress.watchLookup(each),
      });
      const outcomes = lookupMany(lookup, targets, { concurrency: options.concurrency, list: true });
      for await (const batch of progress.track(outcomes, false)) {
        for (const outcome of batch as Iterable<Outcome<unknown>>) tally.add(outcome);
      }
      const report = tally.report(top);
      const reportWritten = await writeReport(io, options, report);
      if (reportWritten) await printCredit(io, options, SUMMARIZE_SCHEMA, report.totals.addresses - report.totals.reserved - report.totals.lookup_failures);
      // After the report, so that a mistyped map path does not cost the report of a long run;
      // and also when the reader went away (`| head`): the map is a file of its own.
      if (flags.svg !== undefined) await writeMap(io, options, flags.svg, tally.countryCounts(), files);
      if (!reportWritten) return;
      runtime.exitCode = failureExit(io, options, report, tally);
      if (report.totals.addresses === 0) {
        const none = new NetintelError('not_found', 'no IPv4 or IPv6 address in the input (see netintel grep --help for what counts as one)');
        // The all-zero report is on stdout already: the error goes to stderr alone.
        markWrittenToStdout(none);
        throw none;
      }
    });
}

function parseMapPath(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('--svg needs a file name, such as map.svg');
  return value;
}

/** The lookup targets of every input in order, each input's lines counted into `counts`. */
async function* inputTargets(
  inputs: readonly string[],
  io: CliIo,
  read: (chunks: AsyncIterable<string | Uint8Array>) => AsyncIterable<string | Uint8Array>,
  counts: InputCounts,
): AsyncGenerator<SourcedTarget[]> {
  for (const file of inputs) {
    const source = inputs.length === 1 ? null : file === '-' ? 'stdin' : file;
    try {
      yield* addressTargets(wholeLineText(read(file === '-' ? io.stdin : createReadStream(file))), source, counts);
    } catch (error) {
      if (error instanceof NetintelError) throw error;
      throw new NetintelError('usage', `cannot read ${file}: ${fileErrorReason(error)} (check the path and its permissions)`, { details: { path: file } });
    }
  }
}

/** Writes the report in the run's format; false when the reader went away (`| head`), which ends the run quietly. */
async function writeReport(io: CliIo, options: GlobalOptions, report: SummaryReport): Promise<boolean> {
  let text: string;
  switch (options.format) {
    case 'json':
      text = summaryJson(report);
      break;
    case 'ndjson':
      text = summaryNdjson(report);
      break;
    case 'csv':
      text = summaryCsv(report, options.header);
      break;
    case 'xml': {
      const { xmlFooter, xmlHeader, xmlRecord } = await import('../output/xml.js');
      text = xmlHeader(SUMMARIZE_SCHEMA.kind) + xmlRecord(report) + xmlFooter();
      break;
    }
    default: {
      const { summarizeView } = await import('../output/human/summarize-view.js');
      text = summarizeView(report, { width: terminalWidth(io), color: options.color });
    }
  }
  try {
    await createSink(io.stdout).write(text);
    return true;
  } catch (error) {
    if (error instanceof OutputClosed) return false;
    throw error;
  }
}

/** Writes the world map of the counts per country (atomically) and says on stderr what it holds. */
async function writeMap(io: CliIo, options: GlobalOptions, path: string, counts: ReadonlyMap<string, number>, files: readonly string[]): Promise<void> {
  const { renderWorldMapSvg } = await import('../output/world-map-svg.js');
  const named = files.filter((file) => file !== '-');
  const map = renderWorldMapSvg(counts, { title: named.length === 0 ? 'Addresses by country' : `Addresses by country: ${named.join(', ')}` });
  await writeOutputFile(path, map.svg, 'the map');
  if (options.quiet) return;
  const drawn = counts.size - map.unmapped.length;
  const left = map.unmapped.length === 0 ? '' : `; not on the map: ${map.unmapped.join(', ')}`;
  io.stderr.write(`netintel: map of ${drawn} ${drawn === 1 ? 'country' : 'countries'} written to ${escapeTerminalText(path)}${escapeTerminalText(left)}\n`);
}

/** The exit code the failed lookups give (0 when none failed), said in one line on stderr, the first failure's reason in another. */
function failureExit(io: CliIo, options: GlobalOptions, report: SummaryReport, tally: SummaryTally): number {
  const failures = tally.failuresByCode;
  const failed = report.totals.lookup_failures;
  if (failed === 0) return 0;
  if (!options.quiet) {
    if (tally.firstFailure !== null) io.stderr.write(`netintel: ${escapeTerminalText(tally.firstFailure)}\n`);
    const detail = [...failures].map(([code, count]) => `${code}: ${count}`).join(', ');
    io.stderr.write(`netintel: ${failed} of ${report.totals.addresses} lookups failed (${escapeTerminalText(detail)}); the report counts them as lookup failures\n`);
  }
  return exitCodeForRun(report.totals.addresses - failed, failures as ReadonlyMap<ErrorCode, number>);
}
