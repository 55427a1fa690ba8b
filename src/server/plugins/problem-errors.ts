import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import { NetintelError } from '../../errors.js';
import type { Callers } from '../callers.js';
import { addressSubject } from '../client-address.js';
import { PROBLEM_CONTENT_TYPE, problemOf, safePath, statusOf } from '../problem.js';
import { answerOnSocket } from '../socket-answer.js';
import { WWW_AUTHENTICATE } from './identify-caller.js';

export interface PreRoutingErrorOptions {
  callers: Callers;
  /** The connection deadlines, named in a 408's message (ms). */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

/**
 * The options of the Fastify factory for errors raised before any route:
 * by Node's parser, of the request line or headers (400, 408, 431), and of
 * the URL (400 for a bad escape, 414). Each is answered problem+json with
 * the caller's X-RateLimit-*, as every other error is.
 */
export function preRoutingErrors(options: PreRoutingErrorOptions): Pick<FastifyServerOptions, 'clientErrorHandler' | 'frameworkErrors'> {
  const { callers } = options;
  return {
    // Fastify calls it with the instance as `this`.
    clientErrorHandler: function (this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket) {
      answerClientError(this, error, socket, options);
    },
    frameworkErrors: (error, request, untypedReply) => {
      const reply = untypedReply as FastifyReply;
      request.netintel = callers.anonymousOf(request);
      const status = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : error.code === 'FST_ERR_BAD_URL' ? 400 : 500;
      const problem = status === 500 ? new NetintelError('internal', 'internal error: the server failed to route the request') : new NetintelError('usage', `invalid request: ${error.message}`);
      const path = safePath(request.raw.url);
      void callers.peekHeaders(request.netintel.subject).then((headers) => {
        reply.code(status).headers(headers).header('content-type', PROBLEM_CONTENT_TYPE).send(JSON.stringify(problemOf(problem, { status, instance: path })));
      });
    },
  };
}

/**
 * Answers an error of the request line or headers that Node's parser
 * raised before fastify saw a request (RFC 9110 statuses, problem+json,
 * the caller's X-RateLimit-* by its address), then closes the connection:
 * what follows on it cannot be parsed.
 */
function answerClientError(app: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket, options: PreRoutingErrorOptions): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, reason, message] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? ([408, 'Request Timeout', `the request was not received in time: headers within ${options.headersTimeoutMs} ms, the whole request within ${options.requestTimeoutMs} ms`] as const)
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? ([431, 'Request Header Fields Too Large', 'the request headers are too large'] as const)
        : error.code === 'HPE_INVALID_METHOD'
          ? ([400, 'Bad Request', 'the request method is not one HTTP knows'] as const)
          : ([400, 'Bad Request', `the request could not be parsed (${String(error.code ?? 'malformed')})`] as const);
  // An answer already on its way cannot be followed by another on the same connection.
  const inProgress = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (inProgress?.headersSent === true || !socket.writable) {
    socket.destroy();
    return;
  }
  app.log.debug({ err: error, client: socket.remoteAddress }, 'client error');
  const problem = new NetintelError('usage', message, { details: { parser_code: error.code ?? null } });
  // A HEAD request's answer has no body (RFC 9110 §9.3.2); the parser kept the request's first bytes.
  const head = (error as NodeJS.ErrnoException & { rawPacket?: Buffer }).rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
  answerOnSocket(options.callers, socket, { status, reason, body: head ? '' : JSON.stringify(problemOf(problem, { status })), headers: {} });
}

export interface ProblemErrorsOptions {
  callers: Callers;
  /** Named in a 413's message (bytes). */
  bodyLimit: number;
  /** Named in a 504's message (ms). */
  handlerTimeoutMs: number;
}

/**
 * Every error as an RFC 9457 problem+json body with a `code`: those of
 * routes and hooks (the error handler), and those of requests the server
 * will not take: an HTTP/1.1 request without Host (400), an Expect other
 * than 100-continue (417), a body of any media type but JSON (415).
 * A 401 carries WWW-Authenticate.
 */
const problemErrorsPlugin: FastifyPluginCallback<ProblemErrorsOptions> = (app, options, done) => {
  const { callers } = options;

  // An Expect other than 100-continue (RFC 9110 §10.1.1): 417, as Node would, but with a problem body and the headers.
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const problem = new NetintelError('usage', `the expectation ${JSON.stringify(request.headers.expect)} cannot be met; only 100-continue is`);
    const body = JSON.stringify(problemOf(problem, { status: 417, instance: safePath(request.url) }));
    const subject = addressSubject(callers.address(request.socket.remoteAddress, request.headers));
    void callers.peekHeaders(subject).then((headers) => {
      response.writeHead(417, { ...headers, 'content-type': PROBLEM_CONTENT_TYPE, 'content-length': Buffer.byteLength(body), connection: 'close' });
      response.end(body);
    });
  });

  app.addHook('onRequest', (request, reply, done) => {
    // RFC 9112 §3.2: an HTTP/1.1 request without Host is 400.
    if (request.headers.host === undefined && request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor === 1) {
      request.netintel = callers.anonymousOf(request);
      const problem = new NetintelError('usage', 'an HTTP/1.1 request needs a Host header');
      reply.code(400).header('content-type', PROBLEM_CONTENT_TYPE).header('connection', 'close').send(JSON.stringify(problemOf(problem, { instance: request.url.split('?')[0] })));
      return;
    }
    done();
  });

  // Only JSON bodies are read: any other media type (text/plain included) is 415.
  app.removeContentTypeParser(['text/plain']);

  app.setErrorHandler((error: FastifyError | NetintelError, request, reply) => {
    const { problem, status } = toProblem(error, options.bodyLimit, options.handlerTimeoutMs);
    if (status >= 500 && problem.code !== 'not_implemented') request.log.error({ err: error, path: request.url.split('?')[0] }, 'request failed');
    reply.code(status).header('content-type', PROBLEM_CONTENT_TYPE);
    // RFC 9110 §15.5.2: a 401 says how to authenticate.
    if (status === 401) reply.header('www-authenticate', WWW_AUTHENTICATE);
    return JSON.stringify(problemOf(problem, { status, instance: request.url.split('?')[0] }));
  });
  done();
};

/** Any error as a NetintelError and the status to answer with. */
function toProblem(error: FastifyError | NetintelError, bodyLimit: number, handlerTimeoutMs: number): { problem: NetintelError; status: number } {
  if (error instanceof NetintelError) return { problem: error, status: statusOf(error.code) };
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    return { problem: new NetintelError('usage', `invalid request: ${fastifyError.message}`, { details: { context: fastifyError.validationContext } }), status: 400 };
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { problem: new NetintelError('usage', `the request body is larger than ${bodyLimit} bytes`, { details: { limit_bytes: bodyLimit } }), status: 413 };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { problem: new NetintelError('usage', 'the request body must be application/json'), status: 415 };
    case 'FST_ERR_HANDLER_TIMEOUT':
      return { problem: new NetintelError('timeout', `the request took longer than ${handlerTimeoutMs} ms`, { details: { timeout_ms: handlerTimeoutMs } }), status: 504 };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { problem: new NetintelError('usage', 'the request body is empty, but its content-type is application/json'), status: 400 };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { problem: new NetintelError('usage', 'the request body is not valid JSON'), status: 400 };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { problem: new NetintelError('usage', 'the request body does not match its Content-Length'), status: 400 };
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // Fastify's own words start a sentence; the message says what was refused first, in the case of every message.
    return { problem: new NetintelError('usage', `the request was refused (${fastifyError.code}): ${fastifyError.message}`), status };
  }
  return { problem: new NetintelError('internal', 'internal error: the server failed to answer; it has been logged'), status: 500 };
}

/** Errors as problem+json (see problemErrorsPlugin). */
export const problemErrors = fp(problemErrorsPlugin, { fastify: '5.x', name: 'netintel-problem-errors' });
