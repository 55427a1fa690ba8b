import tls from 'node:tls';
import { guardedConnect, type ConnectGuard } from '../connect-guard.js';
import type { DnsQuestion, EdnsMode } from './dns-message.js';
import type { ExchangeOutcome } from './exchange-outcome.js';
import type { ResolverAddress } from './resolver-address.js';
import { framedExchange } from './tcp-exchange.js';
import { tlsFailureOutcome } from './tls-failure.js';
import { unroutableReason } from './unroutable-address.js';

/**
 * One query over DNS over TLS (RFC 7858): a TLS connection to the
 * resolver's port (853 by default) carrying the TCP framing of RFC 1035
 * §4.2.2 (RFC 7858 §3.3). The certificate is checked against the host as
 * written, a name or an IP address (strict privacy profile, RFC 8310 §5),
 * with Node's CAs and the resolver's own (`ca`). `timeoutMs` covers the
 * handshake and the answer. Never rejects.
 */
export function dotExchange(
  resolver: ResolverAddress,
  question: DnsQuestion,
  edns: EdnsMode,
  timeoutMs: number,
  guard: ConnectGuard | null = null,
): Promise<ExchangeOutcome> {
  if (resolver.family !== 0 && unroutableReason(resolver.host) !== null) return Promise.resolve({ kind: 'unreachable', code: 'ENETUNREACH' });
  return framedExchange(
    () => tls.connect({ ...tlsOptions(resolver, []), ...guardedConnect(guard, resolver.host, { what: 'DNS resolver', port: resolver.port }) }),
    'secureConnect',
    question,
    edns,
    timeoutMs,
    (error) => tlsFailureOutcome(error, resolver.host),
  );
}

/** The TLS options of a connection to an encrypted resolver: host, SNI, trusted CAs, ALPN. */
export function tlsOptions(resolver: ResolverAddress, alpn: string[]): tls.ConnectionOptions {
  return {
    host: resolver.host,
    port: resolver.port,
    ...(resolver.family === 0 ? { servername: resolver.host } : {}),
    // `ca` replaces Node's store: the resolver's own CAs are added to it.
    ...(resolver.ca !== undefined && resolver.ca.length > 0 ? { ca: [...tls.rootCertificates, ...resolver.ca] } : {}),
    ...(alpn.length > 0 ? { ALPNProtocols: alpn } : {}),
  };
}
