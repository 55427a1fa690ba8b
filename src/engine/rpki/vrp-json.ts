import { NetintelError } from '../../errors.js';
import { ipv6ToBigInt } from '../address/ipv6-integer.js';
import { parseIpv4Fast, parseIpv6Into } from '../address/ip-text.js';

/**
 * One validated ROA payload (RFC 6811 §2): a prefix, the longest route
 * inside it the ROA allows, and the AS it authorises to originate them.
 * `start` is the prefix's first address (an unsigned 32-bit integer for
 * IPv4, a 128-bit one for IPv6).
 */
export type Vrp =
  | { version: 4; start: number; length: number; maxLength: number; asn: number; ta: string | null }
  | { version: 6; start: bigint; length: number; maxLength: number; asn: number; ta: string | null };

/** A parsed VRP export: its payloads and the date the export states. */
export interface VrpSet {
  vrps: Vrp[];
  /** When the validator produced the export (ISO 8601), when it says. */
  generated: string | null;
}

/** Largest export accepted; today's global set is about 30 MB. */
export const MAX_VRP_JSON_BYTES = 256 * 2 ** 20;
/** Most payloads accepted; today's global set holds under a million. */
export const MAX_VRPS = 10_000_000;
const ASN_TEXT = /^(?:AS)?(\d{1,10})$/i;
const TA_MAX_CHARS = 64;
const scratch = new Uint8Array(16);

/**
 * Parses the JSON export of rpki-client (`vrps.json`) and Routinator
 * (`--format json`): `{"roas": [{"asn": 13335 | "AS13335", "prefix":
 * "1.1.1.0/24", "maxLength": 24, "ta": "apnic"}], "metadata": {...}}`. An
 * absent maxLength is the prefix length (RFC 6482 §3.3). Every entry must
 * be well formed (a prefix without host bits, maxLength between the prefix
 * length and the family's width, an AS number below 2^32): a dataset with a
 * bad entry is refused whole, since dropping a payload can turn a valid
 * route invalid. Throws `data_unavailable` saying what is wrong.
 */
export function parseVrpJson(text: string, name = 'rpki'): VrpSet {
  const fail = (why: string): never => {
    throw new NetintelError('data_unavailable', `${name}: rejected the download: ${why}`, { details: { source: name } });
  };
  if (text.length > MAX_VRP_JSON_BYTES) fail(`${text.length} bytes, more than the ${MAX_VRP_JSON_BYTES} a VRP export may have`);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    return fail(`not JSON (${(error as Error).message})`);
  }
  if (doc === null || typeof doc !== 'object' || !Array.isArray((doc as { roas?: unknown }).roas)) fail('not a VRP export: no "roas" array');
  const roas = (doc as { roas: unknown[] }).roas;
  if (roas.length > MAX_VRPS) fail(`${roas.length} payloads, more than the ${MAX_VRPS} accepted`);
  const vrps: Vrp[] = [];
  for (let i = 0; i < roas.length; i++) {
    const vrp = vrpOf(roas[i]);
    if (typeof vrp === 'string') fail(`roas[${i}]: ${vrp} (${JSON.stringify(roas[i])?.slice(0, 120)})`);
    vrps.push(vrp as Vrp);
  }
  return { vrps, generated: generatedDate((doc as { metadata?: unknown }).metadata) };
}

/** One entry as a payload, or what is wrong with it. */
function vrpOf(raw: unknown): Vrp | string {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return 'not an object';
  const entry = raw as Record<string, unknown>;
  const asn = asnOf(entry.asn);
  if (asn === null) return '"asn" is not an AS number';
  if (typeof entry.prefix !== 'string') return '"prefix" is not a string';
  const prefix = prefixOf(entry.prefix);
  if (typeof prefix === 'string') return prefix;
  const width = prefix.version === 4 ? 32 : 128;
  const maxLength = entry.maxLength === undefined || entry.maxLength === null ? prefix.length : entry.maxLength;
  if (typeof maxLength !== 'number' || !Number.isInteger(maxLength) || maxLength < prefix.length || maxLength > width) {
    return `"maxLength" must be a whole number from ${prefix.length} to ${width}`;
  }
  let ta: string | null = null;
  if (entry.ta !== undefined && entry.ta !== null) {
    if (typeof entry.ta !== 'string' || entry.ta.length > TA_MAX_CHARS) return `"ta" must be a string of at most ${TA_MAX_CHARS} characters`;
    ta = entry.ta;
  }
  return prefix.version === 4
    ? { version: 4, start: prefix.start, length: prefix.length, maxLength, asn, ta }
    : { version: 6, start: prefix.start, length: prefix.length, maxLength, asn, ta };
}

function asnOf(value: unknown): number | null {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 && value <= 0xffff_ffff ? value : null;
  if (typeof value !== 'string') return null;
  const match = ASN_TEXT.exec(value);
  const asn = match === null ? NaN : Number(match[1]);
  return asn <= 0xffff_ffff ? asn : null;
}

type ParsedPrefix = { version: 4; start: number; length: number } | { version: 6; start: bigint; length: number };

/** `a.b.c.d/n` or `x::/n`, host bits clear; what is wrong otherwise. */
export function prefixOf(text: string): ParsedPrefix | string {
  const slash = text.indexOf('/');
  const digits = slash < 0 ? '' : text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(digits)) return '"prefix" is not an address/length';
  const length = Number(digits);
  const address = text.slice(0, slash);
  const v4 = parseIpv4Fast(address);
  if (v4 >= 0) {
    if (length > 32) return '"prefix" length is over 32';
    if (v4 % 2 ** (32 - length) !== 0) return '"prefix" has host bits set';
    return { version: 4, start: v4, length };
  }
  if (!address.includes(':') || !parseIpv6Into(address, scratch)) return '"prefix" is not an IP prefix';
  if (length > 128) return '"prefix" length is over 128';
  const start = ipv6ToBigInt(scratch);
  if ((start & ((1n << BigInt(128 - length)) - 1n)) !== 0n) return '"prefix" has host bits set';
  return { version: 6, start, length };
}

/**
 * The export's date: rpki-client writes `metadata.buildtime` (ISO 8601),
 * Routinator and the Cloudflare export `metadata.generated` (Unix seconds).
 */
function generatedDate(metadata: unknown): string | null {
  if (metadata === null || typeof metadata !== 'object') return null;
  const { buildtime, generated } = metadata as { buildtime?: unknown; generated?: unknown };
  const at = typeof buildtime === 'string' ? Date.parse(buildtime) : typeof generated === 'number' ? generated * 1000 : NaN;
  return Number.isFinite(at) && at > 0 && at < 8.64e15 ? new Date(at).toISOString().replace('.000Z', 'Z') : null;
}
