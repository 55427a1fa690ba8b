import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { NetintelError } from '../../errors.js';
import type { Callers } from '../callers.js';
import { PROBLEM_CONTENT_TYPE, problemOf, safePath } from '../problem.js';
import { answerOnSocket } from '../socket-answer.js';

export interface UnroutedOptions {
  callers: Callers;
}

/**
 * Requests no route takes. An unknown path is 404; a known path asked with
 * another method is 405 with Allow (RFC 9110 §15.5.6), and OPTIONS on it is
 * 204 with Allow (§9.3.7); OPTIONS * asks about the server as a whole.
 * CONNECT, which Node hands over as a bare socket, is answered the same way.
 * The methods of each path are noted as routes are added: register this
 * before the routes.
 */
const unroutedPlugin: FastifyPluginCallback<UnroutedOptions> = (app, { callers }, done) => {
  // Methods per path, for 405 and OPTIONS.
  const methodsByPath = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    const methods = methodsByPath.get(route.url) ?? new Set<string>();
    for (const method of [route.method].flat()) {
      methods.add(method);
      if (method === 'GET') methods.add('HEAD');
    }
    methods.add('OPTIONS');
    methodsByPath.set(route.url, methods);
  });

  const answerUnrouted = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const path = request.url.split('?')[0]!;
    // OPTIONS * (RFC 9110 §9.3.7) asks about the server as a whole.
    const methods = path === '*' && request.method === 'OPTIONS' ? new Set([...methodsByPath.values()].flatMap((set) => [...set])) : methodsByPath.get(path);
    if (methods !== undefined) {
      const allow = [...methods].sort().join(', ');
      if (request.method === 'OPTIONS') return reply.code(204).header('allow', allow).send();
      const error = new NetintelError('usage', `${path} does not answer ${request.method}; it answers ${allow}`, { details: { allow: [...methods].sort() } });
      return reply.code(405).header('allow', allow).header('content-type', PROBLEM_CONTENT_TYPE).send(JSON.stringify(problemOf(error, { status: 405, instance: path })));
    }
    const error = new NetintelError('not_found', `no endpoint ${request.method} ${path}; the API is described at /docs and /openapi.json`);
    return reply.code(404).header('content-type', PROBLEM_CONTENT_TYPE).send(JSON.stringify(problemOf(error, { instance: path })));
  };
  // Decided before the body is read: a body no route would read cannot turn a 405 or 404 into a 400 or 415.
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.is404) return done();
    answerUnrouted(request, reply);
  });
  app.setNotFoundHandler(answerUnrouted);

  // CONNECT (a proxy's method) reaches no route: Node hands its socket over. 405 on a path the API has, else 404.
  app.server.on('connect', (request: IncomingMessage, socket: Socket) => {
    socket.on('error', () => {});
    const path = safePath(request.url) ?? String(request.url ?? '');
    const methods = methodsByPath.get(path);
    const allow = methods === undefined ? null : [...methods].sort().join(', ');
    const problem =
      allow === null
        ? new NetintelError('not_found', `no endpoint CONNECT ${path}; the API is described at /docs and /openapi.json`)
        : new NetintelError('usage', `${path} does not answer CONNECT; it answers ${allow}`, { details: { allow: allow.split(', ') } });
    const status = allow === null ? 404 : 405;
    answerOnSocket(callers, socket, {
      status,
      reason: allow === null ? 'Not Found' : 'Method Not Allowed',
      body: JSON.stringify(problemOf(problem, { status, instance: path })),
      headers: allow === null ? {} : { allow },
    });
  });
  done();
};

/** 404, 405 and OPTIONS for requests no route takes (see unroutedPlugin). */
export const unrouted = fp(unroutedPlugin, { fastify: '5.x', name: 'netintel-unrouted' });
