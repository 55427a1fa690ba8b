import { readFile } from 'node:fs/promises';
import { ipVersionOf } from '../ip/ip-text.js';
import { NetintelError } from '../../errors.js';

/** A DNS server to send queries to. */
export interface ResolverAddress {
  /** The IP address (an IPv6 zone index such as `%eth0` kept). */
  host: string;
  /** UDP and TCP port. */
  port: number;
  family: 4 | 6;
  /** How results name it: `192.0.2.53:53`, `[2001:db8::53]:53`. */
  label: string;
}

/** The port of classic DNS over UDP and TCP (RFC 1035 §4.2). */
export const DNS_PORT = 53;

/** glibc's resolver falls back to the local host when resolv.conf names no server. */
const FALLBACK_RESOLVER = '127.0.0.1';

/**
 * Parses a resolver as users write it: `192.0.2.53`, `192.0.2.53:5353`,
 * `2001:db8::53`, `[2001:db8::53]`, `[2001:db8::53]:5353`. The port defaults
 * to 53. Host names are refused: resolving the resolver would need a resolver.
 *
 * @throws NetintelError `invalid_input` naming the text and what is wrong.
 */
export function parseResolverAddress(text: string): ResolverAddress {
  const trimmed = text.trim();
  let host = trimmed;
  let portText: string | null = null;

  const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(trimmed);
  if (bracketed) {
    host = bracketed[1] ?? '';
    portText = bracketed[2] ?? null;
  } else if (ipVersionOf(trimmed) === 0) {
    // Only IPv4 may carry a port without brackets: in "2001:db8::53:53" the
    // last group could be either.
    const colon = trimmed.lastIndexOf(':');
    if (colon > 0 && trimmed.indexOf(':') === colon) {
      host = trimmed.slice(0, colon);
      portText = trimmed.slice(colon + 1);
    }
  }

  const family = ipVersionOf(host);
  if (family === 0 || (bracketed && family !== 6)) {
    throw new NetintelError(
      'invalid_input',
      `Invalid resolver ${JSON.stringify(text)}: expected an IP address, optionally with a port (192.0.2.53:53, [2001:db8::53]:53)`,
      { details: { input: text } },
    );
  }

  let port = DNS_PORT;
  if (portText !== null) {
    port = /^\d{1,5}$/.test(portText) ? Number(portText) : NaN;
    if (!(port >= 1 && port <= 65535)) {
      throw new NetintelError(
        'invalid_input',
        `Invalid resolver ${JSON.stringify(text)}: the port must be a number from 1 to 65535`,
        { details: { input: text } },
      );
    }
  }

  const ipFamily = family === 6 ? 6 : 4;
  return { host, port, family: ipFamily, label: ipFamily === 6 ? `[${host}]:${port}` : `${host}:${port}` };
}

/**
 * The nameservers of a resolv.conf text (`nameserver` lines, in order;
 * comments after `#` or `;` ignored), or `127.0.0.1` when it names none, as
 * glibc does. Lines that do not hold an IP address are skipped.
 */
export function parseResolvConf(text: string): ResolverAddress[] {
  const resolvers: ResolverAddress[] = [];
  for (const rawLine of text.split('\n')) {
    const line = rawLine.replace(/[#;].*$/, '').trim();
    const match = /^nameserver\s+(\S+)/.exec(line);
    if (!match?.[1] || ipVersionOf(match[1]) === 0) continue;
    resolvers.push(parseResolverAddress(match[1]));
  }
  return resolvers.length > 0 ? resolvers : [parseResolverAddress(FALLBACK_RESOLVER)];
}

/**
 * The system's resolvers, read from resolv.conf (`path`, injectable for
 * tests). A missing or unreadable file gives `127.0.0.1`, as glibc does.
 */
export async function readSystemResolvers(path = '/etc/resolv.conf'): Promise<ResolverAddress[]> {
  let text = '';
  try {
    text = await readFile(path, 'utf8');
  } catch {
    // Fall through to the fallback: no resolv.conf means "ask the local host".
  }
  return parseResolvConf(text);
}
