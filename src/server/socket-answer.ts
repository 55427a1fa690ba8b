import type { Socket } from 'node:net';
import type { Callers } from './callers.js';
import { addressSubject } from './client-address.js';
import { PROBLEM_CONTENT_TYPE } from './problem.js';

/** A whole answer written on a bare socket: a problem+json body and any headers of its own. */
export interface SocketAnswer {
  status: number;
  reason: string;
  body: string;
  headers: Record<string, string>;
}

/**
 * Writes a whole answer on a socket no fastify request owns (Node's parser
 * refused the request, or a CONNECT), with the caller's X-RateLimit-*,
 * then closes the connection.
 */
export function answerOnSocket(callers: Callers, socket: Socket, answer: SocketAnswer): void {
  void callers.peekHeaders(addressSubject(callers.address(socket.remoteAddress, {}))).then((limitHeaders) => {
    if (socket.destroyed || !socket.writable) return;
    const lines = [`HTTP/1.1 ${answer.status} ${answer.reason}`, `content-type: ${PROBLEM_CONTENT_TYPE}`, `content-length: ${Buffer.byteLength(answer.body)}`, 'connection: close'];
    for (const [name, value] of Object.entries({ ...limitHeaders, ...answer.headers })) lines.push(`${name}: ${value}`);
    socket.end(`${lines.join('\r\n')}\r\n\r\n${answer.body}`);
    // Ends the connection even if the client never reads the answer.
    setTimeout(() => socket.destroy(), 1000).unref();
  });
}
