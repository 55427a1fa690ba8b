import { NetintelError } from '../../errors.js';
import { parseAddressRange } from '../address/address-range.js';

/**
 * Parsers of the formats the public security feeds are published in. Each
 * turns a feed's text into entries (address ranges, or AS numbers) with an
 * optional label (the operator the entry names) and port (proxy lists).
 *
 * | format               | what it reads                                                                  |
 * |----------------------|--------------------------------------------------------------------------------|
 * | `cidr-list`          | one address, CIDR or `a-b` range per line; `#` / `;` comments; the first field of a CSV line (geofeeds) |
 * | `tor-exit-addresses` | the Tor Project's `exit-addresses` (ExitNode / Published / LastStatus / ExitAddress) |
 * | `proxy-list`         | `ip:port` per line (`[v6]:port`, a `scheme://` prefix and a bare address allowed) |
 * | `aws-ip-ranges`      | AWS `ip-ranges.json` (`prefixes[].ip_prefix`, `ipv6_prefixes[].ipv6_prefix`)      |
 * | `google-cloud`       | Google `cloud.json` / `goog.json` (`prefixes[].ipv4Prefix` / `ipv6Prefix`)         |
 * | `azure-service-tags` | Azure Service Tags JSON (`values[].properties.addressPrefixes[]`)                 |
 * | `oracle-cloud`       | Oracle `public_ip_ranges.json` (`regions[].cidrs[].cidr`)                          |
 * | `asn-list`           | AS numbers, one per line: `AS123 # name`, `123`, or CSV `123,"name"`              |
 *
 * The Tor Project's bulk exit list (one address per line) is a `cidr-list`,
 * as are Cloudflare's `ips-v4`/`ips-v6` and the VPN/datacenter lists.
 */
export type FeedFormat =
  | 'cidr-list'
  | 'tor-exit-addresses'
  | 'proxy-list'
  | 'aws-ip-ranges'
  | 'google-cloud'
  | 'azure-service-tags'
  | 'oracle-cloud'
  | 'asn-list';

export const FEED_FORMATS: readonly FeedFormat[] = [
  'cidr-list',
  'tor-exit-addresses',
  'proxy-list',
  'aws-ip-ranges',
  'google-cloud',
  'azure-service-tags',
  'oracle-cloud',
  'asn-list',
];

export function isFeedFormat(value: unknown): value is FeedFormat {
  return typeof value === 'string' && (FEED_FORMATS as readonly string[]).includes(value);
}

/** Entries of one feed, in growable columns (a million ranges stay a few typed arrays). */
export class FeedEntries {
  v4Count = 0;
  v4Starts = new Uint32Array(1024);
  v4Ends = new Uint32Array(1024);
  v4Labels = new Int32Array(1024);
  v4Ports = new Uint16Array(1024);
  readonly v6Starts: bigint[] = [];
  readonly v6Ends: bigint[] = [];
  readonly v6Labels: number[] = [];
  readonly v6Ports: number[] = [];
  readonly asns: number[] = [];
  readonly asnLabels: number[] = [];
  /** Label texts by id. */
  readonly labels: string[] = [];
  private readonly labelIds = new Map<string, number>();

  get count(): number {
    return this.v4Count + this.v6Starts.length + this.asns.length;
  }

  label(text: string | null | undefined): number {
    const trimmed = text?.trim();
    if (!trimmed) return -1;
    let id = this.labelIds.get(trimmed);
    if (id === undefined) {
      id = this.labels.length;
      this.labels.push(trimmed);
      this.labelIds.set(trimmed, id);
    }
    return id;
  }

  addV4(start: number, end: number, label = -1, port = 0): void {
    if (this.v4Count === this.v4Starts.length) this.grow();
    const i = this.v4Count++;
    this.v4Starts[i] = start;
    this.v4Ends[i] = end;
    this.v4Labels[i] = label;
    this.v4Ports[i] = port;
  }

  addV6(start: bigint, end: bigint, label = -1, port = 0): void {
    this.v6Starts.push(start);
    this.v6Ends.push(end);
    this.v6Labels.push(label);
    this.v6Ports.push(port);
  }

  addAsn(asn: number, label = -1): void {
    this.asns.push(asn);
    this.asnLabels.push(label);
  }

  private grow(): void {
    const size = this.v4Starts.length * 2;
    const grown = <T extends Uint32Array | Int32Array | Uint16Array>(old: T, make: (n: number) => T): T => {
      const next = make(size);
      next.set(old);
      return next;
    };
    this.v4Starts = grown(this.v4Starts, (n) => new Uint32Array(n));
    this.v4Ends = grown(this.v4Ends, (n) => new Uint32Array(n));
    this.v4Labels = grown(this.v4Labels, (n) => new Int32Array(n));
    this.v4Ports = grown(this.v4Ports, (n) => new Uint16Array(n));
  }
}

/** A parsed feed: its entries, the records that could not be read, and the date the feed states. */
export interface ParsedFeed {
  format: FeedFormat;
  entries: FeedEntries;
  /** Records (lines, JSON items) read, malformed ones included. */
  records: number;
  malformed: number;
  /** The first few malformed records, for the error message. */
  malformedSamples: string[];
  /** The feed's own date (ISO 8601, UTC), when it states one. */
  date: string | null;
  /** The feed's own version marker (Azure changeNumber, AWS syncToken), when it has one. */
  version: string | null;
}

/** Above this share of malformed records a download is taken for something else (an error page, garbage). */
export const MAX_MALFORMED_RATIO = 0.05;
const MAX_SAMPLES = 3;

/**
 * Parses a feed's text in the given format. Does not judge the result (see
 * `checkParsedFeed`). Throws `data_unavailable` when a JSON feed is not JSON
 * or lacks the structure of its format.
 */
export function parseFeed(format: FeedFormat, text: string, name: string = format): ParsedFeed {
  const parsed: ParsedFeed = {
    format,
    entries: new FeedEntries(),
    records: 0,
    malformed: 0,
    malformedSamples: [],
    date: null,
    version: null,
  };
  switch (format) {
    case 'cidr-list':
      parseLines(text, parsed, (line) => addRange(parsed, firstField(line)));
      break;
    case 'proxy-list':
      parseLines(text, parsed, (line) => addProxy(parsed, line));
      break;
    case 'asn-list':
      parseLines(text, parsed, (line) => addAsnLine(parsed, line));
      break;
    case 'tor-exit-addresses':
      parseTorExitAddresses(text, parsed);
      break;
    default:
      parseJsonFeed(format, text, parsed, name);
  }
  return parsed;
}

/**
 * Judges a parsed feed before it may replace the installed one: it must hold
 * at least `minEntries` entries, at most MAX_MALFORMED_RATIO of its records
 * may be malformed, and (when the previous version's count is known) it must
 * not have shrunk below `minShareOfPrevious` of it. Throws `data_unavailable`
 * saying which check failed.
 */
export function checkParsedFeed(
  name: string,
  parsed: ParsedFeed,
  limits: { minEntries: number; previousEntries?: number | null; minShareOfPrevious?: number },
): void {
  const count = parsed.entries.count;
  const fail = (why: string): never => {
    throw new NetintelError('data_unavailable', `${name}: rejected the download: ${why}`, {
      details: { source: name, format: parsed.format, entries: count, records: parsed.records, malformed: parsed.malformed },
    });
  };
  if (parsed.records > 0 && parsed.malformed / parsed.records > MAX_MALFORMED_RATIO) {
    const samples = parsed.malformedSamples.map((sample) => JSON.stringify(sample)).join(', ');
    fail(`${parsed.malformed} of ${parsed.records} records are not ${parsed.format} entries (e.g. ${samples})`);
  }
  if (count < limits.minEntries) {
    fail(`${count} entries, fewer than the ${limits.minEntries} a real ${parsed.format} feed of this source holds (truncated or empty?)`);
  }
  const previous = limits.previousEntries ?? null;
  const share = limits.minShareOfPrevious ?? 0;
  if (previous !== null && previous > 0 && count < previous * share) {
    fail(`${count} entries, down from ${previous}: suspiciously small (under ${Math.round(share * 100)}% of the installed version; --force takes it anyway)`);
  }
}

// ---------------------------------------------------------------- line formats

function parseLines(text: string, parsed: ParsedFeed, add: (line: string) => boolean): void {
  let from = 0;
  if (text.charCodeAt(0) === 0xfeff) from = 1; // byte order mark
  while (from < text.length) {
    let to = text.indexOf('\n', from);
    if (to === -1) to = text.length;
    let line = text.slice(from, to);
    from = to + 1;
    if (line.endsWith('\r')) line = line.slice(0, -1);
    line = line.trim();
    if (line === '') continue;
    const c = line.charCodeAt(0);
    if (c === 35 /* # */ || c === 59 /* ; */ || line.startsWith('//')) {
      if (parsed.date === null) parsed.date = dateInComment(line);
      continue;
    }
    if (add(line)) {
      parsed.records++;
      continue;
    }
    // A CSV header (`ASN,Entity`, `"cidr","hostmin",...`) before the first entry is not a malformed record.
    if (parsed.records === 0 && CSV_HEADER.test(line)) continue;
    parsed.records++;
    malformed(parsed, line);
  }
}

const CSV_HEADER = /^"?[A-Za-z_][A-Za-z_ ]*"?\s*[,;\t]\s*"?[A-Za-z_]/;

function malformed(parsed: ParsedFeed, record: string): void {
  parsed.malformed++;
  if (parsed.malformedSamples.length < MAX_SAMPLES) parsed.malformedSamples.push(record.length > 60 ? `${record.slice(0, 60)}…` : record);
}

/** The first field of a line: up to whitespace, a comma or a semicolon, without quotes. */
function firstField(line: string): string {
  let end = line.length;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 32 || c === 9 || c === 44 || c === 59) {
      end = i;
      break;
    }
  }
  const field = line.slice(0, end);
  return field.length >= 2 && field.startsWith('"') && field.endsWith('"') ? field.slice(1, -1) : field;
}

function addRange(parsed: ParsedFeed, text: string, label = -1, port = 0): boolean {
  const range = parseAddressRange(text);
  if (range === null) return false;
  if (range.version === 4) parsed.entries.addV4(range.start, range.end, label, port);
  else parsed.entries.addV6(range.start, range.end, label, port);
  return true;
}

/** `ip:port`, `[v6]:port`, `v6:port` is ambiguous and read as an address; `scheme://` and a trailing `/` or comment dropped. */
function addProxy(parsed: ParsedFeed, line: string): boolean {
  let text = firstField(line);
  const scheme = text.indexOf('://');
  if (scheme !== -1) text = text.slice(scheme + 3);
  const at = text.lastIndexOf('@'); // user:password@host:port
  if (at !== -1) text = text.slice(at + 1);
  if (text.endsWith('/')) text = text.slice(0, -1);
  let host = text;
  let port = 0;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close === -1) return false;
    host = text.slice(1, close);
    const rest = text.slice(close + 1);
    if (rest !== '') {
      if (!rest.startsWith(':')) return false;
      port = portNumber(rest.slice(1));
      if (port < 0) return false;
    }
  } else {
    const colon = text.lastIndexOf(':');
    if (colon !== -1 && text.indexOf(':') === colon) {
      host = text.slice(0, colon);
      port = portNumber(text.slice(colon + 1));
      if (port < 0) return false;
    }
  }
  if (host.includes('/')) return false; // a proxy is one address
  return addRange(parsed, host, -1, port);
}

function portNumber(text: string): number {
  if (!/^\d{1,5}$/.test(text)) return -1;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : -1;
}

const ASN_LINE = /^(?:AS)?(\d{1,10})(?=$|[\s,;#])/i;

/** `AS123 # name`, `AS123`, `123`, `123,"name"` (brianhama's `ASN,Entity` CSV, header skipped as one malformed record). */
function addAsnLine(parsed: ParsedFeed, line: string): boolean {
  const quoted = /^"((?:AS)?\d{1,10})"/i.exec(line);
  if (quoted) line = `${quoted[1]}${line.slice(quoted[0].length)}`;
  const match = ASN_LINE.exec(line);
  if (!match) return false;
  const asn = Number(match[1]);
  if (asn > 0xffff_ffff) return false;
  let rest = line.slice(match[0].length).trim();
  let name: string | null = null;
  if (rest.startsWith('#')) name = rest.slice(1);
  else if (rest.startsWith(',') || rest.startsWith(';')) {
    rest = rest.slice(1).trim();
    name = rest.startsWith('"') ? rest.slice(1, rest.endsWith('"') ? -1 : undefined).replace(/""/g, '"') : rest;
  }
  parsed.entries.addAsn(asn, parsed.entries.label(name));
  return true;
}

/**
 * The Tor Project's `exit-addresses` (TorDNSEL): per relay an `ExitNode`
 * line, `Published`, `LastStatus`, and one `ExitAddress <ip> <date> <time>`
 * per exit address seen. The feed's date is its newest ExitAddress date.
 */
function parseTorExitAddresses(text: string, parsed: ParsedFeed): void {
  let newest = '';
  parseLines(text, parsed, (line) => {
    const space = line.indexOf(' ');
    const keyword = space === -1 ? line : line.slice(0, space);
    if (keyword === 'ExitNode' || keyword === 'Published' || keyword === 'LastStatus') return true;
    if (keyword !== 'ExitAddress') return false;
    const [, address, day, time] = line.split(/\s+/);
    if (!address || !addRange(parsed, address)) return false;
    const seen = `${day ?? ''} ${time ?? ''}`;
    if (/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(seen) && seen > newest) newest = seen;
    return true;
  });
  // Only ExitAddress lines are entries; relay header lines are not records.
  if (newest !== '') parsed.date = `${newest.replace(' ', 'T')}Z`;
}

// ---------------------------------------------------------------- JSON formats

function parseJsonFeed(format: FeedFormat, text: string, parsed: ParsedFeed, name: string): void {
  let doc: unknown;
  try {
    doc = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    throw new NetintelError('data_unavailable', `${name}: rejected the download: not JSON (${(error as Error).message})`, {
      details: { source: name, format },
    });
  }
  const shapeError = (what: string) =>
    new NetintelError('data_unavailable', `${name}: rejected the download: not ${format} JSON (${what})`, { details: { source: name, format } });
  const object = (value: unknown): Record<string, unknown> | null =>
    value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  const root = object(doc);
  if (root === null) throw shapeError('not an object');
  const range = (value: unknown) => {
    parsed.records++;
    if (typeof value !== 'string' || !addRange(parsed, value.trim())) malformed(parsed, String(value));
  };

  switch (format) {
    case 'aws-ip-ranges': {
      if (!Array.isArray(root.prefixes)) throw shapeError('no "prefixes" array');
      for (const item of root.prefixes) range(object(item)?.ip_prefix);
      for (const item of Array.isArray(root.ipv6_prefixes) ? root.ipv6_prefixes : []) range(object(item)?.ipv6_prefix);
      parsed.date = awsDate(root.createDate);
      parsed.version = typeof root.syncToken === 'string' ? `syncToken ${root.syncToken}` : null;
      break;
    }
    case 'google-cloud': {
      if (!Array.isArray(root.prefixes)) throw shapeError('no "prefixes" array');
      for (const item of root.prefixes) {
        const entry = object(item);
        range(entry?.ipv4Prefix ?? entry?.ipv6Prefix);
      }
      parsed.date = isoDate(root.creationTime);
      parsed.version = typeof root.syncToken === 'string' ? `syncToken ${root.syncToken}` : null;
      break;
    }
    case 'azure-service-tags': {
      if (!Array.isArray(root.values)) throw shapeError('no "values" array');
      for (const item of root.values) {
        const prefixes = object(object(item)?.properties)?.addressPrefixes;
        if (!Array.isArray(prefixes)) {
          parsed.records++;
          malformed(parsed, JSON.stringify(item).slice(0, 60));
          continue;
        }
        for (const prefix of prefixes) range(prefix);
      }
      parsed.version = root.changeNumber === undefined ? null : `changeNumber ${String(root.changeNumber)}`;
      break;
    }
    case 'oracle-cloud': {
      if (!Array.isArray(root.regions)) throw shapeError('no "regions" array');
      for (const region of root.regions) {
        const cidrs = object(region)?.cidrs;
        if (!Array.isArray(cidrs)) {
          parsed.records++;
          malformed(parsed, JSON.stringify(region).slice(0, 60));
          continue;
        }
        for (const cidr of cidrs) range(object(cidr)?.cidr);
      }
      parsed.date = isoDate(root.last_updated_timestamp);
      break;
    }
    default:
      throw shapeError('unknown JSON format');
  }
}

// ---------------------------------------------------------------- dates

/** AWS `createDate`: `2025-07-24-20-23-14` (UTC). */
function awsDate(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const match = /^(\d{4})-(\d{2})-(\d{2})-(\d{2})-(\d{2})-(\d{2})$/.exec(value);
  return match ? `${match[1]}-${match[2]}-${match[3]}T${match[4]}:${match[5]}:${match[6]}Z` : null;
}

/** An ISO 8601 date-time with or without zone (read as UTC), to second precision: `2025-07-24T19:16:28Z`. */
export function isoDate(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const match = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/.exec(value.trim());
  if (!match) return null;
  const zone = match[7] === undefined || match[7] === 'Z' ? 'Z' : match[7];
  const date = new Date(`${match[1]}-${match[2]}-${match[3]}T${match[4]}:${match[5]}:${match[6]}${zone}`);
  return Number.isNaN(date.getTime()) ? null : date.toISOString().replace('.000Z', 'Z');
}

/** A date a list states in a header comment (`# last_update: 2025-07-03-04-13-14`, `# Last modified: 2025-07-24 10:00:06.525037`). */
function dateInComment(line: string): string | null {
  if (!/updated|update|modified|generated|date/i.test(line)) return null;
  const aws = /(\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2})/.exec(line);
  if (aws) return awsDate(aws[1]);
  const iso = /(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)/.exec(line);
  return iso ? isoDate(iso[1]) : null;
}
