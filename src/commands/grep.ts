import { createReadStream } from 'node:fs';
import type { Command } from 'commander';
import type { AddressMatch, ScanOptions } from '../engine/grep/address-scanner.js';
import { addressFacts, createAddressFilter } from '../engine/grep/address-filter.js';
import { InputScan, type FoundLine } from '../engine/grep/input-scan.js';
import { wholeLineBytes } from '../engine/grep/text-lines.js';
import { NetintelError } from '../errors.js';
import { GREP_SCHEMA } from '../output/schemas/grep-schema.js';
import { emitOutcomes } from '../cli/emit.js';
import { markWrittenToStdout } from '../cli/report-failure.js';
import { createSink, OutputClosed, stdinBringsList, type CliIo } from '../cli/io.js';
import type { CommandRuntime } from '../cli/runtime.js';
import { createGrepLineWriter } from '../output/human/grep-view.js';
import type { Outcome } from '../engine/outcome.js';
import { escapeTerminalText } from '../output/terminal-text.js';
import { fileErrorReason } from '../file-error.js';

interface GrepFlags {
  onlyMatching?: boolean;
  unique?: boolean;
  count?: boolean;
  v4?: boolean;
  v6?: boolean;
  cidr?: boolean;
  excludeReserved?: boolean;
  lineNumber?: boolean;
  withFilename?: boolean;
  /** False with --no-filename (commander's negated option). */
  filename?: boolean;
}

/** One input: its name (null for stdin) and its bytes in whole-line pieces. */
interface Input {
  source: string | null;
  pieces: AsyncIterable<Buffer>;
}

/** Lines of output gathered before a write: fewer, larger writes. */
const FLUSH_AT = 64 * 1024;
/** Bytes of a file read at once: each read is scanned whole, so fewer reads are fewer scans to set up. */
const READ_CHUNK = 1024 * 1024;

export function registerGrepCommand(program: Command, runtime: CommandRuntime): void {
  program
    .command('grep')
    .description('find IPv4 and IPv6 addresses in any text (logs, mail headers, JSON): matching lines, or the addresses with -o')
    .argument('[files...]', 'text files ("-" or none: stdin)')
    .option('-o, --only-matching', 'print each address found, one per line, not the whole line')
    .option('-u, --unique', 'print each address once, at its first occurrence (implies -o)')
    .option('-c, --count', 'print how many lines hold an address, per input, as grep -c does (with -o or -u: how many addresses)')
    .option('-4, --v4', 'IPv4 addresses only')
    .option('-6, --v6', 'IPv6 addresses only (IPv4-mapped ::ffff:a.b.c.d included)')
    .option('--cidr', 'take a prefix length after an address as part of it (10.0.0.0/8)')
    .option('--exclude-reserved', 'skip private, loopback, documentation and other special-purpose addresses')
    .option('-n, --line-number', 'prefix each output line with its line number in its input')
    .option('-H, --with-filename', 'prefix each output line with its file name (the default with several files)')
    .option('--no-filename', 'no file name prefix, even with several files')
    .addHelpText(
      'after',
      '\nExit status: 0 when an address was found, 3 (and one line on stderr) when none was.\nExamples:\n  netintel grep -o --unique access.log\n  netintel grep -c access.log error.log\n  netintel grep --exclude-reserved -n mail.eml\n  journalctl -u sshd | netintel grep -o --v4 | sort | uniq -c',
    )
    .action(async (files: string[], flags: GrepFlags, command: Command) => {
      const options = runtime.options(command);
      const { io } = runtime;
      if (files.length === 0 && !stdinBringsList(io)) {
        throw new NetintelError('usage', 'grep reads text from files or stdin: give a file, or pipe the text in');
      }
      const both = flags.v4 === flags.v6;
      const versions = new Set<4 | 6>(both ? [4, 6] : flags.v4 ? [4] : [6]);
      const textOutput = options.format === 'table';
      const filter = createAddressFilter({
        versions,
        excludeReserved: flags.excludeReserved === true,
        unique: flags.unique === true,
      });
      const inputs = files.length === 0 ? ['-'] : files;
      const named = flags.filename !== false && (flags.withFilename === true || inputs.length > 1);
      const scanOptions = { cidr: flags.cidr === true, versions };
      const texts = inputTexts(inputs, io);
      let found = 0;
      if (flags.count === true) {
        if (!textOutput) throw new NetintelError('usage', `--count prints counts as text: leave out -f ${options.format} (or drop --count for the addresses as records)`);
        const countAddresses = flags.onlyMatching === true || flags.unique === true;
        found = await writeCounts(io, texts, { named, countAddresses }, scanOptions, filter);
      } else if (textOutput) {
        const onlyMatching = flags.onlyMatching === true || flags.unique === true;
        const numbered = flags.lineNumber === true;
        const draw = createGrepLineWriter({ color: options.color });
        // Without a file name or line number the prefix is empty: nothing to draw for each address.
        const prefixOf =
          named || numbered
            ? (source: string | null, line: FoundLine) => draw.prefix({ source: named ? (source ?? '(standard input)') : null, lineNumber: numbered ? line.number : null })
            : () => '';
        const writer: TextWriter = onlyMatching
          ? { address: (source, match, line) => `${prefixOf(source, line)}${draw.address(match.text)}\n`, endOfPiece: () => '' }
          : wholeLines(draw, prefixOf);
        found = await writeText(io, texts, writer, numbered, scanOptions, filter);
      } else {
        const outcomes = matchRecords(texts, scanOptions, filter, () => found++);
        runtime.exitCode = await emitOutcomes(io, options, GREP_SCHEMA, outcomes, { single: false, bulk: false });
        if (runtime.exitCode !== 0) return;
      }
      if (found === 0) {
        const none = new NetintelError('not_found', 'no IPv4 or IPv6 address in the input (see netintel grep --help for what counts as one)');
        // A data format's empty document already says so on stdout: the error goes to stderr alone.
        if (!textOutput) markWrittenToStdout(none);
        throw none;
      }
    });
}

/** Each input's bytes in whole-line pieces. */
async function* inputTexts(inputs: readonly string[], io: CliIo): AsyncGenerator<Input> {
  for (const file of inputs) {
    const source = file === '-' ? null : file;
    const stream = file === '-' ? io.stdin : createReadStream(file, { highWaterMark: READ_CHUNK });
    yield { source, pieces: readable(wholeLineBytes(stream), file) };
  }
}

async function* readable(pieces: AsyncIterable<Buffer>, file: string): AsyncGenerator<Buffer> {
  try {
    yield* pieces;
  } catch (error) {
    if (error instanceof NetintelError) throw error;
    throw new NetintelError('usage', `cannot read ${file}: ${fileErrorReason(error)} (check the path and its permissions)`, { details: { path: file } });
  }
}

/** What grep -o or grep without it writes of the kept addresses, as the scan visits them. */
interface TextWriter {
  /** The output of one kept address: its line, or (whole lines) the line before once this one starts. */
  address(source: string | null, match: AddressMatch, line: FoundLine): string;
  /** The output still held at the end of a piece (whose last line ends there). */
  endOfPiece(): string;
}

/** Whole lines, each written once with its addresses marked: the addresses of a line come one after another. */
function wholeLines(draw: ReturnType<typeof createGrepLineWriter>, prefixOf: (source: string | null, line: FoundLine) => string): TextWriter {
  let lineStart = -1;
  let head = '';
  let text = '';
  let marks: Array<{ start: number; text: string }> = [];
  const lineDone = () => {
    if (lineStart === -1) return '';
    const out = `${head}${draw.line(text, marks)}\n`;
    lineStart = -1;
    marks = [];
    return out;
  };
  return {
    address: (source, match, line) => {
      let out = '';
      if (line.start !== lineStart) {
        out = lineDone();
        lineStart = line.start;
        head = prefixOf(source, line);
        text = line.text();
      }
      marks.push({ start: line.column(match), text: match.text });
      return out;
    },
    endOfPiece: lineDone,
  };
}

/** Scans every input, writing what `writer` makes of the kept addresses; the number of addresses found. */
async function writeText(
  io: CliIo,
  inputs: AsyncIterable<Input>,
  writer: TextWriter,
  countLines: boolean,
  scanOptions: ScanOptions,
  filter: (match: AddressMatch) => boolean,
): Promise<number> {
  const stdout = createSink(io.stdout);
  let found = 0;
  let pending = '';
  try {
    for await (const input of inputs) {
      const scan = new InputScan(scanOptions, filter, countLines);
      for await (const piece of input.pieces) {
        scan.scanPiece(piece, (match, line) => {
          found++;
          pending += writer.address(input.source, match, line);
        });
        pending += writer.endOfPiece();
        if (pending.length >= FLUSH_AT) {
          await stdout.write(pending);
          pending = '';
        }
      }
    }
    await stdout.write(pending);
  } catch (error) {
    // `| head` closed the pipe: the run stops quietly, having found what it wrote.
    if (error instanceof OutputClosed) return Math.max(found, 1);
    throw error;
  }
  return found;
}

/**
 * Writes one count per input (`name:count` when inputs are named, as grep -c
 * does): the lines holding a kept address, or the addresses themselves.
 * Returns the number of addresses found in all.
 */
async function writeCounts(
  io: CliIo,
  inputs: AsyncIterable<Input>,
  how: { named: boolean; countAddresses: boolean },
  scanOptions: ScanOptions,
  filter: (match: AddressMatch) => boolean,
): Promise<number> {
  const stdout = createSink(io.stdout);
  let found = 0;
  try {
    for await (const input of inputs) {
      let count = 0;
      const scan = new InputScan(scanOptions, filter, false);
      for await (const piece of input.pieces) {
        let lineStart = -1;
        scan.scanPiece(piece, (_match, line) => {
          found++;
          if (how.countAddresses) count++;
          else if (line.start !== lineStart) {
            count++;
            lineStart = line.start;
          }
        });
      }
      const name = how.named ? `${escapeTerminalText(input.source ?? '(standard input)')}:` : '';
      await stdout.write(`${name}${count}\n`);
    }
  } catch (error) {
    // `| head` closed the pipe: the run stops quietly.
    if (error instanceof OutputClosed) return Math.max(found, 1);
    throw error;
  }
  return found;
}

/** Every address kept, as a record with its position (data formats), one batch per input piece. */
async function* matchRecords(
  inputs: AsyncIterable<Input>,
  scanOptions: ScanOptions,
  filter: (match: AddressMatch) => boolean,
  onFound: () => void,
): AsyncGenerator<Outcome<unknown>[]> {
  for await (const input of inputs) {
    const scan = new InputScan(scanOptions, filter, true);
    for await (const piece of input.pieces) {
      const batch: Outcome<unknown>[] = [];
      scan.scanPiece(piece, (match, line) => {
        const facts = addressFacts(match);
        onFound();
        batch.push({
          ok: true,
          query: match.text,
          value: {
            address: match.text,
            canonical: facts.canonical,
            version: match.version,
            prefix_length: match.prefix_length,
            reserved: facts.reserved,
            file: input.source,
            line: line.number,
            column: line.column(match) + 1,
          },
        });
      });
      if (batch.length > 0) yield batch;
    }
  }
}
