import { NetintelError } from '../../errors.js';
import { rangeToCidrs, rangeToCidrsV4 } from './range-to-cidrs.js';
import { quoteInput, v4ToText } from './ip-address.js';
import { ipv6ToText, parseIpv4Fast, parseIpv6Text } from './ip-text.js';

/**
 * Address ranges as people write them: a CIDR block (`192.0.2.0/28`,
 * `2001:db8::/124`; RFC 4632, RFC 4291 section 2.3) or an inclusive `a-b`
 * range of one family. Values are bigints for both families, so that sizes
 * up to 2^128 stay exact.
 */
export interface IpRange {
  /** The text as given, trimmed. */
  input: string;
  version: 4 | 6;
  form: 'cidr' | 'range';
  first: bigint;
  last: bigint;
  /** The prefix length of a CIDR; null for an `a-b` range. */
  prefix_length: number | null;
}

const V6_SPACE_BITS = 128n;

/**
 * True when text is meant as a range rather than as one address: it has a
 * `/` or a `-` and nothing but what addresses, prefix lengths and the dash
 * are written with. `ip` and `bulk` expand such a target; anything else
 * keeps its own meaning (an address, a host name, an AS number). A host
 * name has neither `/` nor `:`, but may be all hex letters and a dash
 * (`abc-def.de`): without those two characters, only digits make a range.
 */
export function looksLikeIpRange(text: string): boolean {
  if (!/[/-]/.test(text) || !/^[0-9a-f.:/\s-]+$/i.test(text)) return false;
  return /[/:]/.test(text) || /^[\d.\s-]+$/.test(text);
}

/**
 * Parses a CIDR block or an `a-b` range. A CIDR with host bits set stands for
 * the block that holds its address (`192.0.2.5/28` is 192.0.2.0/28), as
 * ipcalc reads it. Throws `invalid_input` naming the input and the fix.
 */
export function parseIpRange(text: string): IpRange {
  const input = text.trim();
  const slash = input.indexOf('/');
  if (slash !== -1) return parseCidr(input, slash);
  const dash = input.indexOf('-');
  if (dash === -1 || input.indexOf('-', dash + 1) !== -1) {
    throw invalid(input, 'write a CIDR such as 192.0.2.0/24 or a range such as 192.0.2.1-192.0.2.9');
  }
  const start = parseAddress(input, input.slice(0, dash).trim());
  const end = parseAddress(input, input.slice(dash + 1).trim());
  if (start.version !== end.version) throw invalid(input, 'its two ends mix IPv4 and IPv6; give two addresses of one family');
  if (start.value > end.value) throw invalid(input, `its start is after its end; write the lower address first: ${addressText(start.version, end.value)}-${addressText(start.version, start.value)}`);
  return { input, version: start.version, form: 'range', first: start.value, last: end.value, prefix_length: null };
}

function parseCidr(input: string, slash: number): IpRange {
  const address = parseAddress(input, input.slice(0, slash));
  const lengthText = input.slice(slash + 1);
  const bits = address.version === 4 ? 32 : 128;
  if (!/^(0|[1-9]\d{0,2})$/.test(lengthText) || Number(lengthText) > bits) {
    throw invalid(input, `the prefix length after "/" is a whole number from 0 to ${bits} without leading zeros`);
  }
  const prefixLength = Number(lengthText);
  const hostBits = BigInt(bits - prefixLength);
  const first = (address.value >> hostBits) << hostBits;
  return { input, version: address.version, form: 'cidr', first, last: first + (1n << hostBits) - 1n, prefix_length: prefixLength };
}

/** The number of addresses of the range. */
export function rangeSize(range: IpRange): bigint {
  return range.last - range.first + 1n;
}

/** Text of an address of the family: dotted quad, or RFC 5952 IPv6. */
export function addressText(version: 4 | 6, value: bigint): string {
  if (version === 4) return v4ToText(Number(value));
  const bytes = new Uint8Array(16);
  let rest = value;
  for (let i = 15; i >= 0; i--) {
    bytes[i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
  return ipv6ToText(bytes);
}

/**
 * The minimal list of CIDR blocks, in address order, that covers exactly
 * the range (range2cidr): the greedy split of range-to-cidrs.ts.
 */
export function rangeCidrs(range: IpRange): string[] {
  if (range.version === 4) return rangeToCidrsV4(Number(range.first), Number(range.last));
  return rangeToCidrs(addressText(6, range.first), addressText(6, range.last));
}

/** The addresses of the range in order, made one at a time (the caller bounds the size). */
export function* rangeAddresses(range: IpRange): Generator<string> {
  for (let value = range.first; value <= range.last; value++) yield addressText(range.version, value);
}

/** The total address count of a family's space: 2^32 or 2^128. */
export function familySize(version: 4 | 6): bigint {
  return 1n << (version === 4 ? 32n : V6_SPACE_BITS);
}

interface ParsedAddress {
  version: 4 | 6;
  value: bigint;
}

function parseAddress(input: string, text: string): ParsedAddress {
  const v4 = parseIpv4Fast(text);
  if (v4 >= 0) return { version: 4, value: BigInt(v4) };
  // A zone index (`%eth0`) names a link of the host that wrote it, not part of a range.
  const bytes = text.includes('%') ? null : parseIpv6Text(text);
  if (bytes === null) throw invalid(input, `${quoteInput(text)} is not an IPv4 or IPv6 address`);
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return { version: 6, value };
}

function invalid(input: string, fix: string): NetintelError {
  return new NetintelError('invalid_input', `${quoteInput(input)} is not a valid range (${fix})`, { details: { input } });
}
