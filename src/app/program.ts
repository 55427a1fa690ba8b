import { Command, CommanderError, Option } from 'commander';
import { NetintelError } from '../errors.js';
import { environmentText } from '../setting-sources.js';
import { DBIP_CREDIT } from '../output/schemas/ip-schema.js';
import type { RecordSchema } from '../output/record-schema.js';
import { mainValueSummary } from '../output/value-format.js';
import { declaredRecords, fieldsHelp } from '../cli/command-fields.js';
import { exitCodeFor } from '../cli/exit-codes.js';
import { addGlobalOptions, applySettings, globalOptionsOf, SETTINGS } from '../cli/global-options.js';
import type { CliIo } from '../cli/io.js';
import { createRuntime, type CommandRegistration, type CommandRuntime } from '../cli/runtime.js';
import { debugRequested, guardRun } from '../cli/run-guard.js';
import { usageErrorMessage } from '../cli/usage-errors.js';
import { versionText } from '../cli/version-text.js';
import { fittedHelp, shortUsage, wrapHelpText } from '../cli/help-layout.js';
import { terminalWidth } from '../cli/terminal-width.js';

export const VERSION = '0.2.0';

export type { CommandRegistration } from '../cli/runtime.js';

/** The examples under the program's help, with the main value of each record the commands print. */
const examples = (declared: readonly RecordSchema[]) => `
Examples:
  netintel ip 8.8.8.8                                  # where an address is, who runs it
  netintel ip 8.8.8.8 --fields location.city -f value  # one bare value, for scripts
  netintel dns example.com --type MX -j                # -j is -f json
  netintel email example.com                           # the whole mail set-up, with findings
  netintel bulk ips.txt -f csv > out.csv               # many addresses, one row each
  source <(netintel completion bash)                   # tab completion (bash; zsh and fish too)

-f value prints bare values for scripts: one line per target in input order (an empty line when its lookup failed; the error goes to stderr), the --fields in the order given, separated by a tab, a missing value as an empty string, tabs, line breaks and control characters escaped (\\t, \\n, \\xHH). Without --fields, each record's main value: ${mainValueSummary(declared, Infinity, '')}.
`;

/** Builds the program: global options, then the commands. */
export function buildProgram(
  io: CliIo,
  commands: readonly CommandRegistration[],
): { program: Command; runtime: CommandRuntime; failedCommand: () => Command | undefined } {
  const runtime = createRuntime(
    io,
    (command, serverUse) => globalOptionsOf(command, io.env, io.stdout.isTTY === true, serverUse),
    // The remote client loads only for a run with --server.
    async (options, runIo, progress) => (await import('./remote-mode.js')).openRemoteEngine(options, runIo, progress),
  );
  const fitted = fittedHelp(io);
  const program = new Command('netintel')
    .description('Network and e-mail diagnostics: IP geolocation and ownership, ASN, DNS and mail checks.')
    .exitOverride()
    .configureOutput({
      // Commander writes help only through these: every text of it fits the terminal (help-layout.ts).
      writeOut: (text) => io.stdout.write(wrapHelpText(text, fitted.output.getOutHelpWidth!())),
      writeErr: (text) => io.stderr.write(wrapHelpText(text, fitted.output.getErrHelpWidth!())),
      ...fitted.output,
      // A parse error is reported as every failure is (runProgram): one `netintel: ...` line, a record with -f json.
      outputError: () => {},
    })
    // A command's help lists the global options its examples use (-f, --fields, ...).
    .configureHelp({ showGlobalOptions: true, ...fitted.help });
  addGlobalOptions(program);
  program.addOption(new Option('-V, --version', 'print the version and the dates of the datasets'));
  program.on('option:version', () => {
    const dataDir = program.getOptionValue('dataDir') as unknown;
    io.stdout.write(versionText(VERSION, typeof dataDir === 'string' && dataDir !== '' ? dataDir : null, io.env));
    throw new CommanderError(0, 'commander.version', VERSION);
  });
  for (const register of commands) register(program, runtime);
  // After the commands: the summary names the main value of the records they declare.
  program.addHelpText('after', `${examples(program.commands.flatMap(declaredRecords))}\n${DBIP_CREDIT}. ASN data: RouteViews, NRO and DB-IP (CC BY 4.0).`);
  // The command whose arguments commander refused, for the help its message points to.
  let failed: Command | undefined;
  const configure = (command: Command, path: string) => {
    command.exitOverride((error) => {
      failed ??= command;
      throw error;
    });
    if (command !== program) command.configureOutput(program.configureOutput());
    const fields = path === '' ? '' : fieldsHelp(command);
    if (fields !== '') command.addHelpText('after', fields);
    for (const sub of command.commands) configure(sub, path === '' ? sub.name() : `${path} ${sub.name()}`);
  };
  configure(program, '');
  return { program, runtime, failedCommand: () => failed };
}

/**
 * Runs netintel with the arguments after the executable and returns the exit
 * code; the only place that turns errors into exit codes. Never calls
 * process.exit (it would cut piped output short).
 */
export async function runProgram(argv: readonly string[], processIo: CliIo, commands: readonly CommandRegistration[]): Promise<number> {
  const run = guardRun(processIo, debugRequested(argv, processIo.env));
  const { io } = run;
  let program: Command | undefined;
  let runtime: CommandRuntime | undefined;
  let failedCommand: (() => Command | undefined) | undefined;
  let outcome: { code: number } | { error: unknown };
  try {
    ({ program, runtime, failedCommand } = buildProgram(io, commands));
    applySettings(program, io.env);
    if (argv.length === 0) {
      // Nothing asked: the commands in a screen, not the whole help (docs/exit-codes.md: a usage error).
      io.stderr.write(shortUsage(program, terminalWidth(io)));
      outcome = { code: exitCodeFor('usage') };
    } else {
      await program.parseAsync([...argv], { from: 'user' });
      outcome = { code: runtime.exitCode };
    }
  } catch (error) {
    if (error instanceof CommanderError) {
      const ok = error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.exitCode === 0;
      // 'commander.help': a command that needs a subcommand got none, and its help went to stderr.
      if (ok || error.code === 'commander.help') outcome = { code: ok ? 0 : exitCodeFor('usage') };
      else outcome = { error: new NetintelError('usage', usageErrorMessage(error, failedCommand?.()), { details: { reason: error.code } }) };
    } else outcome = { error };
  }
  try {
    await runtime?.close('code' in outcome);
  } catch (error) {
    if ('code' in outcome) outcome = { error };
  }
  // The arguments' last -f first: a parse error may stop commander before it reaches it.
  const parsed = program === undefined || program.getOptionValueSource('format') === 'default' ? undefined : (program.opts().format as string);
  const format = formatFlag(argv) ?? parsed ?? environmentText(io.env, SETTINGS.format.env);
  return run.finish(outcome, format);
}

/**
 * The format a `-f`/`--format` flag asks for, read from the raw arguments:
 * the config file and the environment are applied before commander parses
 * them, so a failure there must still honour `-f json`.
 */
function formatFlag(argv: readonly string[]): string | undefined {
  let format: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') break;
    if (arg === '-j' || arg === '--json') format = 'json';
    else if (arg === '-f' || arg === '--format') format = argv[++i];
    else if (arg.startsWith('--format=')) format = arg.slice('--format='.length);
    else if (/^-f./.test(arg)) format = arg.slice(2);
  }
  return format;
}
