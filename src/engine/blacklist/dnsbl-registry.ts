import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NetintelError } from '../../errors.js';
import { packageRoot } from '../data/data-files.js';
import { normaliseDomain } from '../dns/dns-name.js';

/** What a list holds: addresses (queried as reversed octets or nibbles) or domain names (RFC 5782 §2, §3). */
export type DnsblKind = 'ip' | 'domain';

/** One zone of the registry (data/dnsbl-zones.json), or a zone named only on the command line. */
export interface DnsblZone {
  /** The zone name, lower-case ASCII, no trailing dot. */
  zone: string;
  /** The list's common name, or null for a zone outside the registry. */
  name: string | null;
  kind: DnsblKind;
  /** An IP list that answers IPv6 queries (RFC 5782 §2.4 nibble form). */
  ipv6: boolean;
  status: 'live' | 'dead';
  /** When a dead list stopped publishing (`YYYY-MM-DD` or `YYYY-MM`), null when unknown or live. */
  deadSince: string | null;
  /** The entry covers every zone under `zone` as well (a dead operator's whole tree). */
  subzones: boolean;
  /** Queried when `--zones` is not given: live and free to query at low volume. */
  default: boolean;
  /** The severity of the finding a listing on this zone gives. */
  listingSeverity: 'error' | 'warning';
  /** Exact return addresses that mean a listing, with their meaning. */
  codes: Readonly<Record<string, string>>;
  /** Bits of the last octet that mean a listing (SURBL/URIBL style), keyed by bit value; null when not bitmasked. */
  bitmask: Readonly<Record<string, string>> | null;
  /** Return addresses or CIDR blocks that mean the query was refused or malformed, never a listing. */
  refusalCodes: Readonly<Record<string, string>>;
  /** RFC 5782 §5 test points: an address (IP lists) or a name (domain lists) that must be listed, and one that must not. */
  canaries: { listed: string; notListed: string };
  /** The list refuses queries relayed by public resolvers (answers a refusal code or NXDOMAIN to them). */
  refusesPublicResolvers: boolean;
  usage: string | null;
  infoUrl: string | null;
  delistUrl: string | null;
  /** Ids of the registry's sources behind the entry. */
  sources: readonly string[];
  note: string | null;
  /** False for a zone given only on the command line (RFC 5782 defaults). */
  registered: boolean;
}

/** The zone registry. */
export interface DnsblRegistry {
  name: string;
  /** The registry's version, shown in every blacklist record. */
  version: string;
  updated: string;
  /** Where it was read from. */
  path: string;
  zones: readonly DnsblZone[];
}

/** The registry's file name, in data/ and in a user's `--data-dir`. */
export const DNSBL_REGISTRY_FILE = 'dnsbl-zones.json';

const registries = new Map<string, DnsblRegistry>();

/**
 * Where the registry is read from: the user's data dir when it holds
 * `dnsbl-zones.json` (a newer registry), else the copy shipped in data/.
 */
export function dnsblRegistryPath(dataDir: string | null): string {
  if (dataDir !== null) {
    const candidate = join(dataDir, DNSBL_REGISTRY_FILE);
    if (existsSync(candidate)) return candidate;
  }
  return join(packageRoot(), 'data', DNSBL_REGISTRY_FILE);
}

/**
 * Loads (once per path) and checks the zone registry.
 *
 * @throws NetintelError `data_unavailable` when the file is missing, is not
 *   JSON, or an entry is malformed (the message names the entry and field).
 */
export function loadDnsblRegistry(dataDir: string | null): DnsblRegistry {
  const path = dnsblRegistryPath(dataDir);
  let registry = registries.get(path);
  if (!registry) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new NetintelError('data_unavailable', `cannot read the DNSBL zone registry ${path}`, { cause: error, details: { path } });
    }
    registry = parseDnsblRegistry(text, path);
    registries.set(path, registry);
  }
  return registry;
}

/**
 * Parses and checks a registry document.
 *
 * @throws NetintelError `data_unavailable` naming the path, the entry and what is wrong.
 */
export function parseDnsblRegistry(text: string, path: string): DnsblRegistry {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new NetintelError('data_unavailable', `the DNSBL zone registry ${path} is not valid JSON`, { cause: error, details: { path } });
  }
  const fail = (what: string): never => {
    throw new NetintelError('data_unavailable', `the DNSBL zone registry ${path} is invalid: ${what}`, { details: { path } });
  };
  if (!isObject(doc) || typeof doc.version !== 'string' || !Array.isArray(doc.zones)) fail('it needs a version and a zones array');
  const root = doc as { name?: unknown; version: string; updated?: unknown; zones: unknown[] };
  const seen = new Set<string>();
  const zones = root.zones.map((entry, index) => {
    const zone = readEntry(entry, (what) => fail(`zones[${index}]: ${what}`));
    if (seen.has(zone.zone)) fail(`zone ${zone.zone} appears twice`);
    seen.add(zone.zone);
    return zone;
  });
  return {
    name: typeof root.name === 'string' ? root.name : 'DNSBL zone registry',
    version: root.version,
    updated: typeof root.updated === 'string' ? root.updated : '',
    path,
    zones,
  };
}

function readEntry(entry: unknown, fail: (what: string) => never): DnsblZone {
  if (!isObject(entry)) return fail('not an object');
  const text = (key: string): string => {
    const value = entry[key];
    if (typeof value !== 'string' || value === '') return fail(`${key} must be a non-empty string`);
    return value;
  };
  const optionalText = (key: string): string | null => {
    const value = entry[key];
    if (value === null || value === undefined) return null;
    if (typeof value !== 'string') return fail(`${key} must be a string or null`);
    return value;
  };
  const flag = (key: string, fallback: boolean): boolean => {
    const value = entry[key];
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean') return fail(`${key} must be true or false`);
    return value;
  };
  const codeMap = (key: string, keyCheck: (code: string) => boolean): Record<string, string> => {
    const value = entry[key];
    if (value === undefined || value === null) return {};
    if (!isObject(value)) return fail(`${key} must be an object`);
    for (const [code, meaning] of Object.entries(value)) {
      if (!keyCheck(code) || typeof meaning !== 'string') return fail(`${key}: "${code}" is not a valid code with a meaning`);
    }
    return value as Record<string, string>;
  };

  let zone: string;
  try {
    zone = normaliseDomain(text('zone')).ascii;
  } catch {
    return fail(`zone ${JSON.stringify(entry.zone)} is not a valid domain name`);
  }
  const kind = entry.kind;
  if (kind !== 'ip' && kind !== 'domain') return fail(`${zone}: kind must be "ip" or "domain"`);
  const status = entry.status;
  if (status !== 'live' && status !== 'dead') return fail(`${zone}: status must be "live" or "dead"`);
  const severity = entry.listingSeverity ?? 'error';
  if (severity !== 'error' && severity !== 'warning') return fail(`${zone}: listingSeverity must be "error" or "warning"`);
  const canaries = entry.canaries;
  const defaults = defaultCanaries(kind);
  let listed = defaults.listed;
  let notListed = defaults.notListed;
  if (canaries !== undefined) {
    if (!isObject(canaries) || typeof canaries.listed !== 'string' || typeof canaries.notListed !== 'string') {
      return fail(`${zone}: canaries needs listed and notListed`);
    }
    listed = canaries.listed;
    notListed = canaries.notListed;
  }
  if (kind === 'ip' && !(isIpv4Text(listed) && isIpv4Text(notListed))) return fail(`${zone}: the test points of an IP list must be IPv4 addresses`);
  if (kind === 'domain' && !(isDomainText(listed) && isDomainText(notListed))) return fail(`${zone}: the test points of a domain list must be domain names`);
  const bitmask = entry.bitmask === null || entry.bitmask === undefined ? null : codeMap('bitmask', (bit) => /^\d+$/.test(bit) && Number(bit) >= 1 && Number(bit) <= 255);
  const sources = entry.sources;
  if (sources !== undefined && !(Array.isArray(sources) && sources.every((source) => typeof source === 'string'))) {
    return fail(`${zone}: sources must be a list of source ids`);
  }
  const isDefault = flag('default', false);
  if (isDefault && status === 'dead') return fail(`${zone}: a dead zone cannot be queried by default`);
  return {
    zone,
    name: optionalText('name'),
    kind,
    ipv6: kind === 'ip' && flag('ipv6', false),
    status,
    deadSince: optionalText('deadSince'),
    subzones: flag('subzones', false),
    default: isDefault,
    listingSeverity: severity,
    codes: codeMap('codes', isIpv4Text),
    bitmask,
    refusalCodes: codeMap('refusalCodes', (code) => isIpv4Text(code) || parseIpv4Cidr(code) !== null),
    canaries: { listed, notListed },
    refusesPublicResolvers: flag('refusesPublicResolvers', false),
    usage: optionalText('usage'),
    infoUrl: optionalText('infoUrl'),
    delistUrl: optionalText('delistUrl'),
    sources: (sources as string[] | undefined) ?? [],
    note: optionalText('note'),
    registered: true,
  };
}

/** The RFC 5782 §5 test points: 127.0.0.2 / 127.0.0.1 for IP lists, TEST / INVALID for domain lists. */
export function defaultCanaries(kind: DnsblKind): { listed: string; notListed: string } {
  return kind === 'ip' ? { listed: '127.0.0.2', notListed: '127.0.0.1' } : { listed: 'test', notListed: 'invalid' };
}

/** The registry entry for a zone name: the exact zone, or an entry covering its subzones. */
export function findRegisteredZone(registry: DnsblRegistry, zone: string): DnsblZone | null {
  for (const entry of registry.zones) {
    if (entry.zone === zone) return entry;
  }
  for (const entry of registry.zones) {
    if (entry.subzones && zone.endsWith(`.${entry.zone}`)) return { ...entry, zone };
  }
  return null;
}

/** The zones of a run: those to query, and dead ones named in `--zones` (never queried). */
export interface ZoneSelection {
  zones: DnsblZone[];
  dead: DnsblZone[];
}

const KIND_SUFFIXES = new Set(['ip', 'ipv6', 'domain']);

/**
 * The zones a run queries. `spec` is the `--zones` value: a comma-separated
 * list of zone names, `default` (the registry's default set) and `all`
 * (every live zone of the registry). A zone outside the registry is an
 * RFC 5782 IPv4 list unless suffixed `:ipv6` (IPv4 and IPv6) or `:domain`;
 * on a registered IP list `:ipv6` / `:ip` turn its IPv6 queries on or off.
 * Dead zones are never queried: named ones come back in `dead`. Null
 * `spec` means `default`.
 *
 * @throws NetintelError `usage` for an empty list, a bad zone name or suffix,
 *   or a kind suffix that contradicts the registry.
 */
export function selectZones(registry: DnsblRegistry, spec: string | null): ZoneSelection {
  const tokens = (spec ?? 'default')
    .split(',')
    .map((token) => token.trim())
    .filter((token) => token.length > 0);
  if (tokens.length === 0) throw new NetintelError('usage', '--zones needs at least one zone name (or "default", or "all")');
  const chosen = new Map<string, DnsblZone>();
  const dead = new Map<string, DnsblZone>();
  const add = (zone: DnsblZone) => {
    if (zone.status === 'dead') dead.set(zone.zone, zone);
    else if (!chosen.has(zone.zone)) chosen.set(zone.zone, zone);
  };
  for (const token of tokens) {
    const lower = token.toLowerCase();
    if (lower === 'default' || lower === 'all') {
      registry.zones.filter((zone) => zone.status === 'live' && (lower === 'all' || zone.default)).forEach(add);
      continue;
    }
    const colon = token.lastIndexOf(':');
    const suffix = colon > 0 ? token.slice(colon + 1).toLowerCase() : null;
    const nameText = colon > 0 ? token.slice(0, colon) : token;
    if (suffix !== null && !KIND_SUFFIXES.has(suffix)) {
      throw new NetintelError('usage', `--zones: "${token}": the kind after ":" must be ip, ipv6 or domain`, { details: { zone: token } });
    }
    let name: string;
    try {
      name = normaliseDomain(nameText).ascii;
    } catch (error) {
      throw new NetintelError('usage', `--zones: ${(error as Error).message}`, { details: { zone: token } });
    }
    if (name === '.' || !name.includes('.')) {
      throw new NetintelError('usage', `--zones: "${token}" is not a DNS list zone (a name such as bl.example.net)`, { details: { zone: token } });
    }
    const registered = findRegisteredZone(registry, name);
    if (registered) {
      if (suffix === 'domain' && registered.kind !== 'domain') {
        throw new NetintelError('usage', `--zones: ${name} lists IP addresses in the registry, not domains; leave out ":domain"`, { details: { zone: token } });
      }
      if ((suffix === 'ip' || suffix === 'ipv6') && registered.kind !== 'ip') {
        throw new NetintelError('usage', `--zones: ${name} lists domains in the registry, not IP addresses; leave out ":${suffix}"`, { details: { zone: token } });
      }
      add(suffix === null || registered.kind !== 'ip' ? registered : { ...registered, ipv6: suffix === 'ipv6' });
      continue;
    }
    add(customZone(name, suffix === 'domain' ? 'domain' : 'ip', suffix === 'ipv6'));
  }
  return { zones: [...chosen.values()], dead: [...dead.values()] };
}

/** A zone outside the registry, with the RFC 5782 defaults. */
export function customZone(zone: string, kind: DnsblKind, ipv6: boolean): DnsblZone {
  return {
    zone,
    name: null,
    kind,
    ipv6: kind === 'ip' && ipv6,
    status: 'live',
    deadSince: null,
    subzones: false,
    default: false,
    listingSeverity: 'error',
    codes: {},
    bitmask: null,
    refusalCodes: {},
    canaries: defaultCanaries(kind),
    refusesPublicResolvers: false,
    usage: null,
    infoUrl: null,
    delistUrl: null,
    sources: [],
    note: null,
    registered: false,
  };
}

const IPV4_TEXT = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

function isIpv4Text(text: string): boolean {
  return IPV4_TEXT.test(text);
}

function isDomainText(text: string): boolean {
  try {
    return normaliseDomain(text).ascii !== '.';
  } catch {
    return false;
  }
}

/** An IPv4 CIDR block as a network number and prefix length, or null. */
export function parseIpv4Cidr(text: string): { network: number; length: number } | null {
  const slash = text.indexOf('/');
  if (slash < 0) return null;
  const address = text.slice(0, slash);
  const length = Number(text.slice(slash + 1));
  if (!isIpv4Text(address) || !/^\d{1,2}$/.test(text.slice(slash + 1)) || length > 32) return null;
  return { network: ipv4Number(address), length };
}

/** The dotted quad as an unsigned 32-bit number (the text must be valid). */
export function ipv4Number(text: string): number {
  return text.split('.').reduce((value, octet) => value * 256 + Number(octet), 0);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
