import { homedir } from 'node:os';

/**
 * The user's home directory: `$HOME`, as os.homedir() would answer first,
 * else the password database's entry. (The bundle loads node:os only when
 * it is called: scripts/bundle.mjs.)
 */
export function homeDirectory(env: Readonly<Record<string, string | undefined>>): string {
  return env.HOME || homedir();
}
