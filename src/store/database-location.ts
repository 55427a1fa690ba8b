import { join } from 'node:path';
import { homeDirectory } from '../engine/data/home-directory.js';

/**
 * The key database: `--db PATH` (or a `postgres://` URL, see
 * open-store.ts), else NETINTEL_DB, else `keys.db` in the XDG
 * data dir (`$XDG_DATA_HOME/netintel/`, default `~/.local/share/netintel/`).
 */
export function keyDbPath(flag: string | undefined, env: Readonly<Record<string, string | undefined>>): string {
  if (flag) return flag;
  if (env.NETINTEL_DB) return env.NETINTEL_DB;
  const base = env.XDG_DATA_HOME || join(homeDirectory(env), '.local', 'share');
  return join(base, 'netintel', 'keys.db');
}
