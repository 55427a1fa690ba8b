import type { Command } from 'commander';
import { OPERATIONS } from '../operations/operations.js';
import type { RecordSchema } from '../output/record-schema.js';
import { ACCOUNT_SCHEMA } from '../output/schemas/account-schema.js';
import { API_KEY_SCHEMA } from '../output/schemas/api-key-schema.js';
import { DATA_STATUS_SCHEMA, DATA_UPDATE_SCHEMA } from '../output/schemas/data-schema.js';
import { GREP_SCHEMA } from '../output/schemas/grep-schema.js';
import { QUOTA_SCHEMA } from '../output/schemas/quota-schema.js';
import { declareRecords } from '../cli/command-fields.js';
import type { ServerFlagUse } from '../cli/global-options.js';
import type { CliIo } from '../cli/io.js';
import { operationCommand } from '../cli/operation-command.js';
import { runProgram, type CommandRegistration } from './program.js';
import { declareServerUse, declareWithoutProgress } from '../cli/runtime.js';

export { VERSION } from './program.js';
export { createProcessIo } from '../cli/io.js';

/** A command that is not an operation: its module, and what the program says of it. */
interface OrdinaryCommand {
  name: string;
  /** The command `netintel --help` lists it after; absent: the ordinary command before it. */
  after?: string;
  load: () => Promise<CommandRegistration>;
  /** The records it prints, by subcommand ('' for itself): their `--fields` names. */
  records?: Readonly<Record<string, RecordSchema>>;
  /** How it reads `--server` (default: remote mode, as the operations the API can ask). */
  serverUse?: ServerFlagUse;
  /** False: it never shows progress (a server's lookups are its callers' waits). */
  progress?: false;
}

const LOCAL_ONLY: ServerFlagUse = { localOnly: true };
const NO_REMOTE_MODE: ServerFlagUse = { noRemoteMode: true };

/** The commands that are not operations (src/operations/operations.ts lists those). */
const ORDINARY_COMMANDS: readonly OrdinaryCommand[] = [
  { name: 'grep', after: 'vpn', load: async () => (await import('../commands/grep.js')).registerGrepCommand, records: { '': GREP_SCHEMA }, serverUse: LOCAL_ONLY },
  { name: 'summarize', load: async () => (await import('../commands/summarize.js')).registerSummarizeCommand },
  {
    name: 'data',
    load: async () => (await import('../commands/data.js')).registerDataCommand,
    records: { status: DATA_STATUS_SCHEMA, update: DATA_UPDATE_SCHEMA },
    serverUse: LOCAL_ONLY,
  },
  { name: 'serve', after: 'blacklist', load: async () => (await import('../commands/serve.js')).registerServeCommand, serverUse: LOCAL_ONLY, progress: false },
  {
    name: 'keys',
    load: async () => (await import('../commands/keys.js')).registerKeysCommand,
    records: { create: API_KEY_SCHEMA, list: API_KEY_SCHEMA, revoke: API_KEY_SCHEMA },
    serverUse: LOCAL_ONLY,
  },
  {
    name: 'accounts',
    load: async () => (await import('../commands/accounts.js')).registerAccountsCommand,
    records: { list: ACCOUNT_SCHEMA, show: ACCOUNT_SCHEMA, create: ACCOUNT_SCHEMA, 'set-plan': ACCOUNT_SCHEMA, disable: ACCOUNT_SCHEMA, delete: ACCOUNT_SCHEMA },
    serverUse: NO_REMOTE_MODE,
  },
  { name: 'quota', load: async () => (await import('../commands/quota.js')).registerQuotaCommand, records: { '': QUOTA_SCHEMA } },
  { name: 'completion', load: async () => (await import('../commands/completion.js')).registerCompletionCommand, serverUse: NO_REMOTE_MODE },
];

interface CommandEntry {
  name: string;
  load: () => Promise<CommandRegistration>;
}

/**
 * Every command, in the order `netintel --help` lists them: the operations,
 * and the ordinary commands placed among them. A command's module (an
 * operation's descriptor, and the engine code behind it) loads when a run
 * needs it: a run of one command builds the program with that command
 * alone, so `netintel ip 8.8.8.8` does not initialise the other
 * operations' declarations, nor the DNS, mail or server code; any other run (help, an
 * unknown command, a global option first) builds it with every command.
 * Either way the command runs through commander, the same code.
 */
const COMMANDS: readonly CommandEntry[] = (() => {
  const entries: CommandEntry[] = OPERATIONS.map(({ name, load }) => ({ name, load: async () => operationCommand(await load()) }));
  let previous: string | undefined;
  for (const ordinary of ORDINARY_COMMANDS) {
    const anchor = ordinary.after ?? previous;
    const at = anchor === undefined ? entries.length : entries.findIndex((entry) => entry.name === anchor) + 1;
    entries.splice(at === 0 ? entries.length : at, 0, { name: ordinary.name, load: async () => described(ordinary, await ordinary.load()) });
    previous = ordinary.name;
  }
  return entries;
})();

/** An ordinary command's registration, followed by what the program says of it (its records, its use of --server). */
function described(ordinary: OrdinaryCommand, register: CommandRegistration): CommandRegistration {
  return (program, runtime) => {
    register(program, runtime);
    const command = program.commands.find((each) => each.name() === ordinary.name)!;
    if (ordinary.serverUse) declareServerUse(command, ordinary.serverUse);
    if (ordinary.progress === false) declareWithoutProgress(command);
    for (const [sub, schema] of Object.entries(ordinary.records ?? {})) {
      const target: Command | undefined = sub === '' ? command : command.commands.find((each) => each.name() === sub);
      if (target) declareRecords(target, schema);
    }
  };
}

/** The names of every command, in help order. */
export const COMMAND_NAMES: readonly string[] = COMMANDS.map(({ name }) => name);

/** Runs netintel with the arguments after the executable; resolves to the exit code. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  // A completion script covers every command: that run builds them all.
  const named = argv[0] === 'completion' ? undefined : COMMANDS.find(({ name }) => name === argv[0]);
  const registrations = await Promise.all((named === undefined ? COMMANDS : [named]).map(({ load }) => load()));
  return runProgram(argv, io, registrations);
}
