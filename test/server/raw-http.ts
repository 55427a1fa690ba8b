/**
 * HTTP over raw sockets for tests of what a client library would not send
 * or would hide: malformed request lines, missing Host, slow senders, the
 * headers of an answer exactly as they came.
 */
import { connect, type Socket } from 'node:net';
import { expect } from 'vitest';

export interface RawResult {
  /** Everything the server sent. */
  text: string;
  /** ms from the connection to its end. */
  ms: number;
  /** How it ended: the server closed it, or reset it. */
  ended: 'end' | 'reset';
}

export function openSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Sends `data` on a new connection and collects what comes back until the server ends it. */
export async function raw(port: number, data: string | Buffer): Promise<RawResult> {
  const socket = await openSocket(port);
  return collect(socket, data);
}

export function collect(socket: Socket, data?: string | Buffer): Promise<RawResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    socket.removeAllListeners('error');
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('error', () => resolve({ text: Buffer.concat(chunks).toString('latin1'), ms: performance.now() - started, ended: 'reset' }));
    socket.once('close', () => resolve({ text: Buffer.concat(chunks).toString('latin1'), ms: performance.now() - started, ended: 'end' }));
    if (data !== undefined) socket.write(data);
  });
}

export interface Parsed {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export function parse(text: string): Parsed {
  const [head, ...rest] = text.split('\r\n\r\n');
  const [statusLine, ...lines] = head!.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine!.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
}

/** A problem+json answer of `status` with the rate-limit headers; returns its body. */
export function expectProblem(response: Parsed, status: number): Record<string, unknown> {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(response.headers[name], name).toMatch(/^\d+$/);
  const body = JSON.parse(response.body) as Record<string, unknown>;
  expect(body).toMatchObject({ status, type: expect.any(String), title: expect.any(String), detail: expect.any(String), code: expect.any(String) });
  return body;
}

export const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
