import type { EngineContext } from '../context.js';
import { countryName } from '../geo/country-names.js';
import { timezoneAt } from '../geo/timezones.js';
import type { MmdbFile, MmdbValue } from '../dataset/mmdb-file.js';
import { NO_ASN, type AsnSignals, type SecuritySignals } from '../security/security-signals.js';
import { ipDatabasesFor, type AccessMode, type IpDatabases } from './ip-databases.js';
import { parseIpAddress, type IpAddress } from '../address/ip-address.js';
import { parseIpv4Fast } from '../address/ip-text.js';
import { NumberKeyedCache } from './number-keyed-cache.js';
import {
  EMPTY_LOCATION,
  EMPTY_NETWORK,
  NO_DATA_META,
  UNKNOWN_SECURITY,
  type IpInfoRecord,
  type IpLocation,
  type IpNetwork,
  type IpSecurity,
} from './ip-record.js';
import { specialPurposeOf, specialPurposeOfV4 } from '../address/special-ranges.js';
import { cidrBlockKeyV4, cidrContaining, v4BlockText } from '../address/range-to-cidrs.js';
import { NO_RPKI_DATASET, routeValidity } from '../rpki/route-validity.js';
import type { RpkiIndex } from '../rpki/rpki-index.js';

/**
 * Looks up the IP information record of one address (text, any valid form)
 * in the local datasets.
 *
 * @throws NetintelError `invalid_input` for text that is not an IP address;
 *   `data_unavailable` when a dataset is missing or corrupt.
 */
export function lookupIp(ctx: EngineContext, input: string, mode: AccessMode = 'pread', options: IpLookupOptions = {}): IpInfoRecord {
  return createIpLookup(ipDatabasesFor(ctx, mode), options)(parseIpAddress(input));
}

/** What a lookup fills in. */
export interface IpLookupOptions {
  /**
   * False: leave `location` empty and the city database closed, for answers
   * that do not show it (`netintel vpn`, GET /api/vpn-check); `meta` then
   * names only the datasets used. Default true.
   */
  location?: boolean;
  /**
   * False: an address a security list holds gets its verdict without the
   * `evidence` items (flags, threat level and rule, and provider are the
   * same), for answers that show only the flags (CSV and table rows of
   * `netintel bulk`). Default true.
   */
  evidence?: boolean;
}

/**
 * A lookup from address text, for runs over many inputs: dotted quads take
 * an allocation-light path (no byte array, no generic parser); everything
 * else goes through `parseIpAddress`. Throws as `lookupIp`.
 */
export function createIpTextLookup(databases: IpDatabases, options: IpLookupOptions = {}): (input: string) => IpInfoRecord {
  const byAddress = createIpLookup(databases, options);
  return (input) => {
    const v4 = parseIpv4Fast(input);
    return v4 >= 0 ? byAddress.v4(v4, input) : byAddress(parseIpAddress(input));
  };
}

/** A record as DB-IP city lite stores it. */
interface DbipCityRecord {
  city?: string;
  country_code?: string;
  state1?: string;
  state2?: string;
  postcode?: string;
  latitude?: number;
  longitude?: number;
  timezone?: string;
}

/**
 * How many built location objects (by data offset) and network objects (by
 * AS) a lookup keeps. Sized to hold every city record and every AS that a
 * list of a million random addresses reaches, so that a location or
 * network is built and CSV-encoded once; memory stays bounded because the
 * caches stop growing once full (bench/run.js compares the peak RSS of a
 * large and a small run).
 */
const LOCATION_CACHE_SIZE = 131_072;
const NETWORK_CACHE_SIZE = 32_768;
/**
 * With positioned reads (a one-off lookup, the first addresses of a bulk
 * run) a few lookups are made: filling large caches would cost more than
 * they save.
 */
const PREAD_CACHE_SIZE = 256;
/** Networks with their route's RPKI validity kept by (AS, route); emptied when full. */
const ROUTE_CACHE_SIZE = 65_536;

/**
 * A network object, its AS's security signals, and the verdict for the
 * addresses of the range no feed lists (the common case). Verdicts are
 * shared per (AS signals, feed segment), never built per record.
 */
interface NetworkEntry {
  network: IpNetwork;
  asn: AsnSignals;
  security: IpSecurity;
}

/**
 * Builds the lookup function over a set of databases. Location objects are
 * cached by their data offset (many networks share one city record), so a
 * bulk run derives names, region codes and time zones once per city; network
 * and security objects likewise by AS (the many ranges of one AS share
 * them). Both caches are bounded (see NumberKeyedCache for what stays).
 * Cached objects are shared between records: treat records as read-only.
 */
export function createIpLookup(databases: IpDatabases, options: IpLookupOptions = {}): IpLookup {
  const withLocation = options.location !== false;
  const withEvidence = options.evidence !== false;
  const inMemory = databases.mode === 'memory';
  const locationCache = new NumberKeyedCache<IpLocation>(inMemory ? LOCATION_CACHE_SIZE : PREAD_CACHE_SIZE);
  const networkCache = new NumberKeyedCache<NetworkEntry>(inMemory ? NETWORK_CACHE_SIZE : PREAD_CACHE_SIZE);
  // Opened on first use, like every dataset: an invalid input opens nothing.
  let signals: SecuritySignals | undefined;
  let noAsn: NetworkEntry | undefined;
  let rpki: RpkiIndex | null | undefined;
  /** By route: an IPv4 block as its `cidrBlockKeyV4` number, an IPv6 one as its text. */
  const routeNetworks = new Map<number | string, IpNetwork>();

  const locate = (file: MmdbFile, offset: number, version: 4 | 6): IpLocation => {
    if (offset < 0) return EMPTY_LOCATION;
    // One key space for both files: IPv6 offsets negated.
    const key = version === 4 ? offset : -1 - offset;
    let location = locationCache.get(key);
    if (location === undefined) {
      location = toLocation(file.decode(offset), databases);
      locationCache.set(key, location);
    }
    return location;
  };

  const lookup = ((address: IpAddress): IpInfoRecord => {
    if (address.version === 4) return lookupV4(address.v4, address.text);
    const reserved = specialPurposeOf(address);
    if (reserved !== null) return reservedRecord(address.text, 'ipv6', reserved);
    let location = EMPTY_LOCATION;
    if (withLocation) {
      const cityV6 = databases.cityV6;
      location = locate(cityV6, cityV6.findOffset(address.bytes), 6);
    }
    const index = databases.asn.indexOfV6(address.bytes);
    const entry = networkOf(6, index);
    let network = entry.network;
    if (index >= 0 && rpkiIndex() !== null) {
      const range = databases.asn.rangeAt(6, index);
      const route = cidrContaining(range.rangeStart, range.rangeEnd, address.bytes)!;
      network = routedNetwork(entry, route, route);
    }
    const set = (signals ??= databases.security).v6Set(address.bytes);
    const security = set === -1 ? entry.security : signals.verdict(entry.asn, set, withEvidence);
    return { ip: address.text, type: 'ipv6', location, network, security, reserved: null, meta: databases.meta(6, withLocation) };
  }) as IpLookup;

  const lookupV4 = (v4: number, text: string): IpInfoRecord => {
    const reserved = specialPurposeOfV4(v4);
    if (reserved !== null) return reservedRecord(text, 'ipv4', reserved);
    let location = EMPTY_LOCATION;
    if (withLocation) {
      const cityV4 = databases.cityV4;
      location = locate(cityV4, cityV4.findOffsetV4(v4), 4);
    }
    const asnIndex = databases.asn;
    const index = asnIndex.indexOfV4(v4);
    const entry = networkOf(4, index);
    const network = index >= 0 && rpkiIndex() !== null ? routedNetwork(entry, cidrBlockKeyV4(asnIndex.v4StartAt(index), asnIndex.v4EndAt(index), v4), null) : entry.network;
    const set = (signals ??= databases.security).v4Set(v4);
    const security = set === -1 ? entry.security : signals!.verdict(entry.asn, set, withEvidence);
    return { ip: text, type: 'ipv4', location, network, security, reserved: null, meta: databases.meta(4, withLocation) };
  };
  lookup.v4 = lookupV4;
  return lookup;

  function networkOf(version: 4 | 6, index: number): NetworkEntry {
    signals ??= databases.security;
    if (index < 0) return (noAsn ??= { network: EMPTY_NETWORK, asn: NO_ASN, security: signals.verdict(NO_ASN, -1) });
    const asnIndex = databases.asn;
    const asn = asnIndex.asnAt(version, index);
    const organization = asnIndex.organizationAt(version, index);
    let cached = networkCache.get(asn);
    // The index names the organisation per range: an AS's ranges share an entry only while they agree.
    if (cached === undefined || cached.network.organization !== organization) {
      const asnSignals = signals.asnSignals(asn);
      cached = { network: { isp: organization, organization, asn, domain: null, rpki: NO_RPKI_DATASET }, asn: asnSignals, security: signals.verdict(asnSignals, -1) };
      networkCache.set(asn, cached);
    }
    return cached;
  }

  /** The RPKI index, opened on first use like the other datasets; null when none is installed. */
  function rpkiIndex(): RpkiIndex | null {
    if (rpki === undefined) rpki = databases.rpki;
    return rpki;
  }

  /**
   * The network of an AS with the validity of the route it announces the
   * address in (`route`: the IPv4 block key, or the IPv6 text; `text` when known).
   */
  function routedNetwork(entry: NetworkEntry, route: number | string, text: string | null): IpNetwork {
    const owner = entry.network;
    let network = routeNetworks.get(route);
    if (network === undefined || network.asn !== owner.asn || network.organization !== owner.organization) {
      if (routeNetworks.size >= ROUTE_CACHE_SIZE) routeNetworks.clear();
      const rpki = routeValidity(rpkiIndex(), text ?? v4BlockText(route as number), owner.asn!);
      network = { isp: owner.isp, organization: owner.organization, asn: owner.asn, domain: owner.domain, rpki };
      routeNetworks.set(route, network);
    }
    return network;
  }
}

/** Looks up a parsed address; `.v4` looks up an IPv4 address given as an unsigned 32-bit integer and its canonical text. */
export interface IpLookup {
  (address: IpAddress): IpInfoRecord;
  v4(address: number, text: string): IpInfoRecord;
}

function reservedRecord(ip: string, type: 'ipv4' | 'ipv6', reserved: string): IpInfoRecord {
  return { ip, type, location: EMPTY_LOCATION, network: EMPTY_NETWORK, security: UNKNOWN_SECURITY, reserved, meta: NO_DATA_META };
}

function text(value: string | undefined): string | null {
  return value === undefined || value === '' ? null : value;
}

/**
 * DB-IP stores coordinates as 32-bit floats, which carry about seven
 * significant digits; four decimals (about 11 m) is what the source gives,
 * without the float noise (37.422000885009766 -> 37.422).
 */
export function coordinate(value: number | undefined): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? Math.round(value * 1e4) / 1e4 : null;
}

function toLocation(value: MmdbValue, databases: IpDatabases): IpLocation {
  const record = value as DbipCityRecord;
  const countryCode = text(record.country_code);
  const region = text(record.state1);
  const latitude = coordinate(record.latitude);
  const longitude = coordinate(record.longitude);
  return {
    country: countryName(databases.countryNames, countryCode),
    country_code: countryCode,
    region,
    region_code: databases.regions.code(countryCode, region),
    city: text(record.city),
    latitude,
    longitude,
    // DB-IP Lite leaves its time zone field empty: the zone at the record's point.
    timezone: text(record.timezone) ?? timezoneAt(latitude, longitude),
    zip: text(record.postcode),
  };
}
