import type { FastifyInstance } from 'fastify';
import { NetintelError } from '../errors.js';
import { requestScope } from './request-scope.js';

/** The part of `process` the net listens on. */
export interface ProcessEvents {
  on(event: 'unhandledRejection' | 'uncaughtException', listener: (error: unknown) => void): unknown;
  off(event: 'unhandledRejection' | 'uncaughtException', listener: (error: unknown) => void): unknown;
}

/**
 * The last line of defence of `netintel serve`: an error that escaped every
 * handler (a promise rejected with nobody listening, an exception thrown from
 * a socket or timer callback) is logged with the request whose work raised
 * it, that request is answered 500 `internal` if it is still open, and the
 * process goes on serving the others. Without this, Node ends the process on
 * the first such error, and one request would take the API down for everyone.
 *
 * The bug itself still needs fixing; the log line says where to look.
 * `processEvents` is the process (the server layer does not reach for it
 * itself). Returns a function that removes the handlers.
 */
export function installCrashNet(app: FastifyInstance, processEvents: ProcessEvents): () => void {
  const caught = (kind: 'unhandled rejection' | 'uncaught exception') => (error: unknown) => {
    const scope = requestScope.getStore();
    try {
      if (scope === undefined) {
        app.log.error({ err: error }, `${kind} outside any request; still serving`);
        return;
      }
      app.log.error({ err: error, reqId: scope.id, method: scope.method, url: scope.url }, `${kind} while answering a request; still serving`);
      const { reply } = scope;
      if (reply.sent || reply.raw.headersSent || reply.raw.destroyed || reply.raw.socket?.destroyed !== false) return;
      reply.send(new NetintelError('internal', 'internal error: the server failed to answer; it has been logged'));
    } catch {
      // Logging or answering failed too; nothing more can be done for this one.
    }
  };
  const onRejection = caught('unhandled rejection');
  const onException = caught('uncaught exception');
  processEvents.on('unhandledRejection', onRejection);
  processEvents.on('uncaughtException', onException);
  return () => {
    processEvents.off('unhandledRejection', onRejection);
    processEvents.off('uncaughtException', onException);
  };
}
