import { AsyncLocalStorage } from 'node:async_hooks';
import { subscribe } from 'node:diagnostics_channel';
import type { FastifyReply } from 'fastify';

/** An outbound connection or request a request's work opened: a net.Socket or an http.ClientRequest. */
export interface Outbound {
  destroy(error?: Error): unknown;
  once(event: 'close', listener: () => void): unknown;
}

/**
 * What the server knows of the request a piece of work belongs to. Carried
 * through every callback and promise the request's handling starts
 * (AsyncLocalStorage), so that an error nobody caught can still be logged
 * with its request and answered, and so that connections a request opens
 * (SMTP, DNS over TCP) can be cut when the server shuts down. The scope is
 * the request itself, given its reply and its server's outbound set by the
 * shutdown plugin (plugins/shutdown.ts): nothing is made for it per request.
 */
export interface RequestScope {
  id: string;
  method: string;
  url: string;
  reply: FastifyReply;
  /** The outbound connections of the server this request belongs to (shared by its requests). */
  outbound: Set<Outbound>;
}

export const requestScope = new AsyncLocalStorage<RequestScope>();

let watching = false;

/**
 * Starts noting the client connections (net.connect: SMTP, DNS over TCP)
 * and HTTP requests (https.request: MTA-STS policies) opened inside a
 * request scope in that scope's `outbound` set, each removed when it
 * closes. Node publishes them on the `net.client.socket` and
 * `http.client.request.start` diagnostics channels, so the engine needs
 * no hook.
 */
export function watchOutboundSockets(): void {
  if (watching) return;
  watching = true;
  const note = (outbound: Outbound) => {
    const scope = requestScope.getStore();
    if (scope === undefined) return;
    scope.outbound.add(outbound);
    outbound.once('close', () => scope.outbound.delete(outbound));
  };
  subscribe('net.client.socket', (message) => note((message as { socket: Outbound }).socket));
  subscribe('http.client.request.start', (message) => note((message as { request: Outbound }).request));
}
