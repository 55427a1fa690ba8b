import { ipVersionOf } from '../address/ip-text.js';
import { NetintelError } from '../../errors.js';
import { quoteInput } from '../address/ip-address.js';
import { canonicalIp, normaliseDomain } from '../dns/dns-name.js';
import type { StarttlsProtocol } from './tls-result.js';

/** The usual port of each STARTTLS protocol, and 443 (HTTPS) without one. */
export const DEFAULT_PORTS: Readonly<Record<StarttlsProtocol | 'none', number>> = {
  none: 443,
  smtp: 25,
  imap: 143,
  pop3: 110,
  ftp: 21,
  xmpp: 5222,
  ldap: 389,
  postgres: 5432,
};

export interface TlsTarget {
  /** A domain name (ASCII form) or an IP address (canonical). */
  host: string;
  isIp: boolean;
  port: number;
}

function invalid(message: string, input: string): NetintelError {
  return new NetintelError('invalid_input', message, { details: { input } });
}

/**
 * Splits `host`, `host:port`, `[v6]:port` or a bare IPv6 address into the
 * host as written and the port (default `defaultPort`). Control characters
 * and spaces are refused: the host travels in the STARTTLS preambles
 * (XMPP's `to`) and in SNI.
 *
 * @throws NetintelError `invalid_input`
 */
export function splitTlsTarget(text: string, defaultPort: number): { host: string; port: number } {
  const trimmed = text.trim();
  if (trimmed === '') throw invalid('the target is empty', text);
  if (/[\u0000-\u0020\u007f<>'"&/]/.test(trimmed)) throw invalid(`${quoteInput(text)} is not a host or host:port`, text);
  let host = trimmed;
  let portText: string | null = null;
  const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(trimmed);
  if (bracketed) {
    host = bracketed[1]!;
    portText = bracketed[2] ?? null;
    if (ipVersionOf(host) !== 6) throw invalid(`${quoteInput(text)}: only an IPv6 address goes between brackets`, text);
  } else if (ipVersionOf(trimmed) === 0 && trimmed.includes(':')) {
    const colon = trimmed.lastIndexOf(':');
    host = trimmed.slice(0, colon);
    portText = trimmed.slice(colon + 1);
  }
  if (portText === null) return { host, port: defaultPort };
  if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
    throw invalid(`the port of ${quoteInput(text)} must be an integer from 1 to 65535`, text);
  }
  return { host, port: Number(portText) };
}

/**
 * Reads a target as {@link splitTlsTarget} does, the host a domain name
 * (ASCII form) or an IP address (canonical form).
 *
 * @throws NetintelError `invalid_input`
 */
export function parseTlsTarget(text: string, defaultPort: number): TlsTarget {
  const { host, port } = splitTlsTarget(text, defaultPort);
  if (ipVersionOf(host) !== 0) {
    if (host.includes('%')) throw invalid(`${quoteInput(text)}: an address with a zone index cannot be probed`, text);
    return { host: canonicalIp(host), isIp: true, port };
  }
  const ascii = normaliseDomain(host).ascii.replace(/\.$/, '');
  if (ascii === '' || ascii === '.') throw invalid(`${quoteInput(text)} is not a host`, text);
  return { host: ascii, isIp: false, port };
}
