import type { Command } from 'commander';
import { createEngineContext, type EngineContext } from '../engine/context.js';
import { readCaFile } from './ca-file.js';
import { parseResolverAddress, type ResolverAddress } from '../engine/dns/resolver-address.js';
import type { ServerFlagUse } from './global-options.js';
import type { CliIo } from './io.js';
import type { GlobalOptions } from './global-options.js';
import { NetintelError } from '../errors.js';
import { escapeTerminalText } from '../output/terminal-text.js';
import { createRunProgress, SILENT, type RunProgress } from './progress.js';

/** Commands whose remote mode calls the API; a command in neither list refuses --server (exit 9). */
const REMOTE_COMMANDS = new Set(['ip', 'asn', 'dns', 'bulk', 'summarize', 'quota', 'vpn', 'blacklist', 'smtp', 'mx', 'spf', 'email', 'dkim', 'bimi']);
/** Commands that work on this machine by nature: --server does not apply to them. */
const LOCAL_ONLY_COMMANDS = new Set(['serve', 'keys', 'data', 'range', 'grep']);
/** Commands that never show progress: the server's lookups are its callers' waits, and its log says what it does. */
const WITHOUT_PROGRESS = new Set(['serve']);

/** What a command action needs: the process surface, its options, an engine context. */
export interface CommandRuntime {
  io: CliIo;
  /** Set by the action: the run's exit code. */
  exitCode: number;
  /** The resolved global options; `serverUse` says how the command reads `--server`. */
  options(command: Command, serverUse?: Pick<ServerFlagUse, 'mayNameMailServer'>): GlobalOptions;
  context(options: GlobalOptions): EngineContext;
  /** What the run shows on a terminal's stderr while it waits (nothing until the options are read). */
  readonly progress: RunProgress;
  /** Ends the progress display (`completed`: the run did not end on an error), then closes every context the run created. */
  close(completed?: boolean): Promise<void>;
}

/** Reads a command's global options (commander's, in the CLI); `serverUse` as for CommandRuntime.options. */
export type OptionsReader = (command: Command, serverUse: ServerFlagUse) => GlobalOptions;

export function createRuntime(io: CliIo, readOptions: OptionsReader): CommandRuntime {
  const contexts: EngineContext[] = [];
  let progress: RunProgress | null = null;
  let silenceTold = false;
  // Once progress shows, the commands' stderr lines pass through it (progress.ts).
  let runIo = io;
  return {
    get io() {
      return runIo;
    },
    exitCode: 0,
    options: (command, serverUse = {}) => {
      const name = topLevelName(command);
      const options = readOptions(command, { ...serverUse, localOnly: LOCAL_ONLY_COMMANDS.has(name) });
      if (options.remote && !REMOTE_COMMANDS.has(name) && !LOCAL_ONLY_COMMANDS.has(name)) {
        // Saying so beats quietly answering from the local engine when a server was asked for.
        throw new NetintelError('not_implemented', `netintel ${name} has no remote mode yet: run it without --server (or unset NETINTEL_SERVER)`, {
          details: { command: name },
        });
      }
      if (progress === null) {
        progress = WITHOUT_PROGRESS.has(name) ? SILENT : createRunProgress(io, options);
        runIo = progress.wrapIo(io);
      }
      return options;
    },
    get progress() {
      return progress ?? SILENT;
    },
    context: (options) => {
      const ctx = createEngineContext({
        dataDir: options.dataDir,
        timeoutMs: options.timeoutMs,
        resolvers: resolversOf(options),
        dnsTcp: options.dnsTcp,
        dnsRetries: options.dnsRetries,
        debug: options.verbose ? (message) => runIo.stderr.write(`netintel: ${escapeTerminalText(message)}\n`) : () => {},
        ...(progress !== null && progress !== SILENT ? { onStage: progress.onStage } : {}),
        // Once per run, at the first resolver that falls silent: what to do about it, where the lookups' own errors only say what failed.
        onResolverSilent: (resolver, timeoutMs) => {
          if (silenceTold || options.quiet) return;
          silenceTold = true;
          runIo.stderr.write(`netintel: ${escapeTerminalText(silentResolverHint(resolver, timeoutMs))}\n`);
        },
      });
      contexts.push(ctx);
      return ctx;
    },
    close: async (completed = true) => {
      progress?.stop(completed);
      await Promise.all(contexts.map((ctx) => ctx.close()));
    },
  };
}

/** What to do when a resolver does not answer: said once per run (the lookups that failed say what failed). */
export function silentResolverHint(resolver: string, timeoutMs: number): string {
  return `DNS server ${resolver} did not answer within ${timeoutMs} ms: if it is down, name another with --resolver; if it is slow, allow more time with --timeout`;
}

/**
 * The resolvers of the options, those over HTTPS or TLS trusting the CAs of
 * `resolverCa` besides Node's own.
 *
 * @throws NetintelError `usage` when the CA file cannot be read or holds no certificate.
 */
function resolversOf(options: GlobalOptions): ResolverAddress[] | null {
  if (options.resolvers === null) return null;
  const ca = options.resolverCa === null ? undefined : readCaFile(options.resolverCa, '--resolver-ca');
  return options.resolvers.map((text) => parseResolverAddress(text, ca === undefined ? {} : { ca }));
}

/** The name of the command under `netintel` (`data` for `netintel data status`). */
function topLevelName(command: Command): string {
  let top = command;
  while (top.parent?.parent) top = top.parent;
  return top.name();
}
