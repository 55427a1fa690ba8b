import { AsyncLocalStorage } from 'node:async_hooks';
import { subscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import type { FastifyReply } from 'fastify';

/**
 * What the server knows of the request a piece of work belongs to. Carried
 * through every callback and promise the request's handling starts
 * (AsyncLocalStorage), so that an error nobody caught can still be logged
 * with its request and answered, and so that connections a request opens
 * (SMTP, DNS over TCP) can be cut when the server shuts down.
 */
export interface RequestScope {
  id: string;
  method: string;
  url: string;
  reply: FastifyReply;
  /** The outbound connections of the server this request belongs to (shared by its requests). */
  outbound: Set<Socket>;
}

export const requestScope = new AsyncLocalStorage<RequestScope>();

let watching = false;

/**
 * Starts noting the client connections (net.connect) opened inside a
 * request scope in that scope's `outbound` set, each removed when it
 * closes. Node publishes every new client socket on the
 * `net.client.socket` diagnostics channel, so the engine needs no hook.
 */
export function watchOutboundSockets(): void {
  if (watching) return;
  watching = true;
  subscribe('net.client.socket', (message) => {
    const scope = requestScope.getStore();
    if (scope === undefined) return;
    const { socket } = message as { socket: Socket };
    scope.outbound.add(socket);
    socket.once('close', () => scope.outbound.delete(socket));
  });
}
