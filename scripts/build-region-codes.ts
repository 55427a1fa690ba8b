/**
 * Install-time steps of `build:data`: derives data/build/region-codes.json,
 * the ISO 3166-2 code of every (country, region) pair the bundled DB-IP city
 * data uses, and data/build/country-names.json, so that lookups need no name
 * matching and no ICU locale loading at run time.
 */
import { readFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { compileRegionCodes, type RegionCodeStats } from '../src/engine/geo/compile-region-codes.js';
import { countryNamesFromIcu } from '../src/engine/geo/country-names.js';
import { MmdbFile } from '../src/engine/geo/mmdb-file.js';

/** Every (country, region) pair of an IPv4 city database, visiting each network once. */
function regionPairs(mmdbPath: string): Array<[string, string]> {
  const file = MmdbFile.open(mmdbPath, { mode: 'memory', cacheSize: 0 });
  try {
    const offsets = new Set<number>();
    // Each lookup reports the prefix length of the network it landed in, so
    // the walk jumps from network to network instead of address to address.
    for (let address = 0; address <= 0xffff_ffff; address += 2 ** (32 - file.lastPrefixLength)) {
      const offset = file.findOffsetV4(address);
      if (offset >= 0) offsets.add(offset);
    }
    const pairs = new Map<string, [string, string]>();
    for (const offset of offsets) {
      const record = file.decode(offset) as { country_code?: string; state1?: string };
      if (record.country_code && record.state1) pairs.set(`${record.country_code}\0${record.state1}`, [record.country_code, record.state1]);
    }
    return [...pairs.values()];
  } finally {
    file.close();
  }
}

/** Writes data/build/country-names.json from the ICU data of the Node that builds it. */
export async function buildCountryNames(root: string): Promise<{ path: string; countries: number }> {
  const table = countryNamesFromIcu();
  const path = join(root, 'data', 'build', 'country-names.json');
  await writeAtomically(path, `${JSON.stringify(table)}\n`);
  return { path, countries: Object.keys(table).length };
}

async function writeAtomically(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, text);
  await rename(temporary, path);
}

export async function buildRegionCodes(root: string, cityV4Path: string): Promise<RegionCodeStats & { path: string }> {
  const aliases = (JSON.parse(readFileSync(join(root, 'data', 'region-aliases.json'), 'utf8')) as { aliases: Record<string, Record<string, string>> })
    .aliases;
  const { table, stats } = await compileRegionCodes(regionPairs(cityV4Path), aliases);
  const path = join(root, 'data', 'build', 'region-codes.json');
  await writeAtomically(path, `${JSON.stringify(table)}\n`);
  return { ...stats, path };
}
