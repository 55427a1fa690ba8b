import { ipVersionOf } from '../engine/address/ip-text.js';
import ipaddr from 'ipaddr.js';
import { NetintelError } from '../errors.js';

/** Which header a trusted proxy writes the chain of addresses into. */
export type ProxyHeader = 'x-forwarded-for' | 'forwarded';

/** The proxies whose word about the caller's address is taken. */
export interface TrustedProxies {
  readonly empty: boolean;
  has(address: string): boolean;
}

/**
 * Parses a trusted-proxy list: IP addresses and CIDR blocks
 * (`10.0.0.0/8`, `2001:db8::/32`, `127.0.0.1`), and the names `loopback`,
 * `private` (RFC 1918 and unique local) and `linklocal`.
 *
 * @throws NetintelError `usage` naming an entry that is none of these.
 */
export function parseTrustedProxies(entries: readonly string[]): TrustedProxies {
  const ranges: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> = [];
  const named: Record<string, string[]> = {
    loopback: ['127.0.0.0/8', '::1/128'],
    private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
    linklocal: ['169.254.0.0/16', 'fe80::/10'],
  };
  for (const entry of entries.flatMap((item) => item.split(',')).map((item) => item.trim()).filter(Boolean)) {
    for (const cidr of named[entry] ?? [entry]) {
      try {
        const [address, bits] = cidr.split('/') as [string, string | undefined];
        if (ipVersionOf(address) === 0 || (bits !== undefined && !/^\d{1,3}$/.test(bits))) throw new Error('not an address');
        ranges.push(bits !== undefined ? ipaddr.parseCIDR(cidr) : [ipaddr.parse(address), ipVersionOf(address) === 4 ? 32 : 128]);
      } catch {
        throw new NetintelError('usage', `--trust-proxy: ${JSON.stringify(entry)} is not an IP address, a CIDR block, loopback, private or linklocal`, {
          details: { entry },
        });
      }
    }
  }
  return {
    empty: ranges.length === 0,
    has(address: string): boolean {
      if (ranges.length === 0) return false;
      let parsed: ipaddr.IPv4 | ipaddr.IPv6;
      try {
        parsed = unmapped(ipaddr.parse(address));
      } catch {
        return false;
      }
      return ranges.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits));
    },
  };
}

/**
 * The caller's address. The connection's peer is the caller unless it is a
 * trusted proxy; then the proxy's header names the hops, and the nearest
 * hop that is not a trusted proxy is the caller (the chain is read right to
 * left, so a client cannot pass itself off by writing the header itself).
 * A hop that is not an IP address (RFC 7239 `unknown`, obfuscated names)
 * stops the walk at the last trusted address.
 */
export function clientAddress(
  peer: string | undefined,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  trusted: TrustedProxies,
  header: ProxyHeader = 'x-forwarded-for',
): string {
  let client = normalise(peer ?? '');
  if (trusted.empty || !trusted.has(client)) return client;
  const raw = headers[header];
  const text = Array.isArray(raw) ? raw.join(',') : raw;
  if (!text) return client;
  const hops = header === 'forwarded' ? forwardedFor(text) : text.split(',').map((hop) => hop.trim());
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hopAddress(hops[i]!);
    if (hop === null) break;
    client = hop;
    if (!trusted.has(hop)) break;
  }
  return client;
}

/** The `for=` values of a Forwarded header (RFC 7239 §4), in order. */
function forwardedFor(text: string): string[] {
  const hops: string[] = [];
  for (const element of text.split(',')) {
    for (const pair of element.split(';')) {
      const equals = pair.indexOf('=');
      if (equals < 0) continue;
      if (pair.slice(0, equals).trim().toLowerCase() !== 'for') continue;
      hops.push(pair.slice(equals + 1).trim().replace(/^"(.*)"$/, '$1'));
    }
  }
  return hops;
}

/** An address from a hop: `192.0.2.1`, `192.0.2.1:4711`, `[2001:db8::1]:4711`, `2001:db8::1`; null otherwise. */
function hopAddress(hop: string): string | null {
  let text = hop;
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) text = bracketed[1]!;
  else if (/^[\d.]+:\d+$/.test(text)) text = text.slice(0, text.lastIndexOf(':'));
  if (ipVersionOf(text) === 0) return null;
  return normalise(text);
}

/** Canonical text; IPv4-mapped IPv6 (`::ffff:192.0.2.1`, as dual-stack sockets report) as IPv4. */
function normalise(address: string): string {
  // The common case, a dotted quad from an IPv4 socket, is already canonical.
  if (ipVersionOf(address) === 4) return address;
  try {
    return unmapped(ipaddr.parse(address)).toString();
  } catch {
    return address;
  }
}

function unmapped(address: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address;
}

/**
 * The key the free tier's limits are counted under: the address, or its
 * /64 for IPv6 (one subscriber usually holds a whole /64, so counting single
 * addresses would give each caller billions of allowances).
 */
export function addressSubject(address: string): string {
  if (!address.includes(':')) return `ip:${address}`;
  try {
    const parts = (ipaddr.parse(address) as ipaddr.IPv6).parts;
    return `ip6:${parts.slice(0, 4).map((part) => part.toString(16)).join(':')}::/64`;
  } catch {
    return `ip:${address}`;
  }
}
