import type { Command } from 'commander';
import type { CommandRun } from '../operations/command-run.js';
import type { DeclareKit, Operation, SettingsKit } from '../operations/operation.js';
import { readCaFile } from './ca-file.js';
import { emitOutcomes } from './emit.js';
import { exitCodeWithFindings, failOnOption } from './fail-on.js';
import { fanOutOptions } from './fan-out-options.js';
import { mailServerFlag, type GlobalOptions } from './global-options.js';
import { integerIn } from './integer-option.js';
import { stdinBringsList } from './io.js';
import { maxExpandOption } from './max-expand-option.js';
import { regularFileSize } from './progress.js';
import type { CommandRegistration, CommandRuntime } from './runtime.js';
import { lookupTargets } from './target-run.js';
import { readTargetBatches } from '../engine/bulk/read-targets.js';

/** The shared flags of the commands, as operations declare them. */
const DECLARE_KIT: DeclareKit = {
  failOnOption,
  fanOutOptions,
  maxExpandOption,
  integerIn,
};

/**
 * The command of an operation: its declaration on a commander command of
 * the operation's name, and an action that reads the global options, parses
 * the settings, opens the engine (remote with `--server` when the operation
 * has an API mapping; an operation without one does not read `--server`)
 * and runs the operation's command run.
 */
export function operationCommand(operation: Operation): CommandRegistration {
  return (program, runtime) => {
    const command = program.command(operation.name);
    operation.command.declare(command, DECLARE_KIT);
    command.action(async (...values: unknown[]) => {
      const self = values.at(-1) as Command;
      const flags = values.at(-2) as Record<string, unknown>;
      const args = values.slice(0, -2).flatMap((value) => (Array.isArray(value) ? (value as string[]) : value === undefined ? [] : [value as string]));
      const kit = settingsKit(runtime, self);
      const options = runtime.options(self, { mayNameMailServer: operation.command.serverNamesMailServer === true, localOnly: operation.api === undefined });
      // What a server cannot be sent is refused before it is asked anything, and before files are read.
      if (options.remote) operation.command.refuseRemote?.(flags, kit);
      const settings = await operation.command.settings(flags, kit);
      const engine = await runtime.engine(options);
      runtime.exitCode = await operation.command.run(commandRun(runtime, options, operation, engine, settings, args));
    });
  };
}

function settingsKit(runtime: CommandRuntime, command: Command): SettingsKit {
  return {
    get env() {
      return runtime.io.env;
    },
    mailServerFlag: () => mailServerFlag(command),
    readCaFile,
    readTrustAnchorFile: async (path) => (await import('./trust-anchor-file.js')).readTrustAnchorFile(path),
  };
}

function commandRun<S>(runtime: CommandRuntime, options: GlobalOptions, operation: Operation<S>, engine: CommandRun<S>['engine'], settings: S, args: readonly string[]): CommandRun<S> {
  const run: CommandRun<S> = {
    args,
    settings,
    engine,
    options,
    get io() {
      return runtime.io;
    },
    get progress() {
      return runtime.progress;
    },
    stdinBringsList: () => stdinBringsList(runtime.io),
    stdinTargets: () => readTargetBatches(runtime.progress.input(runtime.io.stdin, () => regularFileSize(0))),
    lookupTargets: (spec) => lookupTargets(run, operation, spec),
    emit: (outcomes, spec) =>
      emitOutcomes(runtime.io, options, (spec.record ?? operation.record).columns, outcomes, {
        single: spec.single,
        bulk: spec.bulk,
        view: (spec.record ?? operation.record).view,
        ...(spec.coverage ? { coverage: spec.coverage } : {}),
      }),
    withFindings: exitCodeWithFindings,
  };
  return run;
}

