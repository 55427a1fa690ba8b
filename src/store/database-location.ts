import { join } from 'node:path';
import { homeDirectory } from '../engine/data/home-directory.js';
import { resolveSetting, type Environment, type SettingSources } from '../setting-sources.js';

/** The `--db` option of serve, keys and accounts, and its variable. */
export const KEY_DATABASE_SETTING = { flag: '--db', env: 'NETINTEL_DB' } as const satisfies SettingSources;

/**
 * The key database: `--db PATH` (or a `postgres://` URL, see
 * open-store.ts), else NETINTEL_DB, else `keys.db` in the XDG
 * data dir (`$XDG_DATA_HOME/netintel/`, default `~/.local/share/netintel/`).
 * An empty `--db` counts as not given, as an empty variable does.
 */
export function keyDbPath(flag: string | undefined, env: Environment): string {
  const given = resolveSetting(KEY_DATABASE_SETTING, { flag: flag || undefined, env });
  if (given !== undefined) return given.value;
  const base = env.XDG_DATA_HOME || join(homeDirectory(env), '.local', 'share');
  return join(base, 'netintel', 'keys.db');
}
