import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { ipVersionOf } from './address/ip-text.js';
import ipaddr from 'ipaddr.js';
import { NetintelError } from '../errors.js';
import { embeddedIpv4 } from './address/embedded-ipv4.js';
import { v4ToText } from './address/ip-address.js';
import { ipv6ToText, parseIpv4Fast, parseIpv6Text } from './address/ip-text.js';
import { unprobedBlockOf, unprobedBlockOfV4 } from './address/special-ranges.js';

/**
 * Where a socket is about to go: what it is for (`SMTP server`, `MTA-STS
 * policy host`, `DNS resolver`), the name it was asked for, its port.
 */
export interface ConnectTarget {
  what: string;
  /** The host name the address belongs to, when there is one (messages only). */
  name?: string;
  /** The port, when known. */
  port?: number;
}

/**
 * Called by every engine function that opens a socket to a caller-influenced
 * address (SMTP probes, the guarded HTTPS GET of the MTA-STS policy and the
 * BIMI logo and certificate, on every redirect too, a caller-chosen DNS
 * resolver) with the address it is about to connect to: after name
 * resolution, just before connect(2). Returns to let the connection go
 * ahead; throws a NetintelError to stop it, and then nothing is sent.
 */
export type ConnectGuard = (address: string, target: ConnectTarget) => void;

/** Why an address is not a public target. */
export interface TargetRefusal {
  /** The address connected to, canonical (zone index dropped). */
  address: string;
  /** What it is, citing the RFC: `loopback (RFC 1122)`, `IPv4-mapped (RFC 4291 §2.5.5.2) form of 127.0.0.1, loopback (RFC 1122)`. */
  reason: string;
  /** The IPv4 address inside it that was refused, when that is why. */
  embedded: string | null;
}

/**
 * Cloud metadata services on ordinary-looking addresses. The usual one,
 * 169.254.169.254 (and AWS's fd00:ec2::254), is link-local or unique local
 * and refused with those; these are not.
 */
const METADATA_ADDRESSES: ReadonlyMap<number, string> = new Map([
  [0xa83f8110, 'the Azure platform (WireServer) address'],
  [0x646464c8, 'the Alibaba Cloud metadata service'],
]);

/**
 * Whether a server probing for others must refuse to connect to `address`,
 * and why: any address in the IANA special-purpose registries (RFC 6890 and
 * successors: private, loopback, link-local, CGNAT, unique local,
 * documentation, benchmarking, multicast, broadcast, unspecified, reserved;
 * see special-ranges.ts), a cloud metadata address, or an IPv6 address that
 * carries such an IPv4 address (IPv4-mapped, -compatible, -translated,
 * NAT64, 6to4, Teredo, ISATAP; see embedded-ipv4.ts). Null for a public
 * address.
 *
 * Every text form is read: RFC 4291 IPv6 with or without a zone index
 * (`fe80::1%eth0`, judged without it), dotted-quad IPv4 and the older forms
 * inet_aton(3) and so getaddrinfo(3) still accept (`0x7f.1`, `0177.0.0.1`,
 * `2130706433`, `127.1`), read by ipaddr.js as they do.
 *
 * @throws NetintelError `invalid_input` when `address` is not an IP address in any form.
 */
export function targetRefusal(address: string): TargetRefusal | null {
  const read = readTargetAddress(address);
  if (read === null) {
    throw new NetintelError('invalid_input', `${JSON.stringify(address.slice(0, 80))} is not an IPv4 or IPv6 address`, { details: { input: address } });
  }
  if (read.version === 4) {
    const reason = v4Refusal(read.v4);
    return reason === null ? null : { address: read.text, reason, embedded: null };
  }
  const { bytes, text: canonical } = read;
  // IANA lists 64:ff9b::/96 as globally reachable: it stands for the IPv4
  // address inside it (RFC 6052 §3.1), which is judged below instead.
  const nat64 = bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && bytes.subarray(4, 12).every((byte) => byte === 0);
  // An IPv4 address inside that is refused is named first: "the IPv4-compatible form of 127.0.0.1,
  // loopback" says more than the reserved block the form lies in.
  for (const inside of embeddedIpv4(bytes)) {
    const reason = v4Refusal(inside.v4);
    if (reason !== null) {
      const embedded = v4ToText(inside.v4);
      return { address: canonical, reason: `the ${inside.via} form of ${embedded}, ${reason}`, embedded };
    }
  }
  const own = nat64 ? null : unprobedBlockOf({ text: canonical, version: 6, bytes, v4: 0 });
  return own === null ? null : { address: canonical, reason: own, embedded: null };
}

/**
 * The guard of a server that probes for others (SSRF: docs/design.md, The
 * public-target guard; the addresses, docs/api.md, Safety): refuses every
 * address {@link targetRefusal} refuses.
 *
 * @throws NetintelError `forbidden` (HTTP 403, `details.rule: "private-target"`)
 *   naming the address, the host and why; `invalid_input` for a non-address.
 */
export function createPublicTargetGuard(): ConnectGuard {
  return (address, target) => {
    const refusal = targetRefusal(address);
    if (refusal !== null) throw refusedTarget(refusal, target);
  };
}

/** The error of a refused target. */
export function refusedTarget(refusal: TargetRefusal, target: ConnectTarget): NetintelError {
  const named =
    target.name !== undefined && target.name !== refusal.address ? `${target.name} resolves to ${refusal.address}, which is` : `${refusal.address} is`;
  return new NetintelError(
    'forbidden',
    `${target.what} ${named} ${refusal.reason}: this server does not connect to private, loopback, link-local, special-purpose or metadata addresses`,
    {
      details: {
        address: refusal.address,
        ...(target.name === undefined ? {} : { host: target.name }),
        ...(target.port === undefined ? {} : { port: target.port }),
        reason: refusal.reason,
        ...(refusal.embedded === null ? {} : { embedded: refusal.embedded }),
        rule: 'private-target',
      },
    },
  );
}

/**
 * Socket options that put `guard` between name resolution and connect(2),
 * for net.connect, tls.connect and https.request to `host`. An IP literal
 * is checked now (Node connects to it without a lookup); a name gets a
 * `lookup` that checks every address getaddrinfo gives before Node may use
 * one, so a name cannot be resolved to one address for a check and another
 * for the connection. A refusal is the socket's error (or thrown now, for a
 * literal): the NetintelError the guard threw.
 */
export function guardedConnect(guard: ConnectGuard | null | undefined, host: string, target: ConnectTarget): { lookup?: GuardedLookup } {
  if (!guard) return {};
  // Node's own test of whether it will skip the lookup, so that no text falls between the two paths.
  if (ipVersionOf(host) !== 0) {
    guard(host, target);
    return {};
  }
  return {
    lookup: (hostname, options, callback) => {
      dnsLookup(hostname, options, (error, result, family) => {
        if (error) return callback(error, result, family);
        const addresses = Array.isArray(result) ? result.map((item: LookupAddress) => item.address) : [result];
        try {
          for (const address of addresses) guard(address, { ...target, name: target.name ?? hostname });
        } catch (refusal) {
          return callback(refusal as NodeJS.ErrnoException, result, family);
        }
        callback(null, result, family);
      });
    },
  };
}

type GuardedLookup = (
  hostname: string,
  options: LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

function v4Refusal(v4: number): string | null {
  return unprobedBlockOfV4(v4) ?? METADATA_ADDRESSES.get(v4) ?? null;
}

/**
 * An IP address in any of the text forms targetRefusal reads (brackets and
 * a zone index allowed), with its canonical text: dotted quad, or RFC 5952
 * IPv6 (the deprecated `::1.2.3.4` is `::102:304`, as the kernel reads it).
 * Null when the text is not an address.
 */
export function readTargetAddress(address: string): { text: string; version: 4; v4: number } | { text: string; version: 6; bytes: Uint8Array } | null {
  const text = address.replace(/^\[(.*)\]$/, '$1');
  const v4 = parseAnyIpv4(text);
  if (v4 !== null) return { text: v4ToText(v4), version: 4, v4 };
  const bytes = parseIpv6Text(text);
  return bytes === null ? null : { text: ipv6ToText(bytes), version: 6, bytes };
}

/** An IPv4 address in dotted-quad or any inet_aton(3) form, as an unsigned 32-bit integer; null when the text is none. */
function parseAnyIpv4(text: string): number | null {
  const strict = parseIpv4Fast(text);
  if (strict >= 0) return strict;
  if (!/^[0-9a-fA-FxX.]+$/.test(text) || !ipaddr.IPv4.isValid(text)) return null;
  return ipaddr.IPv4.parse(text).octets.reduce((value, octet) => value * 256 + octet, 0);
}
