/**
 * Install-time steps of `build:data`: derives data/build/regions.tsv (the
 * ISO 3166-2 code and, where it is unique, the time zone of every region the
 * bundled DB-IP city data uses) and data/build/country-names.json, so that a
 * lookup needs no name matching, no ICU locale loading and, mostly, no
 * time-zone map at run time.
 */
import { readFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createRegionMatcher } from '../src/engine/geo/compile-region-codes.js';
import { countryNamesFromIcu } from '../src/engine/geo/country-names.js';
import { MmdbFile } from '../src/engine/geo/mmdb-file.js';
import { formatRegionTable, type RegionEntry } from '../src/engine/geo/region-codes.js';
import { timezoneAt } from '../src/engine/geo/timezones.js';

interface CityRecord {
  country_code?: string;
  state1?: string;
  latitude?: number;
  longitude?: number;
}

/** Every distinct record of an IPv4 city database, visiting each network once. */
function cityRecords(mmdbPath: string): CityRecord[] {
  const file = MmdbFile.open(mmdbPath, { mode: 'memory', cacheSize: 0 });
  try {
    const offsets = new Set<number>();
    // Each lookup reports the prefix length of the network it landed in, so
    // the walk jumps from network to network instead of address to address.
    for (let address = 0; address <= 0xffff_ffff; address += 2 ** (32 - file.lastPrefixLength)) {
      const offset = file.findOffsetV4(address);
      if (offset >= 0) offsets.add(offset);
    }
    return [...offsets].map((offset) => file.decode(offset) as CityRecord);
  } finally {
    file.close();
  }
}

/** Collects the zones seen per key; a key whose records span several zones gets none. */
class ZoneVotes {
  private readonly zones = new Map<string, string | null>();
  add(key: string, zone: string | null): void {
    const seen = this.zones.get(key);
    if (seen === undefined) this.zones.set(key, zone);
    else if (seen !== zone) this.zones.set(key, null);
  }
  get(key: string): string | null {
    return this.zones.get(key) ?? null;
  }
}

export async function buildRegionTable(root: string, cityV4Path: string): Promise<{ path: string; regions: number; matched: number; zoned: number }> {
  const aliases = (JSON.parse(readFileSync(join(root, 'data', 'region-aliases.json'), 'utf8')) as { aliases: Record<string, Record<string, string>> })
    .aliases;
  const match = await createRegionMatcher(aliases);
  const regionZones = new ZoneVotes();
  const countryZones = new ZoneVotes();
  const regions = new Map<string, [string, string]>();
  for (const record of cityRecords(cityV4Path)) {
    const country = record.country_code;
    if (!country) continue;
    const zone = timezoneAt(record.latitude ?? null, record.longitude ?? null);
    countryZones.add(country, zone);
    if (!record.state1) continue;
    const key = `${country}\t${record.state1}`;
    regions.set(key, [country, record.state1]);
    regionZones.add(key, zone);
  }
  const entries: RegionEntry[] = [];
  for (const [key, [country, region]] of regions) entries.push({ country, region, code: match(country, region), timezone: regionZones.get(key) });
  for (const country of new Set([...regions.values()].map(([country]) => country))) {
    const zone = countryZones.get(country);
    if (zone !== null) entries.push({ country, region: '', code: null, timezone: zone });
  }
  const path = join(root, 'data', 'build', 'regions.tsv');
  await writeAtomically(path, formatRegionTable(entries));
  const named = entries.filter((entry) => entry.region !== '');
  return {
    path,
    regions: named.length,
    matched: named.filter((entry) => entry.code !== null).length,
    zoned: named.filter((entry) => entry.timezone !== null).length,
  };
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
