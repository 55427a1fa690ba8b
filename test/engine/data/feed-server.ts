/**
 * A local HTTP server on 127.0.0.1 (port 0) serving fixture feeds the way
 * publishers do: ETag and Last-Modified with 304 answers to conditional
 * requests, and on demand a failure (status), a body cut short of its
 * Content-Length, or a body that stalls half-way (to kill a client mid-download).
 */
import { createServer, type IncomingHttpHeaders, type RequestListener, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { gzipSync } from 'node:zlib';

export interface Route {
  body: string | Buffer;
  etag?: string | null;
  lastModified?: string | null;
  /** Answer with this status and a short HTML page instead. */
  status?: number;
  /** Announce the whole length, send half, then close the connection. */
  truncate?: boolean;
  /** Send half of the body, then send nothing more (the connection stays open). */
  stall?: boolean;
  /** Send the body gzip-coded (Content-Encoding: gzip). */
  contentEncodingGzip?: boolean;
}

export interface FeedServer {
  url(path: string): string;
  set(path: string, route: Route): void;
  /** Every request so far: path and headers. */
  requests: Array<{ path: string; headers: IncomingHttpHeaders }>;
  /** Resolves when a request for the path arrives. */
  requested(path: string): Promise<void>;
  close(): Promise<void>;
}

/** With `tls`, the server speaks https with that certificate (issue one for 127.0.0.1 under a test CA). */
export async function startFeedServer(options: { tls?: { cert: string; key: string } } = {}): Promise<FeedServer> {
  const routes = new Map<string, Route>();
  const requests: FeedServer['requests'] = [];
  const waiters: Array<{ path: string; resolve: () => void }> = [];
  const sockets = new Set<Socket>();
  const handler: RequestListener = (request, response) => {
    const path = (request.url ?? '/').split('?')[0]!;
    requests.push({ path, headers: request.headers });
    for (const waiter of waiters.filter((w) => w.path === path)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    const route = routes.get(path);
    if (!route) {
      response.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>not found</body></html>');
      return;
    }
    if (route.status !== undefined) {
      response.writeHead(route.status, { 'content-type': 'text/html' }).end(`<html><body>${route.status}</body></html>`);
      return;
    }
    const headers: Record<string, string> = { 'content-type': 'application/octet-stream' };
    if (route.etag) headers.etag = route.etag;
    if (route.lastModified) headers['last-modified'] = route.lastModified;
    const inm = request.headers['if-none-match'];
    const ims = request.headers['if-modified-since'];
    if ((route.etag && inm === route.etag) || (!inm && route.lastModified && ims && Date.parse(ims) >= Date.parse(route.lastModified))) {
      response.writeHead(304, headers).end();
      return;
    }
    let body = typeof route.body === 'string' ? Buffer.from(route.body) : route.body;
    if (route.contentEncodingGzip) {
      body = gzipSync(body);
      headers['content-encoding'] = 'gzip';
    }
    headers['content-length'] = String(body.length);
    response.writeHead(200, headers);
    if (route.truncate) {
      response.write(body.subarray(0, body.length >> 1), () => response.socket?.destroy());
      return;
    }
    if (route.stall) {
      response.write(body.subarray(0, body.length >> 1));
      return;
    }
    response.end(body);
  };
  const server: Server = options.tls ? createTlsServer({ cert: options.tls.cert, key: options.tls.key }, handler) : createServer(handler);
  server.on(options.tls ? 'secureConnection' : 'connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}${path}`,
    set: (path, route) => routes.set(path, route),
    requests,
    requested: (path) => new Promise((resolve) => waiters.push({ path, resolve })),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** `count` distinct /24 CIDRs under `firstOctet`.0.0.0/8, one per line (fixture data). */
export function cidrLines(count: number, firstOctet = 45): string {
  return Array.from({ length: count }, (_, i) => `${firstOctet}.${(i >> 8) & 255}.${i & 255}.0/24`).join('\n') + '\n';
}
