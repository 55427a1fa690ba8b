import type { Outcome } from '../outcome.js';
import { DistinctAddresses } from './distinct-addresses.js';
import { shareOf, type FlagTable, type RankedRow, type RankedTable, type SummaryReport } from './summary-report.js';

/** Distinct addresses counted exactly; past this many the count stops (a lower bound), so memory stays bounded. */
export const DEFAULT_UNIQUE_CAP = 1_000_000;

/** The boolean flags of an IP record's security group, as the report names them. */
export const SECURITY_FLAGS = [
  ['vpn', 'VPN', 'is_vpn'],
  ['proxy', 'proxy', 'is_proxy'],
  ['tor', 'Tor exit', 'is_tor'],
  ['hosting', 'hosting', 'is_hosting'],
] as const;

/** What the tally reads of a lookup's record: an IP record (ip-record.ts), any group possibly absent (a plan may withhold one). */
interface RecordView {
  ip?: unknown;
  reserved?: unknown;
  location?: { country?: unknown; country_code?: unknown; region?: unknown; city?: unknown } | null;
  network?: { asn?: unknown; organization?: unknown } | null;
  security?: { is_vpn?: unknown; is_proxy?: unknown; is_tor?: unknown; is_hosting?: unknown; threat_level?: unknown } | null;
}

/** A city's region and country, and its count: the places of one city name. */
interface Place {
  region: string | null;
  code: string | null;
  count: number;
}

type LocationView = NonNullable<RecordView['location']>;

/** The counters one location object counts into. */
interface PlaceCounters {
  country: Counted | null;
  city: Place | null;
}

/** A counted key and the name shown beside it. */
interface Counted {
  count: number;
  name: string;
  /** Orders keys that tie on count. */
  order: string | number;
}

/** What the input reading counts before any lookup (summarize-input.ts). */
export interface InputCounts {
  lines: number;
  invalidLines: number;
  ipv4: number;
  ipv6: number;
}

/**
 * The counts of a summarize run: the input's lines and addresses, then each
 * lookup's outcome. Memory grows with the distinct countries, ASNs and
 * cities (bounded by the datasets) and the distinct addresses up to the
 * cap, never with the number of lines.
 */
export class SummaryTally {
  readonly input: InputCounts = { lines: 0, invalidLines: 0, ipv4: 0, ipv6: 0 };
  private readonly distinct: DistinctAddresses;
  private reserved = 0;
  private failures = 0;
  private readonly countries = new Map<string, Counted>();
  private readonly asns = new Map<number, Counted>();
  /** Per city name, its places: the key and name of each are made for the report only. */
  private readonly cities = new Map<string, Place[]>();
  private readonly threat = new Map<string, Counted>();
  /** The counters of each location object met; weak, as the engine makes a new object for a record it does not keep cached. */
  private readonly placeCounters = new WeakMap<LocationView, PlaceCounters>();
  private readonly flags = SECURITY_FLAGS.map(() => 0);
  /** Records that carried a security group at all. */
  private withSecurity = 0;
  private readonly failureCodes = new Map<string, number>();
  /** Why the first failed lookup failed: what a run that fails says once. */
  firstFailure: string | null = null;

  constructor(options: { uniqueCap?: number } = {}) {
    this.distinct = new DistinctAddresses(options.uniqueCap ?? DEFAULT_UNIQUE_CAP);
  }

  /** All address occurrences found so far. */
  get addresses(): number {
    return this.input.ipv4 + this.input.ipv6;
  }

  /** How many lookups failed, by error code. */
  get failuresByCode(): ReadonlyMap<string, number> {
    return this.failureCodes;
  }

  /** Counts one lookup (the address was counted by the input already). */
  add(outcome: Outcome<unknown>): void {
    if (!outcome.ok) {
      this.failures++;
      this.firstFailure ??= outcome.error.message;
      this.failureCodes.set(outcome.error.code, (this.failureCodes.get(outcome.error.code) ?? 0) + 1);
      this.distinct.add(outcome.query);
      return;
    }
    const record = outcome.value as RecordView;
    this.distinct.add(typeof record.ip === 'string' ? record.ip : outcome.query);
    if (typeof record.reserved === 'string') {
      this.reserved++;
      return;
    }
    const location = record.location;
    if (location !== null && typeof location === 'object') this.countPlace(location);
    const network = record.network;
    const asn = network?.asn;
    if (typeof asn === 'number') {
      const counted = this.asns.get(asn);
      if (counted) counted.count++;
      else this.asns.set(asn, { count: 1, name: text(network?.organization) ?? '', order: asn });
    }
    const security = record.security;
    if (security !== null && typeof security === 'object') {
      this.withSecurity++;
      // Read by name, in SECURITY_FLAGS' order: a property named at run time is a slower read on every record.
      const flags = this.flags;
      if (security.is_vpn === true) flags[0]!++;
      if (security.is_proxy === true) flags[1]!++;
      if (security.is_tor === true) flags[2]!++;
      if (security.is_hosting === true) flags[3]!++;
      const level = text(security.threat_level);
      if (level !== null) {
        const counted = this.threat.get(level);
        if (counted) counted.count++;
        else this.threat.set(level, { count: 1, name: level, order: level });
      }
    }
  }

  /**
   * Cities are keyed by name, then region and country: the texts come from
   * the datasets as they are, where a key made of the three would be a new
   * string to hash for every address.
   */
  private countCity(city: string, region: string | null, code: string | null): Place {
    let places = this.cities.get(city);
    if (places === undefined) {
      places = [];
      this.cities.set(city, places);
    }
    for (const place of places) {
      if (place.region === region && place.code === code) {
        place.count++;
        return place;
      }
    }
    const place = { region, code, count: 1 };
    places.push(place);
    return place;
  }

  /**
   * Counts a location's country and city. The engine shares one location
   * object among the addresses of a city record (lookup-ip.ts), so the
   * counters are found by the object itself: the next address of that city
   * costs one map lookup instead of two by name. Names are read at a key's
   * first occurrence only.
   */
  private countPlace(location: LocationView): void {
    const known = this.placeCounters.get(location);
    if (known !== undefined) {
      if (known.country !== null) known.country.count++;
      if (known.city !== null) known.city.count++;
      return;
    }
    const code = text(location.country_code);
    let country: Counted | null = null;
    if (code !== null) {
      country = this.countries.get(code) ?? null;
      if (country !== null) country.count++;
      else this.countries.set(code, (country = { count: 1, name: text(location.country) ?? code, order: code }));
    }
    const city = text(location.city);
    const place = city === null ? null : this.countCity(city, text(location.region), code);
    this.placeCounters.set(location, { country, city: place });
  }

  /** Every city with its count, keyed `country/region/city`. */
  private cityCounts(): Map<string, Counted> {
    const counts = new Map<string, Counted>();
    for (const [city, places] of this.cities) {
      for (const { region, code, count } of places) {
        const key = `${code ?? ''}/${region ?? ''}/${city}`;
        counts.set(key, { count, name: [city, region, code].filter((part) => part !== null).join(', '), order: key });
      }
    }
    return counts;
  }

  /** Occurrences per country (ISO 3166-1 alpha-2), every country counted, not only the top rows. */
  countryCounts(): ReadonlyMap<string, number> {
    return new Map([...this.countries].map(([code, counted]) => [code, counted.count]));
  }

  /** The report, each ranked table cut at `top` rows. */
  report(top: number): SummaryReport {
    const total = this.addresses;
    const ranked = (counts: ReadonlyMap<string | number, Counted>, key: (raw: string | number) => string) => rankTable(counts, key, top, total);
    return {
      totals: {
        lines: this.input.lines,
        addresses: total,
        ipv4: this.input.ipv4,
        ipv6: this.input.ipv6,
        unique: this.distinct.size,
        unique_capped: this.distinct.capped,
        reserved: this.reserved,
        invalid_lines: this.input.invalidLines,
        lookup_failures: this.failures,
      },
      top,
      countries: ranked(this.countries, String),
      asns: ranked(this.asns, (asn) => `AS${asn}`),
      cities: ranked(this.cityCounts(), String),
      flags: this.flagTable(total),
      threat_levels: ranked(this.threat, String),
    };
  }

  private flagTable(total: number): FlagTable {
    const rows: RankedRow[] = SECURITY_FLAGS.map(([key, name], i) => ({ rank: i + 1, key, name, ...shareOf(this.flags[i]!, total) }));
    return { rows, no_data: shareOf(total - this.withSecurity, total) };
  }
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** Count descending, then key ascending (numerically for AS numbers): the same order on every run. */
function byRank(a: Counted, b: Counted): number {
  if (a.count !== b.count) return b.count - a.count;
  return a.order < b.order ? -1 : a.order > b.order ? 1 : 0;
}

/** The top rows of a table, the rest as `other`, and the addresses without a key as `no_data`. */
export function rankTable<K>(counts: ReadonlyMap<K, Counted>, keyText: (key: K) => string, top: number, total: number): RankedTable {
  const entries = [...counts].sort((a, b) => byRank(a[1], b[1]));
  const rows: RankedRow[] = entries.slice(0, top).map(([key, counted], i) => ({ rank: i + 1, key: keyText(key), name: counted.name, ...shareOf(counted.count, total) }));
  let keyed = 0;
  for (const [, counted] of entries) keyed += counted.count;
  const shown = rows.reduce((sum, row) => sum + row.count, 0);
  return { rows, other: shareOf(keyed - shown, total), no_data: shareOf(total - keyed, total), distinct: entries.length };
}
