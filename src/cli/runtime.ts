import type { Command } from 'commander';
import { createEngineContext, type EngineContext } from '../engine/context.js';
import { parseResolverAddress } from '../engine/dns/resolver-address.js';
import { globalOptionsOf, type GlobalOptions } from './global-options.js';
import type { CliIo } from './io.js';

/** What a command action needs: the process surface, its options, an engine context. */
export interface CommandRuntime {
  io: CliIo;
  /** Set by the action: the run's exit code. */
  exitCode: number;
  options(command: Command): GlobalOptions;
  context(options: GlobalOptions): EngineContext;
  /** Closes every context the run created. */
  close(): Promise<void>;
}

export function createRuntime(io: CliIo): CommandRuntime {
  const contexts: EngineContext[] = [];
  return {
    io,
    exitCode: 0,
    options: (command) => globalOptionsOf(command, io.env, io.stdout.isTTY === true),
    context: (options) => {
      const ctx = createEngineContext({
        dataDir: options.dataDir,
        timeoutMs: options.timeoutMs,
        resolvers: options.resolvers?.map(parseResolverAddress) ?? null,
        dnsTcp: options.dnsTcp,
        dnsRetries: options.dnsRetries,
        debug: options.verbose ? (message) => io.stderr.write(`netintel: ${message}\n`) : () => {},
      });
      contexts.push(ctx);
      return ctx;
    },
    close: async () => {
      await Promise.all(contexts.map((ctx) => ctx.close()));
    },
  };
}
