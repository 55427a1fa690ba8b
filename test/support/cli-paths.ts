/**
 * The built CLI's three entry paths (bin/load-bundle.js: the direct bundle
 * for plain ip/asn/vpn lookups, the lookup bundle for the other ip/asn/vpn
 * runs, the main bundle for every other command), and spawnCli with a
 * stdout of the test's choosing.
 */
import { createRequire } from 'node:module';
import { isolatedEnv, spawnCli, type SpawnOptions, type SpawnResult } from './cli.js';

export type EntryPath = 'direct' | 'lookup' | 'main';

const require = createRequire(import.meta.url);

/** Which bundle bin/netintel.js runs for these arguments and this environment (isolated as spawnCli's). */
export function entryPathOf(argv: readonly string[], env: Record<string, string | undefined> = {}): EntryPath {
  const { loadCli } = require('../../bin/load-bundle.js') as { loadCli: (argv: readonly string[], env: object) => object };
  const cli = loadCli(argv, isolatedEnv(env));
  if ('ALL_COMMANDS' in cli) return 'main';
  return 'LOOKUP_COMMAND_NAMES' in cli ? 'lookup' : 'direct';
}

export type SpawnToOptions = SpawnOptions & Required<Pick<SpawnOptions, 'stdout'>>;

/** Runs `node bin/netintel.js ...argv` with the given stdout; stdout text is only kept for a pipe. */
export function spawnTo(argv: readonly string[], options: SpawnToOptions): Promise<SpawnResult> {
  return spawnCli(argv, { ...options, timeoutMs: options.timeoutMs ?? 20_000 });
}
