import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { NetintelError } from '../../errors.js';
import type { Callers } from '../callers.js';
import { PROBLEM_CONTENT_TYPE, problemOf } from '../problem.js';
import { requestScope, watchOutboundSockets, type Outbound } from '../request-scope.js';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Ends every request still in flight, for shutdown: answers each one
     * not yet answered 503, and destroys the connections and HTTP requests
     * their work opened (SMTP, DNS over TCP, MTA-STS fetches), so that their
     * probes end now rather than at their own timeouts. Requests arriving
     * afterwards are answered 503 too.
     */
    abortInFlight(): void;
  }
  interface FastifyRequest {
    /** The request's reply, for its scope (request-scope.ts): the request is its own scope. */
    reply: FastifyReply;
    /** The outbound connections of the server it belongs to, for its scope. */
    outbound: Set<Outbound>;
  }
}

export interface ShutdownOptions {
  callers: Callers;
}

/**
 * What shutting down needs from the server itself; when to use it (a
 * signal, the grace) is the lifecycle's (lifecycle.ts). Every request runs
 * in its scope (request-scope.ts), so the requests in flight and the
 * connections their work opened are known; `abortInFlight` ends them.
 * Once closing (app.close() or abortInFlight), a request that arrives is
 * answered 503, and every answer ends its connection, so that a keep-alive
 * client does not hold the shutdown for its idle timeout.
 */
const shutdownPlugin: FastifyPluginCallback<ShutdownOptions> = (app, { callers }, done) => {
  // A request's work, and the connections it opens, are known by its scope (see request-scope.ts).
  watchOutboundSockets();
  const outbound = new Set<Outbound>();
  // The requests being answered; each leaves when its response closes.
  const open = new InFlight<FastifyRequest>();
  let closing = false;

  app.decorateRequest('reply', null as unknown as FastifyReply);
  app.decorateRequest('outbound', null as unknown as Set<Outbound>);
  app.decorate('abortInFlight', () => {
    closing = true;
    for (const scope of open) {
      const { reply } = scope;
      if (reply.sent || reply.raw.headersSent || reply.raw.destroyed) continue;
      sendShuttingDown(reply, scope.url);
      // The handler's own answer, when its work ends, has nowhere to go: dropped quietly.
      reply.hijack();
    }
    for (const connection of outbound) connection.destroy(new Error('the server is shutting down'));
    outbound.clear();
  });

  app.addHook('onRequest', (request, reply, done) => {
    if (closing) {
      request.netintel = callers.anonymousOf(request);
      sendShuttingDown(reply, request.url);
      return;
    }
    // The rest of the request's handling, its body's callbacks included
    // (Node runs them in the request's async context), runs in the scope:
    // the request itself, which knows its reply and the server's connections.
    request.reply = reply;
    request.outbound = outbound;
    const slot = open.add(request);
    reply.raw.on('close', () => open.remove(slot));
    requestScope.run(request, done);
  });

  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });

  // While closing, answers to requests in flight end their connection.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  done();
};

/**
 * 503 for a request the server will not finish because it is shutting down:
 * one that arrived while closing, or one still unanswered when the grace
 * for requests in flight ran out. The code is `unreachable`, what a client
 * would have seen had the connection just been cut; Retry-After says to try
 * again (another instance, or this one once restarted).
 */
function sendShuttingDown(reply: FastifyReply, url: string): void {
  const problem = new NetintelError('unreachable', 'the server is shutting down and did not finish this request; retry it', { details: { reason: 'shutdown' } });
  reply
    .code(503)
    .header('content-type', PROBLEM_CONTENT_TYPE)
    .header('retry-after', 1)
    .header('connection', 'close')
    .send(JSON.stringify(problemOf(problem, { status: 503, instance: url.split('?')[0] })));
}

/**
 * The requests in flight, in slots that are reused. Not a Map: V8 rehashes a
 * Map whose entries come and go every few dozen of them and keeps each table
 * it leaves, with the entries it held, until the next full collection. Once
 * the Map is old, every request in flight at a rehash then outlives the young
 * generation: with limits in Redis, where each request waits a turn, 2.7 KB
 * were promoted a request, and collecting them cost more than Redis itself
 * (bench/README.md, History).
 */
class InFlight<T> {
  private readonly slots: Array<T | undefined> = [];
  private readonly free: number[] = [];

  add(item: T): number {
    const slot = this.free.pop() ?? this.slots.length;
    this.slots[slot] = item;
    return slot;
  }

  remove(slot: number): void {
    this.slots[slot] = undefined;
    this.free.push(slot);
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (const item of this.slots) if (item !== undefined) yield item;
  }
}

/** Shutting down without leaving callers waiting (see shutdownPlugin); registered first, so that its scope holds every later hook. */
export const shutdown = fp(shutdownPlugin, { fastify: '5.x', name: 'netintel-shutdown' });
