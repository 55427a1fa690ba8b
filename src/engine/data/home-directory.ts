import { createRequire } from 'node:module';

/**
 * The user's home directory: `$HOME`, as os.homedir() would answer first,
 * else the password database's entry. node:os is loaded only for that
 * fallback: a one-off lookup would otherwise pay a third of a millisecond
 * to load a module it does not use.
 */
export function homeDirectory(env: Readonly<Record<string, string | undefined>>): string {
  if (env.HOME) return env.HOME;
  return (createRequire(import.meta.url)('node:os') as typeof import('node:os')).homedir();
}
