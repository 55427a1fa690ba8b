import type { Command } from 'commander';
import { emitOutcomes } from '../cli/emit.js';
import type { CommandRuntime } from '../cli/runtime.js';
import { NetintelError, toNetintelError } from '../errors.js';
import { QUOTA_SCHEMA } from '../output/schemas/quota-schema.js';

/** `netintel quota`: the plan of the key given with --api-key and what is left of its allowance. */
export function registerQuotaCommand(program: Command, runtime: CommandRuntime): void {
  program
    .command('quota')
    .description('the plan and remaining allowance of --api-key at --server (asking costs nothing)')
    .addHelpText('after', '\nExamples:\n  netintel quota --server https://api.example.net --api-key ni_...\n  NETINTEL_SERVER=http://127.0.0.1:8080 netintel quota -f json')
    .action(async (_flags: unknown, command: Command) => {
      const options = runtime.options(command);
      if (!options.remote) throw new NetintelError('usage', 'quota asks a netintel server: give --server URL (and --api-key KEY), or set NETINTEL_SERVER');
      const remote = await runtime.remoteEngine(options);
      const outcome = await remote.quota().then(
        (value) => ({ ok: true as const, query: options.remote!.server, value }),
        (error: unknown) => ({ ok: false as const, query: options.remote!.server, error: toNetintelError(error) }),
      );
      runtime.exitCode = await emitOutcomes(runtime.io, options, QUOTA_SCHEMA, [[outcome]], { single: true, bulk: false });
    });
}
