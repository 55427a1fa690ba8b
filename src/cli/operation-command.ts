import { createReadStream } from 'node:fs';
import { Option, type Command } from 'commander';
import { readTargetBatches, type SourcedTarget } from '../engine/bulk/read-targets.js';
import { DEFAULT_MAX_EXPAND, MAX_EXPAND_LIMIT } from '../engine/ip/ip-range-expand.js';
import { NetintelError } from '../errors.js';
import type { CommandRun } from '../operations/command-run.js';
import type { Engine, LocalEngine } from '../operations/engine.js';
import { isRemoteOperation, type DeclareKit, type Lookup, type Operation, type RemoteOperation, type SettingsKit } from '../operations/operation.js';
import { DEFAULT_MAX_BULK_THREADS } from '../operations/bulk-thread-count.js';
import { readCaFile } from './ca-file.js';
import { declareRecords } from './command-fields.js';
import { emitOutcomes } from './emit.js';
import { exitCodeWithFindings, failOnOption } from './fail-on.js';
import { fanOutOf, fanOutOptions, refuseRemoteFanOut } from './fan-out-options.js';
import { mailServerFlag, type GlobalOptions } from './global-options.js';
import { integerIn } from './integer-option.js';
import { stdinBringsList, type CliIo } from './io.js';
import { regularFileSize, type RunProgress } from './progress.js';
import type { CommandRegistration, CommandRuntime } from './runtime.js';
import { lookupTargets } from './target-run.js';
import { terminalWidth } from './terminal-width.js';
import { fileErrorReason } from '../file-error.js';

/** The shared flags of the commands, as operations declare them. */
const DECLARE_KIT: DeclareKit = {
  failOnOption,
  fanOutOptions,
  maxExpandOption: () =>
    new Option('--max-expand <n>', `most addresses a range expands to, one row each; a larger range is one error (default: ${DEFAULT_MAX_EXPAND}, at most ${MAX_EXPAND_LIMIT})`).argParser(
      integerIn('--max-expand', 1, MAX_EXPAND_LIMIT),
    ),
  integerIn,
  defaultMaxBulkThreads: DEFAULT_MAX_BULK_THREADS,
};

/**
 * The command of an operation: its declaration on a commander command of
 * the operation's name, and an action that reads the global options, parses
 * the settings, opens the run's engine (remote with `--server` when the
 * operation has an API mapping; an operation without one does not read
 * `--server`) and runs the operation's command run.
 */
export function operationCommand(operation: Operation): CommandRegistration {
  return (program, runtime) => {
    const command = program.command(operation.name);
    operation.command.declare(command, DECLARE_KIT);
    declareRecords(command, operation.record.columns);
    command.action(async (...values: unknown[]) => {
      const self = values.at(-1) as Command;
      const flags = values.at(-2) as Record<string, unknown>;
      const args = values.slice(0, -2).flatMap((value) => (Array.isArray(value) ? (value as string[]) : value === undefined ? [] : [value as string]));
      const options = runtime.options(self, { mayNameMailServer: operation.command.serverNamesMailServer === true, localOnly: operation.api === undefined });
      const kit = settingsKit(runtime, self, options);
      // What a server cannot be sent is refused before it is asked anything, and before files are read.
      if (options.remote) {
        // A global option: the server validates DNSSEC from its own anchor, whatever the command.
        if (options.trustAnchor?.onCommandLine) throw new NetintelError('usage', 'remote mode cannot send --trust-anchor: the server validates DNSSEC from the IANA root; run without --server');
        await operation.command.refuseRemote?.(flags, kit);
      }
      const settings = await operation.command.settings(flags, kit);
      // The compiler lets only an operation the API can ask reach an engine that may be remote.
      const lookup = isRemoteOperation(operation) ? lookupBy(await runtime.engine(options), operation) : lookupBy(runtime.localEngine(options), operation);
      runtime.exitCode = await operation.command.run(commandRun(runtime, options, operation, lookup, settings, args));
    });
  };
}

function settingsKit(runtime: CommandRuntime, command: Command, options: GlobalOptions): SettingsKit {
  return {
    options,
    get env() {
      return runtime.io.env;
    },
    mailServerFlag: () => mailServerFlag(command),
    fanOut: (flags) => fanOutOf(flags),
    refuseFanOut: (flags, name) => refuseRemoteFanOut(flags, name),
    readCaFile,
    async trustAnchor() {
      // In remote mode the server validates from its own anchor; a file named by the variable or the config file is not read.
      if (options.trustAnchor === null || options.remote !== null) return undefined;
      return (await import('./trust-anchor-file.js')).readTrustAnchorFile(options.trustAnchor.file, options.trustAnchor.from);
    },
    readUpTo: (file, limit) => readUpTo(file === '-' ? runtime.io.stdin : createReadStream(file), limit),
  };
}

/** The lookups of one operation through an engine that can take it. */
function lookupBy<S, R>(engine: Engine, operation: RemoteOperation<S, R>): (settings: S) => Promise<Lookup<R>>;
function lookupBy<S, R>(engine: LocalEngine, operation: Operation<S, R>): (settings: S) => Promise<Lookup<R>>;
function lookupBy<S, R>(engine: LocalEngine, operation: Operation<S, R>): (settings: S) => Promise<Lookup<R>> {
  return (settings) => engine.lookup(operation, settings);
}

function commandRun<S, R>(
  runtime: CommandRuntime,
  options: GlobalOptions,
  operation: Operation<S, R>,
  lookup: (settings: S) => Promise<Lookup<R>>,
  settings: S,
  args: readonly string[],
): CommandRun<S, R> {
  const run: CommandRun<S, R> = {
    args,
    settings,
    lookup: (given) => lookup(given ?? settings),
    options,
    get io() {
      return runtime.io;
    },
    get progress() {
      return runtime.progress;
    },
    stdinBringsList: () => stdinBringsList(runtime.io),
    stdinTargets: () => readTargetBatches(runtime.progress.input(runtime.io.stdin, () => regularFileSize(0))),
    fileTargets: (files) => fileTargets(files, runtime.io, runtime.progress),
    width: () => terminalWidth(runtime.io),
    lookupTargets: (spec) => lookupTargets(run, spec),
    emit: (outcomes, spec) => {
      const record = spec.record ?? operation.record;
      const chosen = spec.fields ? { ...options, fields: spec.fields } : options;
      return emitOutcomes(runtime.io, chosen, record.columns, outcomes, {
        single: spec.single,
        bulk: spec.bulk,
        ...(record.view ? { view: record.view } : {}),
        ...(spec.coverage ? { coverage: spec.coverage } : {}),
        ...(spec.failureMessage ? { failureMessage: spec.failureMessage } : {}),
      });
    },
    withFindings: exitCodeWithFindings,
  };
  return run;
}

/**
 * The targets of every input in order: each file, or stdin for "-" or when
 * no file is named. Line numbers count within each input, and with several
 * inputs each target names its own.
 */
async function* fileTargets(files: readonly string[], io: CliIo, progress: RunProgress): AsyncGenerator<SourcedTarget[]> {
  const inputs = files.length === 0 ? ['-'] : files;
  // The inputs' total size, when every one is a regular file: the progress line's ETA.
  const size = () => {
    const sizes = inputs.map((file) => regularFileSize(file === '-' ? 0 : file));
    return sizes.every((bytes) => bytes !== null) ? sizes.reduce((sum, bytes) => sum + bytes, 0) : null;
  };
  for (const file of inputs) {
    const source = inputs.length === 1 ? null : file === '-' ? 'stdin' : file;
    try {
      yield* readTargetBatches(progress.input(file === '-' ? io.stdin : createReadStream(file), size), source);
    } catch (error) {
      if (error instanceof NetintelError) throw error;
      throw new NetintelError('usage', `cannot read ${file}: ${fileErrorReason(error)} (check the path and its permissions)`, { details: { path: file } });
    }
  }
}

/** A stream read up to `limit` bytes, so that /dev/zero or an endless pipe costs no more than the limit. */
async function readUpTo(stream: NodeJS.ReadableStream, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    chunks.push(buffer.subarray(0, limit - size));
    size = Math.min(limit, size + buffer.length);
    if (size >= limit) break;
  }
  return Buffer.concat(chunks, size);
}
