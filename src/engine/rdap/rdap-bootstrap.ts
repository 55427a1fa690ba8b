import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { NetintelError } from '../../errors.js';
import { parseIpRange } from '../address/ip-range.js';
import { packageRoot } from '../data/data-files.js';

/** The four registries of RFC 9224: which servers answer for domains, IPv4 and IPv6 networks, AS numbers. */
export type BootstrapRegistry = 'dns' | 'ipv4' | 'ipv6' | 'asn';

export const BOOTSTRAP_REGISTRIES: readonly BootstrapRegistry[] = ['dns', 'ipv4', 'ipv6', 'asn'];

/** One service of a bootstrap file: its entries (TLDs, CIDR blocks or AS ranges) and the base URLs that answer for them. */
export interface BootstrapService {
  entries: string[];
  urls: string[];
}

export interface BootstrapFile {
  publication: string | null;
  services: BootstrapService[];
}

/** A bootstrap file is a few hundred kilobytes at most (IANA's dns.json is about 100 KiB). */
const MAX_BOOTSTRAP_OCTETS = 4 * 1024 * 1024;

/**
 * Reads the text of an RFC 9224 bootstrap file (§3: `version`,
 * `publication`, `services` as an array of [entries, URLs] pairs). Entries
 * and URLs that are not strings are dropped; a service left without either
 * is dropped.
 *
 * @throws Error with the reason when the text is not such a file.
 */
export function parseBootstrap(text: string): BootstrapFile {
  const doc = JSON.parse(text) as unknown;
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('not a JSON object');
  const { services, publication } = doc as { services?: unknown; publication?: unknown };
  if (!Array.isArray(services)) throw new Error('no "services" array (RFC 9224 §3)');
  const read: BootstrapService[] = [];
  for (const service of services) {
    if (!Array.isArray(service) || service.length < 2 || !Array.isArray(service[0]) || !Array.isArray(service[1])) continue;
    const entries = (service[0] as unknown[]).filter((entry): entry is string => typeof entry === 'string').map((entry) => entry.toLowerCase());
    const urls = (service[1] as unknown[]).filter((url): url is string => typeof url === 'string' && /^https?:\/\//i.test(url));
    if (entries.length > 0 && urls.length > 0) read.push({ entries, urls });
  }
  return { publication: typeof publication === 'string' ? publication : null, services: read };
}

/** Where `netintel data update` installs a registry's bootstrap file, relative to the data dir. */
export function bootstrapDataDirFile(registry: BootstrapRegistry): string {
  return join('sources', `rdap-${registry}.json`);
}

/** The bootstrap file of a registry: the data dir's (installed by `netintel data update`) when there is one, else the bundled starter copy. */
export function bootstrapPath(registry: BootstrapRegistry, dataDir: string | null): string {
  if (dataDir !== null) {
    const installed = join(dataDir, bootstrapDataDirFile(registry));
    if (existsSync(installed)) return installed;
  }
  return join(packageRoot(), 'data', 'rdap', `${registry}.json`);
}

/** Files read, by path, with the modification time they were read at. */
const loaded = new Map<string, { mtimeMs: number; file: BootstrapFile }>();

/**
 * The bootstrap file of a registry, read again only when it changed (a
 * running server sees what another process's `data update` installed).
 *
 * @throws NetintelError `data_unavailable` when it cannot be read or is not a bootstrap file.
 */
export function loadBootstrap(registry: BootstrapRegistry, dataDir: string | null): BootstrapFile {
  const path = bootstrapPath(registry, dataDir);
  try {
    const { mtimeMs, size } = statSync(path);
    const known = loaded.get(path);
    if (known !== undefined && known.mtimeMs === mtimeMs) return known.file;
    if (size > MAX_BOOTSTRAP_OCTETS) throw new Error(`larger than ${MAX_BOOTSTRAP_OCTETS} octets`);
    const file = parseBootstrap(readFileSync(path, 'utf8'));
    loaded.set(path, { mtimeMs, file });
    return file;
  } catch (error) {
    throw new NetintelError('data_unavailable', `cannot read the RDAP bootstrap file ${path}: ${(error as Error).message} (run netintel data update rdap-${registry})`, {
      cause: error,
      details: { path },
    });
  }
}

/** Forgets the files read, so that a file replaced by an update is read again. */
export function forgetBootstraps(): void {
  loaded.clear();
}

/**
 * The base URLs for a domain name (RFC 9224 §4: the longest match of its
 * trailing labels), an HTTPS one first; empty when no service covers it.
 */
export function domainServers(file: BootstrapFile, domain: string): string[] {
  const labels = domain.toLowerCase().replace(/\.$/, '').split('.');
  for (let start = 0; start < labels.length; start++) {
    const suffix = labels.slice(start).join('.');
    const service = file.services.find((each) => each.entries.includes(suffix));
    if (service) return httpsFirst(service.urls);
  }
  return [];
}

/** The base URLs for an address block [first, last] of one family (RFC 9224 §5: the longest prefix holding it). */
export function networkServers(file: BootstrapFile, version: 4 | 6, first: bigint, last: bigint): string[] {
  let best: { length: number; urls: string[] } | null = null;
  for (const service of file.services) {
    for (const entry of service.entries) {
      const block = blockOf(entry);
      if (block === null || block.version !== version || block.first > first || block.last < last) continue;
      if (best === null || block.length > best.length) best = { length: block.length, urls: service.urls };
    }
  }
  return best === null ? [] : httpsFirst(best.urls);
}

/** The base URLs for an AS number (RFC 9224 §5.3: the range holding it). */
export function asnServers(file: BootstrapFile, asn: number): string[] {
  for (const service of file.services) {
    for (const entry of service.entries) {
      const match = /^(\d+)(?:-(\d+))?$/.exec(entry);
      if (match === null) continue;
      const low = Number(match[1]);
      const high = match[2] === undefined ? low : Number(match[2]);
      if (asn >= low && asn <= high) return httpsFirst(service.urls);
    }
  }
  return [];
}

function blockOf(entry: string): { version: 4 | 6; first: bigint; last: bigint; length: number } | null {
  try {
    const range = parseIpRange(entry.includes('/') ? entry : `${entry}/${entry.includes(':') ? 128 : 32}`);
    return { version: range.version, first: range.first, last: range.last, length: range.prefix_length ?? 0 };
  } catch {
    return null;
  }
}

/** RFC 9224 §3 lets a service list http and https URLs; netintel asks over HTTPS only, so http URLs are dropped. */
function httpsFirst(urls: readonly string[]): string[] {
  return urls.filter((url) => url.toLowerCase().startsWith('https://'));
}
