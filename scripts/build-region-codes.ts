/**
 * Install-time steps of `build:data`: derives data/build/regions.tsv (the
 * ISO 3166-2 code and the time zone of every region the bundled DB-IP city
 * data uses), data/build/zones.idx (the records of regions spanning several
 * zones that are not in their region's most common one) and
 * data/build/country-names.json, so that a lookup needs no name matching,
 * no ICU locale loading and, for a city database built with, no time-zone
 * map at run time.
 */
import { readFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createRegionMatcher } from '../src/engine/geo/compile-region-codes.js';
import { countryNamesFromIcu } from '../src/engine/geo/country-names.js';
import { MmdbFile } from '../src/engine/geo/mmdb-file.js';
import { formatRegionTable, type RegionEntry } from '../src/engine/geo/region-codes.js';
import { compileZoneExceptions } from '../src/engine/geo/zone-exceptions.js';
import { timezoneAt } from '../src/engine/geo/timezones.js';
import { coordinate } from '../src/engine/ip/lookup-ip.js';

interface CityRecord {
  country_code?: string;
  state1?: string;
  latitude?: number;
  longitude?: number;
}

/** A distinct record of a city database: where it is, its country and region, and tz-lookup's zone at its point. */
interface PlacedRecord {
  offset: number;
  country: string | null;
  region: string;
  zone: string | null;
}

/** A city database's distinct records, visiting each network of its tree once. */
function placedRecords(file: MmdbFile): PlacedRecord[] {
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
  return [...offsets].map((offset) => {
    const record = file.decode(offset) as CityRecord;
    return {
      offset,
      country: record.country_code || null,
      region: record.state1 ?? '',
      // At the coordinates as records show them, as the lookup used to ask tz-lookup.
      zone: timezoneAt(coordinate(record.latitude), coordinate(record.longitude)),
    };
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

/** How many records of a key lie in each zone. */
class ZoneCounts {
  private readonly counts = new Map<string, Map<string | null, number>>();
  add(key: string, zone: string | null): void {
    let zones = this.counts.get(key);
    if (zones === undefined) this.counts.set(key, (zones = new Map()));
    zones.set(zone, (zones.get(zone) ?? 0) + 1);
  }
  /** The key's zone when all its records share one, else null. */
  single(key: string): string | null {
    const zones = this.counts.get(key);
    return zones?.size === 1 ? zones.keys().next().value! : null;
  }
  /** The zone most of the key's records have (ties: the first name), when they span several. */
  majority(key: string): string | null | undefined {
    const zones = this.counts.get(key);
    if (zones === undefined || zones.size < 2) return undefined;
    return [...zones].sort(([a, m], [b, n]) => n - m || String(a).localeCompare(String(b)))[0]![0];
  }
}

const regionKey = (country: string, region: string): string => `${country}\t${region}`;

export interface RegionBuildStats {
  path: string;
  zonesPath: string;
  regions: number;
  matched: number;
  zoned: number;
  exceptions: number;
}

/**
 * Writes data/build/regions.tsv and data/build/zones.idx from both city
 * databases: every region's ISO 3166-2 code, its zone when all its records
 * share one, else its most common zone and the records that differ.
 */
export async function buildRegionTable(root: string, cityPaths: { v4: string; v6: string }): Promise<RegionBuildStats> {
  const aliases = (JSON.parse(readFileSync(join(root, 'data', 'region-aliases.json'), 'utf8')) as { aliases: Record<string, Record<string, string>> })
    .aliases;
  const match = await createRegionMatcher(aliases);
  const trees: Array<{ file: MmdbFile; records: PlacedRecord[] }> = [];
  for (const path of [cityPaths.v4, cityPaths.v6]) {
    const file = MmdbFile.open(path, { mode: 'memory', cacheSize: 0 });
    trees.push({ file, records: placedRecords(file) });
  }
  try {
    const countryZones = new ZoneCounts();
    const keyZones = new ZoneCounts();
    const regions = new Map<string, [string, string]>();
    for (const { records } of trees) {
      for (const record of records) {
        if (record.country === null) continue;
        countryZones.add(record.country, record.zone);
        keyZones.add(regionKey(record.country, record.region), record.zone);
        if (record.region !== '') regions.set(regionKey(record.country, record.region), [record.country, record.region]);
      }
    }
    // The zone a record has unless zones.idx lists it, when the region table's
    // single zone does not apply: the most common one of a region (or of a
    // country's records without one) spanning several; for records without a
    // region in a country spanning several zones, also their one zone, which
    // the country line cannot give. Undefined: the single zone applies.
    const defaultZone = (country: string, region: string): string | null | undefined => {
      const key = regionKey(country, region);
      return keyZones.majority(key) ?? (region === '' && countryZones.single(country) === null ? keyZones.single(key) : undefined);
    };
    const entries: RegionEntry[] = [];
    for (const [key, [country, region]] of regions) {
      entries.push({ country, region, code: match(country, region), timezone: keyZones.single(key), majorityZone: defaultZone(country, region) ?? null });
    }
    for (const country of new Set(trees.flatMap(({ records }) => records.map((record) => record.country)))) {
      if (country === null) continue;
      const zone = countryZones.single(country);
      const majority = defaultZone(country, '') ?? null;
      if (zone !== null || majority !== null) entries.push({ country, region: '', code: null, timezone: zone, majorityZone: majority });
    }
    const [v4, v6] = trees.map(({ file, records }) => ({
      identity: { buildEpochSeconds: file.metadata.buildEpoch.getTime() / 1000, nodeCount: file.metadata.nodeCount },
      exceptions: records.flatMap((record): Array<[number, string | null]> => {
        const zone = record.country === null ? undefined : defaultZone(record.country, record.region);
        return zone !== undefined && record.zone !== zone ? [[record.offset, record.zone]] : [];
      }),
    }));
    const path = join(root, 'data', 'build', 'regions.tsv');
    const zonesPath = join(root, 'data', 'build', 'zones.idx');
    await writeAtomically(path, formatRegionTable(entries));
    await writeAtomically(zonesPath, compileZoneExceptions({ v4: v4!, v6: v6! }));
    const named = entries.filter((entry) => entry.region !== '');
    return {
      path,
      zonesPath,
      regions: named.length,
      matched: named.filter((entry) => entry.code !== null).length,
      zoned: named.filter((entry) => entry.timezone !== null).length,
      exceptions: v4!.exceptions.length + v6!.exceptions.length,
    };
  } finally {
    for (const { file } of trees) file.close();
  }
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
