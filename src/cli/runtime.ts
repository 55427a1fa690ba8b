import type { Command } from 'commander';
import { createEngineContext, type EngineContext } from '../engine/context.js';
import type { Engine, LocalEngine } from '../operations/engine.js';
import type { RemoteEngine } from '../remote/remote-engine.js';
import { createLocalEngine } from '../operations/local-engine.js';
import { nodeExtraCaCertificates, readCaFile } from './ca-file.js';
import { parseResolverAddress, type ResolverAddress } from '../engine/dns/resolver-address.js';
import type { ServerFlagUse } from './global-options.js';
import type { CliIo } from './io.js';
import type { GlobalOptions } from './global-options.js';
import { NetintelError } from '../errors.js';
import { escapeTerminalText } from '../output/terminal-text.js';
import { createRunProgress, SILENT, type RunProgress } from './progress.js';

/** Adds one command (its flags, help and action) to the program. */
export type CommandRegistration = (program: Command, runtime: CommandRuntime) => void;

/** How each top-level command reads `--server`, said where it is registered. */
const SERVER_USE = new WeakMap<Command, ServerFlagUse>();

/** Says how a top-level command reads `--server` (serve, keys, data: not at all; accounts: refused). */
export function declareServerUse(command: Command, use: ServerFlagUse): void {
  SERVER_USE.set(command, use);
}

/** Opens the remote engine of a run with `--server` (src/remote, loaded only for such a run). */
export type RemoteEngineOpener = (options: GlobalOptions, io: CliIo, progress: RunProgress) => Promise<RemoteEngine>;

/** The top-level commands that never show progress, said where they are registered. */
const WITHOUT_PROGRESS = new WeakSet<Command>();

/** Says that a top-level command never shows progress (serve: its lookups are its callers' waits, and its log says what it does). */
export function declareWithoutProgress(command: Command): void {
  WITHOUT_PROGRESS.add(command);
}

/** What a command action needs: the process surface, its options, an engine context. */
export interface CommandRuntime {
  io: CliIo;
  /** Set by the action: the run's exit code. */
  exitCode: number;
  /** The resolved global options; `serverUse` says how the command reads `--server`. */
  options(command: Command, serverUse?: ServerFlagUse): GlobalOptions;
  context(options: GlobalOptions): EngineContext;
  /** The run's engine: remote with `--server`, else local over a new context (made either way, as it reads the resolver flags). */
  engine(options: GlobalOptions): Promise<Engine>;
  /** The local engine over a new context: for what the API cannot ask. */
  localEngine(options: GlobalOptions): LocalEngine;
  /** The engine of the netintel server `--server` names (`quota` asks it for the key's plan). */
  remoteEngine(options: GlobalOptions): Promise<RemoteEngine>;
  /** What the run shows on a terminal's stderr while it waits (nothing until the options are read). */
  readonly progress: RunProgress;
  /** Ends the progress display (`completed`: the run did not end on an error), then closes every context the run created. */
  close(completed?: boolean): Promise<void>;
}

/** Reads a command's global options (commander's, in the CLI); `serverUse` as for CommandRuntime.options. */
export type OptionsReader = (command: Command, serverUse: ServerFlagUse) => GlobalOptions;

export function createRuntime(io: CliIo, readOptions: OptionsReader, openRemote: RemoteEngineOpener): CommandRuntime {
  const contexts: EngineContext[] = [];
  const engines: Engine[] = [];
  let progress: RunProgress | null = null;
  let silenceTold = false;
  // Read once per run, when a certificate is first judged (see nodeExtraCaCertificates).
  let extraTrustAnchors: string[] | undefined;
  // Once progress shows, the commands' stderr lines pass through it (progress.ts).
  let runIo = io;
  return {
    get io() {
      return runIo;
    },
    exitCode: 0,
    options: (command, serverUse = {}) => {
      const use = { ...SERVER_USE.get(topLevel(command)), ...serverUse };
      const options = readOptions(command, use);
      if (options.remote && use.noRemoteMode) {
        const name = topLevel(command).name();
        // Saying so beats quietly answering from the local engine when a server was asked for.
        throw new NetintelError('not_implemented', `netintel ${name} has no remote mode yet: run it without --server (or unset NETINTEL_SERVER)`, {
          details: { command: name },
        });
      }
      if (progress === null) {
        progress = WITHOUT_PROGRESS.has(topLevel(command)) ? SILENT : createRunProgress(io, options);
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
        extraTrustAnchors: () => (extraTrustAnchors ??= nodeExtraCaCertificates(io.env)),
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
    async engine(options) {
      const local = this.localEngine(options);
      if (!options.remote) return local;
      return this.remoteEngine(options);
    },
    async remoteEngine(options) {
      const remote = await openRemote(options, runIo, progress ?? SILENT);
      engines.push(remote);
      return remote;
    },
    localEngine(options) {
      const engine = createLocalEngine(this.context(options));
      engines.push(engine);
      return engine;
    },
    close: async (completed = true) => {
      progress?.stop(completed);
      try {
        await Promise.all(engines.map((engine) => engine.close()));
      } finally {
        await Promise.all(contexts.map((ctx) => ctx.close()));
      }
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

/** The command under `netintel` (`data` for `netintel data status`). */
function topLevel(command: Command): Command {
  let top = command;
  while (top.parent?.parent) top = top.parent;
  return top;
}
