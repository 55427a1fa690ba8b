import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { homeDirectory } from '../engine/data/home-directory.js';
import { NetintelError } from '../errors.js';
import { readBoundedFileSync } from '../read-file-bounded.js';
import { environmentText } from '../setting-sources.js';

/**
 * The largest config file read, in bytes: 1 MiB. It holds a few dozen
 * settings; every run reads it, so neither /dev/zero nor a runaway file
 * may cost more memory than this.
 */
export const CONFIG_FILE_MAX_BYTES = 1024 * 1024;

/**
 * The config file: JSON in the XDG config dir
 * (`$XDG_CONFIG_HOME/netintel/config.json`, default `~/.config/netintel/config.json`),
 * or the file named by NETINTEL_CONFIG. Keys are long flag names
 * (`"format": "csv"`, `"data-dir": "/srv/geo"`, `"timeout": 3000`).
 */
export function configFilePath(env: Readonly<Record<string, string | undefined>>): string {
  const named = environmentText(env, 'NETINTEL_CONFIG');
  if (named !== undefined) return named;
  const base = env.XDG_CONFIG_HOME || join(homeDirectory(env), '.config');
  return join(base, 'netintel', 'config.json');
}

/**
 * Reads the config file; a missing file is an empty config, a malformed
 * one, one larger than {@link CONFIG_FILE_MAX_BYTES} or one that cannot be
 * read a `usage` error naming it.
 */
export function readConfigFile(path: string): Record<string, unknown> {
  // Most runs have no config file: asking first spares the error object of a failed read.
  if (!existsSync(path)) return {};
  const text = readBoundedFileSync(path, {
    maxBytes: CONFIG_FILE_MAX_BYTES,
    what: 'config file',
    hint: 'fix or remove it (NETINTEL_CONFIG names another)',
  }).toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new NetintelError('usage', `the config file ${path} is not valid JSON: ${(error as Error).message}`, { details: { path } });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new NetintelError('usage', `the config file ${path} must hold a JSON object`, { details: { path } });
  }
  return parsed as Record<string, unknown>;
}
