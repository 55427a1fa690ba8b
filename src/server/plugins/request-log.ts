import type { FastifyPluginCallback } from 'fastify';
import fp from 'fastify-plugin';

export interface RequestLogOptions {
  /** The server's log level; the lines are written at info, so a warn or error level leaves them out. */
  level: string;
}

/**
 * One log line per answered request, with the caller and its plan (the
 * key's id, never the key), in place of fastify's own request logging.
 * At a warn or error level nothing is added, and nothing is paid.
 */
const requestLogPlugin: FastifyPluginCallback<RequestLogOptions> = (app, { level }, done) => {
  if (['trace', 'debug', 'info'].includes(level)) {
    app.addHook('onResponse', (request, reply, done) => {
      const state = request.netintel;
      request.log.info(
        {
          method: request.method,
          path: request.url.split('?')[0],
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime * 10) / 10,
          client: state?.client,
          key: state?.keyId ?? undefined,
          plan: state?.plan.name,
          limited: state?.limit?.limitedBy ?? undefined,
        },
        'request',
      );
      done();
    });
  }
  done();
};

/** One line per answered request (see requestLogPlugin). */
export const requestLog = fp(requestLogPlugin, { fastify: '5.x', name: 'netintel-request-log' });
