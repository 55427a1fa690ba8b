import type { PlanTable } from '../keys/plans.js';
import type { RequestState } from './api-route.js';
import { addressSubject, clientAddress, parseTrustedProxies, type ProxyHeader } from './client-address.js';
import type { LimitStore } from './limits/limit-store.js';
import { limitHeaders } from './rate-limit-headers.js';

type Headers = Readonly<Record<string, string | string[] | undefined>>;

/**
 * The caller of a request before its key is checked: its address, its
 * state on the anonymous plan and that state's X-RateLimit-* headers. The
 * plugins that answer before a route does (a request the server will not
 * take, an unknown path, a shutdown) answer with these, as identify-caller
 * does for a request without a valid key.
 */
export interface Callers {
  /** The caller's address: the peer, or what a trusted proxy says the caller is (client-address.ts). */
  address(peer: string | undefined, headers: Headers): string;
  /** A caller without a verified key: on the anonymous plan, counted by its address (also when refused). */
  anonymous(client: string): RequestState;
  /** {@link anonymous} for the caller of a request. */
  anonymousOf(request: { raw: { socket: { remoteAddress?: string | undefined } }; headers: Headers }): RequestState;
  /** The X-RateLimit-* headers of a subject on the anonymous plan, or none if the limit store cannot say. */
  peekHeaders(subject: string): Promise<Record<string, number>>;
}

export interface CallersOptions {
  plans: PlanTable;
  limits: LimitStore;
  /** The clock of the limits, ms since the epoch. */
  now: () => number;
  /** Proxies trusted to say who the caller is (IPs, CIDRs, loopback, private, linklocal). */
  trustProxy: readonly string[];
  /** The header those proxies write. */
  proxyHeader: ProxyHeader;
}

/** @throws NetintelError `usage` for a trusted-proxy entry that is not an address or block. */
export function createCallers(options: CallersOptions): Callers {
  const { plans, limits, now, proxyHeader } = options;
  const anonymousPlan = plans.plans[plans.anonymous]!;
  const trusted = parseTrustedProxies(options.trustProxy);
  const address = (peer: string | undefined, headers: Headers) => clientAddress(peer, headers, trusted, proxyHeader);
  const anonymous = (client: string): RequestState => ({ client, plan: anonymousPlan, subject: addressSubject(client), keyId: null, limit: null, charged: 0 });
  return {
    address,
    anonymous,
    anonymousOf: (request) => anonymous(address(request.raw.socket.remoteAddress, request.headers)),
    peekHeaders: async (subject) => {
      try {
        return limitHeaders(await limits.peek(subject, anonymousPlan, now()));
      } catch {
        return {};
      }
    },
  };
}

/**
 * What a key's limits are counted under. An account's plan is the account's (docs/accounts.md): its
 * keys share one allowance, so that making more keys, or revoking one and making another, gives an
 * account no more than its plan. A key without an account (the operator's) is counted on its own.
 */
export function keySubject(keyId: string, accountId: string | null): string {
  return accountId === null ? `key:${keyId}` : `account:${accountId}`;
}
