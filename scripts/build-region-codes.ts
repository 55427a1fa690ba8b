/**
 * Install-time steps of `build:data`: derives data/build/regions.tsv (the
 * ISO 3166-2 code of every region the bundled DB-IP city data uses) and
 * data/build/country-names.json, so that a lookup needs neither name
 * matching nor ICU locale loading at run time.
 */
import { readFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createRegionMatcher } from '../src/engine/geo/compile-region-codes.js';
import { countryNamesFromIcu } from '../src/engine/geo/country-names.js';
import { MmdbFile } from '../src/engine/dataset/mmdb-file.js';
import { formatRegionTable, type RegionEntry } from '../src/engine/geo/region-codes.js';

interface CityRecord {
  country_code?: string;
  state1?: string;
}

/** The (country, region) pairs of a city database's records, visiting each network of its tree once. */
function regionsOf(file: MmdbFile): Array<[country: string, region: string]> {
  const offsets = new Set<number>();
  // Each lookup reports the prefix length of the network it landed in, so
  // the walk jumps from network to network instead of address to address.
  if (file.metadata.ipVersion === 4) {
    for (let address = 0; address <= 0xffff_ffff; address += 2 ** (32 - file.lastPrefixLength)) {
      const offset = file.findOffsetV4(address);
      if (offset >= 0) offsets.add(offset);
    }
  } else {
    const address = new Uint8Array(16);
    for (let done = false; !done; ) {
      const offset = file.findOffset(address);
      if (offset >= 0) offsets.add(offset);
      done = addPowerOfTwo(address, 128 - file.lastPrefixLength);
    }
  }
  return [...offsets].flatMap((offset) => {
    const record = file.decode(offset) as CityRecord;
    return record.country_code && record.state1 ? [[record.country_code, record.state1] as [string, string]] : [];
  });
}

/** Adds 2^bit to a big-endian 128-bit number in place; true when it wraps past the last address. */
function addPowerOfTwo(bytes: Uint8Array, bit: number): boolean {
  let carry = 1 << (bit & 7);
  for (let i = 15 - (bit >> 3); i >= 0 && carry > 0; i--) {
    const sum = bytes[i]! + carry;
    bytes[i] = sum & 0xff;
    carry = sum >> 8;
  }
  return carry > 0;
}

export interface RegionBuildStats {
  path: string;
  regions: number;
  matched: number;
}

/** Writes data/build/regions.tsv from both city databases: every region's ISO 3166-2 code. */
export async function buildRegionTable(root: string, cityPaths: { v4: string; v6: string }): Promise<RegionBuildStats> {
  const aliases = (JSON.parse(readFileSync(join(root, 'data', 'region-aliases.json'), 'utf8')) as { aliases: Record<string, Record<string, string>> })
    .aliases;
  const match = await createRegionMatcher(aliases);
  const regions = new Map<string, RegionEntry>();
  for (const path of [cityPaths.v4, cityPaths.v6]) {
    const file = MmdbFile.open(path, { mode: 'memory', cacheSize: 0 });
    try {
      for (const [country, region] of regionsOf(file)) {
        const key = `${country}\t${region}`;
        if (!regions.has(key)) regions.set(key, { country, region, code: match(country, region) });
      }
    } finally {
      file.close();
    }
  }
  const entries = [...regions.values()];
  const path = join(root, 'data', 'build', 'regions.tsv');
  await writeAtomically(path, formatRegionTable(entries));
  return { path, regions: entries.length, matched: entries.filter((entry) => entry.code !== null).length };
}

/** Writes data/build/country-names.json from the ICU data of the Node that builds it. */
export async function buildCountryNames(root: string): Promise<{ path: string; countries: number }> {
  const table = countryNamesFromIcu();
  const path = join(root, 'data', 'build', 'country-names.json');
  await writeAtomically(path, `${JSON.stringify(table)}\n`);
  return { path, countries: Object.keys(table).length };
}

async function writeAtomically(path: string, text: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, text);
  await rename(temporary, path);
}
