import { addressText, familySize, parseIpRange, rangeCidrs, rangeSize, type IpRange } from '../address/ip-range.js';

/** What `netintel range` reports of a CIDR block or an `a-b` range. */
export interface RangeRecord {
  kind: 'range';
  /** The range as given. */
  input: string;
  version: 4 | 6;
  form: 'cidr' | 'range';
  first: string;
  last: string;
  /** The number of addresses, in decimal: a string, since an IPv6 count passes 2^53. */
  count: string;
  /** The minimal CIDR blocks covering exactly first..last, in order (one for a CIDR). */
  cidrs: string[];
  /** A CIDR's network facts; null for an `a-b` range. */
  network: RangeNetwork | null;
}

export interface RangeNetwork {
  /** The block in canonical form: host bits cleared. */
  cidr: string;
  prefix_length: number;
  netmask: string;
  /** The inverse of the netmask (the "wildcard" of router ACLs). */
  hostmask: string;
  /** The IPv4 broadcast address; null for IPv6, which has none (RFC 4291 section 2). */
  broadcast: string | null;
  /** Addresses a host may take, in decimal. */
  hosts: string;
  first_host: string;
  last_host: string;
}

/** Parses a range (throws `invalid_input` as parseIpRange does) and describes it. */
export function describeRange(text: string): RangeRecord {
  const range = parseIpRange(text);
  const count = rangeSize(range);
  return {
    kind: 'range',
    input: range.input,
    version: range.version,
    form: range.form,
    first: addressText(range.version, range.first),
    last: addressText(range.version, range.last),
    count: count.toString(),
    cidrs: rangeCidrs(range),
    network: range.prefix_length === null ? null : networkFacts(range, range.prefix_length, count),
  };
}

function networkFacts(range: IpRange, prefixLength: number, count: bigint): RangeNetwork {
  const { version, first, last } = range;
  const hostmask = count - 1n;
  const netmask = familySize(version) - 1n - hostmask;
  const text = (value: bigint) => addressText(version, value);
  const network = { cidr: `${text(first)}/${prefixLength}`, prefix_length: prefixLength, netmask: text(netmask), hostmask: text(hostmask) };
  if (version === 6) return { ...network, broadcast: null, hosts: count.toString(), first_host: text(first), last_host: text(last) };
  // RFC 919/922: the first address names the network and the last is broadcast, except in a
  // point-to-point /31 (RFC 3021), where both are hosts, and a /32, which is one host.
  if (prefixLength >= 31) return { ...network, broadcast: null, hosts: count.toString(), first_host: text(first), last_host: text(last) };
  return { ...network, broadcast: text(last), hosts: (count - 2n).toString(), first_host: text(first + 1n), last_host: text(last - 1n) };
}
