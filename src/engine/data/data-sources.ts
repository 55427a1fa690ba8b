import { readFileSync } from 'node:fs';
import { NetintelError } from '../../errors.js';
import { isFeedFormat, type FeedFormat } from '../security/feed-formats.js';
import { isSignalName, type SignalName } from '../security/signals.js';
import { sourceRegistryPath, type DataFileName } from './data-files.js';
import { fileErrorReason } from '../../file-error.js';
import { BOOTSTRAP_REGISTRIES, type BootstrapRegistry } from '../rdap/rdap-bootstrap.js';

/** What a source is, and so how it is validated and where it goes (`rdap-bootstrap`: an IANA RDAP bootstrap file, RFC 9224; `rpki`: validated ROA payloads). */
export type SourceType = 'mmdb' | 'asn-csv' | 'feed' | 'rdap-bootstrap' | 'rpki';

/** A dataset `netintel data update` downloads (data/feeds.json, plus the user's overrides). */
export interface DataSource {
  name: string;
  type: SourceType;
  /** The URL to download (http, https or file); null when there is no stable official one (set it to use the source). */
  url: string | null;
  homepage: string | null;
  /** Updated by a plain `data update` (a named update runs it regardless). */
  enabled: boolean;
  /** `data status` calls the source stale when it has not been confirmed current for longer than this. */
  staleAfterDays: number;
  /** A download with fewer entries is rejected as truncated or wrong. */
  minEntries: number;
  licence: string;
  attribution: string | null;
  description: string;
  /** feed: its format, the signal its entries give, and the operator all its entries belong to. */
  format: FeedFormat | null;
  signal: SignalName | null;
  provider: string | null;
  /** mmdb: the dataset it replaces, the database_type and IP version it must have. */
  file: DataFileName | null;
  databaseType: string | null;
  /** mmdb and asn-csv: the address family. */
  ipVersion: 4 | 6 | null;
  /** rdap-bootstrap: which of the four bootstrap registries it is. */
  rdapRegistry: BootstrapRegistry | null;
}

/** The name a source has: lower-case letters, digits and dashes. */
const NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;

let registry: DataSource[] | undefined;

/** The sources of data/feeds.json (read once). Throws `data_unavailable` when the file is unreadable or malformed. */
export function loadSourceRegistry(path = sourceRegistryPath()): DataSource[] {
  if (path === sourceRegistryPath() && registry) return registry.map((source) => ({ ...source }));
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new NetintelError('data_unavailable', `cannot read the source registry ${path}: ${fileErrorReason(error)} (check the path and its permissions)`, { cause: error, details: { path } });
  }
  let doc: { sources?: unknown };
  try {
    doc = JSON.parse(text) as { sources?: unknown };
  } catch (error) {
    throw new NetintelError('data_unavailable', `the source registry ${path} is not valid JSON: ${(error as Error).message}`, { cause: error, details: { path } });
  }
  if (!Array.isArray(doc.sources)) throw new NetintelError('data_unavailable', `the source registry ${path} has no "sources" array`, { details: { path } });
  const sources = doc.sources.map((raw, i) => {
    try {
      return sourceFrom(raw as Record<string, unknown>);
    } catch (error) {
      throw new NetintelError('data_unavailable', `the source registry ${path}, source ${i + 1}: ${(error as Error).message}`, { details: { path } });
    }
  });
  if (path === sourceRegistryPath()) registry = sources;
  return sources.map((source) => ({ ...source }));
}

function sourceFrom(raw: Record<string, unknown>): DataSource {
  const text = (key: string, fallback: string | null = null): string | null => {
    const value = raw[key];
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'string') throw new Error(`"${key}" must be a string`);
    return value;
  };
  const name = text('name');
  if (name === null || !NAME.test(name)) throw new Error(`bad name ${JSON.stringify(raw.name)}`);
  const type = text('type', 'feed') as SourceType;
  if (type !== 'mmdb' && type !== 'asn-csv' && type !== 'feed' && type !== 'rdap-bootstrap' && type !== 'rpki') throw new Error(`${name}: unknown type ${JSON.stringify(type)}`);
  const rdapRegistry = text('rdapRegistry') as BootstrapRegistry | null;
  if (type === 'rdap-bootstrap' && !BOOTSTRAP_REGISTRIES.includes(rdapRegistry!)) throw new Error(`${name}: rdap-bootstrap needs "rdapRegistry" ${BOOTSTRAP_REGISTRIES.join(', ')}`);
  const format = text('format');
  const signal = text('signal');
  if (type === 'feed') {
    if (!isFeedFormat(format)) throw new Error(`${name}: unknown feed format ${JSON.stringify(format)}`);
    if (!isSignalName(signal)) throw new Error(`${name}: unknown signal ${JSON.stringify(signal)}`);
  }
  const ipVersion = raw.ipVersion === 4 || raw.ipVersion === 6 ? raw.ipVersion : null;
  if ((type === 'mmdb' || type === 'asn-csv') && ipVersion === null) throw new Error(`${name}: ${type} needs "ipVersion" 4 or 6`);
  const file = text('file') as DataFileName | null;
  if (type === 'mmdb' && file !== 'cityV4' && file !== 'cityV6') throw new Error(`${name}: mmdb needs "file" cityV4 or cityV6`);
  const url = text('url');
  if (url !== null) checkUrl(name, url);
  return {
    name,
    type,
    url,
    homepage: text('homepage'),
    enabled: raw.enabled !== false,
    staleAfterDays: positive(raw.staleAfterDays, 7, `${name}: staleAfterDays`),
    minEntries: count(raw.minEntries, 1, `${name}: minEntries`),
    licence: text('licence', 'not stated')!,
    attribution: text('attribution'),
    description: text('description', '')!,
    format: type === 'feed' ? (format as FeedFormat) : null,
    signal: type === 'feed' ? (signal as SignalName) : null,
    provider: text('provider'),
    file: type === 'mmdb' ? file : null,
    databaseType: type === 'mmdb' ? text('databaseType') : null,
    ipVersion: type === 'mmdb' || type === 'asn-csv' ? ipVersion : null,
    rdapRegistry: type === 'rdap-bootstrap' ? rdapRegistry : null,
  };
}

function positive(value: unknown, fallback: number, what: string): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) throw new Error(`${what} must be a positive number of days`);
  return value;
}

function count(value: unknown, fallback: number, what: string): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new Error(`${what} must be a whole number >= 0`);
  return value;
}

/** Accepts http:, https: and file: URLs; throws `usage` otherwise. */
export function checkUrl(name: string, url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new NetintelError('usage', `${name}: ${JSON.stringify(url)} is not a URL`, { details: { source: name, url } });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:' && parsed.protocol !== 'file:') {
    throw new NetintelError('usage', `${name}: only http, https and file URLs are supported, not ${parsed.protocol}`, { details: { source: name, url } });
  }
}

/**
 * Applies the user's settings to the registry: first the config file's
 * `feeds` object, then `--feed NAME=URL` flags (repeatable). A config entry is
 * a URL, or an object with `url`, `enabled`, `stale_days`, `min_entries`; an
 * entry for a name the registry lacks adds a feed and must give `url`,
 * `format` and `signal` (and may give `provider`, `licence`, `attribution`).
 * Giving a source a URL enables it. Throws `usage` for an unknown name in a
 * flag, a malformed flag or entry.
 */
export function applySourceSettings(sources: readonly DataSource[], config: unknown, flags: readonly string[]): DataSource[] {
  const byName = new Map(sources.map((source) => [source.name, { ...source }]));
  if (config !== undefined && config !== null) {
    if (typeof config !== 'object' || Array.isArray(config)) throw new NetintelError('usage', 'config file: "feeds" must be an object of source name -> URL or settings');
    for (const [name, value] of Object.entries(config as Record<string, unknown>)) {
      const where = `config file: feeds.${name}`;
      const settings = typeof value === 'string' ? { url: value } : value;
      if (settings === null || typeof settings !== 'object' || Array.isArray(settings)) throw new NetintelError('usage', `${where}: a URL or an object`);
      const entry = settings as Record<string, unknown>;
      let source = byName.get(name);
      if (!source) {
        if (!NAME.test(name)) throw new NetintelError('usage', `${where}: a source name is lower-case letters, digits and dashes`);
        try {
          source = sourceFrom({ name, type: 'feed', minEntries: 1, ...camelSettings(entry) });
        } catch (error) {
          throw new NetintelError('usage', `${where}: ${(error as Error).message} (a feed netintel does not know needs "url", "format" and "signal")`);
        }
        if (source.url === null) throw new NetintelError('usage', `${where}: a new feed needs "url"`);
        byName.set(name, source);
        continue;
      }
      if (entry.url !== undefined) {
        if (typeof entry.url !== 'string') throw new NetintelError('usage', `${where}.url must be a string`);
        checkUrl(name, entry.url);
        source.url = entry.url;
        source.enabled = true;
      }
      if (entry.enabled !== undefined) {
        if (typeof entry.enabled !== 'boolean') throw new NetintelError('usage', `${where}.enabled must be true or false`);
        source.enabled = entry.enabled;
      }
      try {
        if (entry.stale_days !== undefined) source.staleAfterDays = positive(entry.stale_days, source.staleAfterDays, `${where}.stale_days`);
        if (entry.min_entries !== undefined) source.minEntries = count(entry.min_entries, source.minEntries, `${where}.min_entries`);
      } catch (error) {
        throw new NetintelError('usage', (error as Error).message);
      }
    }
  }
  for (const flag of flags) {
    const at = flag.indexOf('=');
    if (at <= 0) throw new NetintelError('usage', `--feed takes NAME=URL, not ${JSON.stringify(flag)}`, { details: { flag } });
    const name = flag.slice(0, at);
    const url = flag.slice(at + 1);
    const source = byName.get(name);
    if (!source) {
      throw new NetintelError('usage', `--feed: no source named ${JSON.stringify(name)}; known: ${[...byName.keys()].join(', ')}`, { details: { source: name } });
    }
    checkUrl(name, url);
    source.url = url;
    source.enabled = true;
  }
  return [...byName.values()];
}

/** Config entries use snake_case (`stale_days`, `min_entries`); the registry camelCase. */
function camelSettings(entry: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...entry };
  if (entry.stale_days !== undefined) out.staleAfterDays = entry.stale_days;
  if (entry.min_entries !== undefined) out.minEntries = entry.min_entries;
  delete out.stale_days;
  delete out.min_entries;
  delete out.type;
  return out;
}

/**
 * The sources an update runs: the named ones (in the order given; throws
 * `usage` for an unknown name), else every enabled source with a URL.
 */
export function selectSources(sources: readonly DataSource[], names: readonly string[]): DataSource[] {
  if (names.length === 0) return sources.filter((source) => source.enabled && source.url !== null);
  const byName = new Map(sources.map((source) => [source.name, source]));
  return [...new Set(names)].map((name) => {
    const source = byName.get(name);
    if (!source) throw new NetintelError('usage', `no source named ${JSON.stringify(name)}; known: ${[...byName.keys()].join(', ')}`, { details: { source: name } });
    return source;
  });
}
