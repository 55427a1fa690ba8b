import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ipVersionOf } from '../address/ip-text.js';
import { NetintelError } from '../../errors.js';

/**
 * How a resolver is spoken to: classic DNS over UDP and TCP, DNS over HTTPS
 * (RFC 8484) or DNS over TLS (RFC 7858).
 */
export type ResolverProtocol = 'dns' | 'https' | 'tls';

/** A DNS server to send queries to. */
export interface ResolverAddress {
  /** Absent: classic DNS (`dns`). */
  protocol?: ResolverProtocol;
  /**
   * The IP address (an IPv6 zone index such as `%eth0` kept); for DNS over
   * HTTPS or TLS also a host name, resolved by the system and checked
   * against the server's certificate.
   */
  host: string;
  /** UDP and TCP port; the HTTPS or TLS port for the encrypted protocols. */
  port: number;
  /** 0 for a host name. */
  family: 0 | 4 | 6;
  /** How results name it: `192.0.2.53:53`, `[2001:db8::53]:53`, `https://dns.example/dns-query`, `tls://dns.example:853`. */
  label: string;
  /** DNS over HTTPS: the URL queries go to, without the `dns` parameter. */
  url?: string;
  /** DNS over HTTPS: POST (the default) or GET, chosen by the `{?dns}` URI template (RFC 8484 §4.1). */
  method?: 'GET' | 'POST';
  /** DNS over HTTPS or TLS: certificates (PEM) trusted besides Node's own CAs. */
  ca?: readonly string[];
}

/** The port of classic DNS over UDP and TCP (RFC 1035 §4.2). */
export const DNS_PORT = 53;

/** The port of DNS over TLS (RFC 7858 §3.1). */
export const DOT_PORT = 853;

/** What a parsed resolver may carry besides its address. */
export interface ResolverSettings {
  /** CA certificates (PEM) trusted for DNS over HTTPS and TLS, besides Node's own. */
  ca?: readonly string[];
}

/** glibc's resolver falls back to the local host when resolv.conf names no server. */
const FALLBACK_RESOLVER = '127.0.0.1';

/**
 * Parses a resolver as users write it: `192.0.2.53`, `192.0.2.53:5353`,
 * `2001:db8::53`, `[2001:db8::53]`, `[2001:db8::53]:5353`. The port defaults
 * to 53. Host names are refused: resolving the resolver would need a resolver.
 *
 * Encrypted resolvers: `https://host[:port]/path` (DNS over HTTPS, RFC 8484,
 * POST; `https://host/path{?dns}` asks with GET) and `tls://host[:port]`
 * (DNS over TLS, RFC 7858, port 853). Their host may be a name: the system
 * resolves it, and the certificate must be valid for it.
 *
 * @throws NetintelError `invalid_input` naming the text and what is wrong.
 */
export function parseResolverAddress(text: string, settings: ResolverSettings = {}): ResolverAddress {
  const trimmed = text.trim();
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(trimmed)?.[1]?.toLowerCase();
  if (scheme !== undefined) {
    const encrypted = scheme === 'https' ? parseDohAddress(text, trimmed) : scheme === 'tls' ? parseDotAddress(text, trimmed) : null;
    if (encrypted === null) {
      throw invalidResolver(text, `the scheme ${JSON.stringify(`${scheme}://`)} is not one netintel speaks (https:// for DNS over HTTPS, tls:// for DNS over TLS)`);
    }
    return settings.ca !== undefined && settings.ca.length > 0 ? { ...encrypted, ca: settings.ca } : encrypted;
  }
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
      `invalid resolver ${JSON.stringify(text)}: expected an IP address, optionally with a port (192.0.2.53:53, [2001:db8::53]:53)`,
      { details: { input: text } },
    );
  }

  let port = DNS_PORT;
  if (portText !== null) {
    port = /^\d{1,5}$/.test(portText) ? Number(portText) : NaN;
    if (!(port >= 1 && port <= 65535)) {
      throw new NetintelError(
        'invalid_input',
        `invalid resolver ${JSON.stringify(text)}: the port must be a number from 1 to 65535`,
        { details: { input: text } },
      );
    }
  }

  const ipFamily = family === 6 ? 6 : 4;
  return { host, port, family: ipFamily, label: ipFamily === 6 ? `[${host}]:${port}` : `${host}:${port}` };
}

/**
 * The certificates of a PEM text (a CA bundle) as PEM blocks, each checked
 * to be an X.509 certificate.
 *
 * @throws NetintelError `usage` naming `source` when a block is not a
 *   certificate or there is none.
 */
export function parseResolverCa(text: string, source: string): string[] {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch {
      throw new NetintelError('usage', `${source} holds a CERTIFICATE block that is not an X.509 certificate (give PEM CA certificates)`, { details: { path: source } });
    }
  }
  if (blocks.length === 0) {
    throw new NetintelError('usage', `${source} holds no PEM certificate (give a file of -----BEGIN CERTIFICATE----- blocks)`, { details: { path: source } });
  }
  return blocks.map((block) => `${block}\n`);
}

/** DNS over HTTPS: an https URL with a host and no credentials or fragment. */
function parseDohAddress(text: string, trimmed: string): ResolverAddress {
  // RFC 8484 §4.1 publishes the endpoint as a URI Template; its `{?dns}` form asks with GET.
  const template = /\{\?dns\}$/.exec(trimmed);
  const urlText = template ? trimmed.slice(0, template.index) : trimmed;
  let url: URL;
  try {
    url = new URL(urlText);
  } catch {
    throw invalidResolver(text, 'expected a URL such as https://dns.example/dns-query');
  }
  if (url.username !== '' || url.password !== '' || url.hash !== '' || /[{}]/.test(urlText)) {
    throw invalidResolver(text, 'the URL may not hold credentials, a fragment or a URI template other than {?dns}');
  }
  if (url.searchParams.has('dns')) throw invalidResolver(text, 'leave out the dns= parameter: netintel adds each query');
  const host = endpointHost(text, url.hostname);
  const port = url.port === '' ? 443 : Number(url.port);
  if (port < 1) throw invalidResolver(text, 'the port must be a number from 1 to 65535');
  const href = url.href;
  return { protocol: 'https', host, port, family: ipVersionOf(host) as 0 | 4 | 6, label: href, url: href, method: template ? 'GET' : 'POST' };
}

/** DNS over TLS: `tls://host[:port]`, nothing after the authority. */
function parseDotAddress(text: string, trimmed: string): ResolverAddress {
  let url: URL;
  try {
    // Read as https to get WHATWG's parsing of host names and brackets; the port has no default there.
    url = new URL(`https${trimmed.slice(trimmed.indexOf(':'))}`);
  } catch {
    throw invalidResolver(text, 'expected tls://host or tls://host:port');
  }
  const authorityOnly = /^tls:\/\/[^/?#]+\/?$/i.test(trimmed);
  if (!authorityOnly || url.username !== '' || url.password !== '') throw invalidResolver(text, 'expected tls://host or tls://host:port, nothing after the port');
  const explicitPort = /:(\d+)\/?$/.exec(trimmed)?.[1];
  if (explicitPort !== undefined && !(Number(explicitPort) >= 1 && Number(explicitPort) <= 65535)) {
    throw invalidResolver(text, 'the port must be a number from 1 to 65535');
  }
  const host = endpointHost(text, url.hostname);
  const port = explicitPort === undefined ? DOT_PORT : Number(explicitPort);
  const family = ipVersionOf(host) as 0 | 4 | 6;
  return { protocol: 'tls', host, port, family, label: `tls://${family === 6 ? `[${host}]` : host}:${port}` };
}

/** The host of an endpoint URL without IPv6 brackets; refuses an empty one. */
function endpointHost(text: string, hostname: string): string {
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '') throw invalidResolver(text, 'the URL names no host');
  return host;
}

function invalidResolver(text: string, why: string): NetintelError {
  return new NetintelError('invalid_input', `invalid resolver ${JSON.stringify(text)}: ${why}`, { details: { input: text } });
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
