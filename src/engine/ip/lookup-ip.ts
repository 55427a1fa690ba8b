import type { EngineContext } from '../context.js';
import { countryName } from '../geo/country-names.js';
import type { MmdbFile, MmdbValue } from '../geo/mmdb-file.js';
import { regionCode } from '../geo/region-codes.js';
import { timezoneAt } from '../geo/timezones.js';
import { isHostingCategory } from '../security/curated-asns.js';
import { ipDatabasesFor, type AccessMode, type IpDatabases } from './ip-databases.js';
import { parseIpAddress, type IpAddress } from './ip-address.js';
import {
  EMPTY_LOCATION,
  EMPTY_NETWORK,
  UNKNOWN_SECURITY,
  type IpInfoRecord,
  type IpLocation,
  type IpNetwork,
  type IpSecurity,
  type ThreatLevel,
} from './ip-record.js';
import { specialPurposeOf } from './special-ranges.js';

/**
 * Looks up the IP information record of one address (text, any valid form)
 * in the local datasets.
 *
 * @throws NetintelError `invalid_input` for text that is not an IP address;
 *   `data_unavailable` when a dataset is missing or corrupt.
 */
export function lookupIp(ctx: EngineContext, input: string, mode: AccessMode = 'pread'): IpInfoRecord {
  return createIpLookup(ipDatabasesFor(ctx, mode))(parseIpAddress(input));
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

/** How many built location (by data offset) and network (by range) objects a lookup keeps. */
const LOCATION_CACHE_SIZE = 50_000;

/**
 * Builds the lookup function over a set of databases. Location objects are
 * cached by their data offset (many networks share one city record), so a
 * bulk run derives names, region codes and time zones once per city; network
 * and security objects likewise by ASN range. Cached objects are shared
 * between records: treat records as read-only.
 */
export function createIpLookup(databases: IpDatabases): (address: IpAddress) => IpInfoRecord {
  const locationCache = new Map<string, IpLocation>();
  const networkCache = new Map<number, { network: IpNetwork; security: IpSecurity }>();

  const locate = (file: MmdbFile, address: IpAddress): IpLocation => {
    const offset = address.version === 4 ? file.findOffsetV4(address.v4) : file.findOffset(address.bytes);
    if (offset < 0) return EMPTY_LOCATION;
    const key = `${address.version}:${offset}`;
    let location = locationCache.get(key);
    if (!location) {
      location = toLocation(file.decode(offset), databases);
      if (locationCache.size >= LOCATION_CACHE_SIZE) locationCache.delete(locationCache.keys().next().value!);
      locationCache.set(key, location);
    }
    return location;
  };

  return (address) => {
    const reserved = specialPurposeOf(address);
    const type = address.version === 4 ? 'ipv4' : 'ipv6';
    if (reserved !== null) {
      return { ip: address.text, type, location: EMPTY_LOCATION, network: EMPTY_NETWORK, security: UNKNOWN_SECURITY, reserved };
    }
    const location = locate(address.version === 4 ? databases.cityV4 : databases.cityV6, address);
    const { network, security } = networkOf(address);
    return { ip: address.text, type, location, network, security, reserved: null };
  };

  function networkOf(address: IpAddress): { network: IpNetwork; security: IpSecurity } {
    const asnIndex = databases.asn;
    const index = address.version === 4 ? asnIndex.indexOfV4(address.v4) : asnIndex.indexOfV6(address.bytes);
    if (index < 0) return { network: EMPTY_NETWORK, security: UNKNOWN_SECURITY };
    const key = address.version * 0x1_0000_0000 + index;
    let cached = networkCache.get(key);
    if (!cached) {
      const asn = asnIndex.asnAt(address.version, index);
      const organization = asnIndex.organizationAt(address.version, index);
      cached = { network: { isp: organization, organization, asn, domain: null }, security: securityOf(asn, databases) };
      if (networkCache.size >= LOCATION_CACHE_SIZE) networkCache.delete(networkCache.keys().next().value!);
      networkCache.set(key, cached);
    }
    return cached;
  }
}

function text(value: string | undefined): string | null {
  return value === undefined || value === '' ? null : value;
}

/**
 * DB-IP stores coordinates as 32-bit floats, which carry about seven
 * significant digits; four decimals (about 11 m) is what the source gives,
 * without the float noise (37.422000885009766 -> 37.422).
 */
function coordinate(value: number | undefined): number | null {
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
    region_code: regionCode(databases.regions, countryCode, region),
    city: text(record.city),
    latitude,
    longitude,
    timezone: text(record.timezone) ?? timezoneAt(latitude, longitude),
    zip: text(record.postcode),
  };
}

/**
 * The security flags the shipped data supports: hosting and VPN operators by
 * ASN (data/curated-asns.json). Proxy and Tor need their feeds, so they stay
 * null (unknown) rather than false.
 */
function securityOf(asn: number, databases: IpDatabases): IpSecurity {
  const category = databases.curatedAsns.byAsn.get(asn)?.category;
  const isVpn = category === 'vpn';
  return {
    is_vpn: isVpn,
    is_proxy: null,
    is_tor: null,
    is_hosting: isHostingCategory(category),
    threat_level: threatLevel({ isVpn, isProxy: false, isTor: false }),
  };
}

/** high: Tor exit or open proxy; medium: VPN; low: anything else, hosting included. */
export function threatLevel(flags: { isVpn: boolean; isProxy: boolean; isTor: boolean }): ThreatLevel {
  if (flags.isTor || flags.isProxy) return 'high';
  if (flags.isVpn) return 'medium';
  return 'low';
}
