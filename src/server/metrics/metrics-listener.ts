import { createServer, type Server } from 'node:http';
import type { ServerMetrics } from './server-metrics.js';

/** The metrics endpoint, listening. */
export interface MetricsListener {
  /** `http://host:port/metrics`. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * GET /metrics on an address of its own (`serve --metrics-port`, on
 * 127.0.0.1 unless `--metrics-host` says otherwise), never on the API's
 * port: the figures name routes, plans and resolvers, which are the
 * operator's business, and a scrape must not count against any caller's
 * limits. Anything but GET or HEAD /metrics is 404 or 405.
 */
export async function listenForMetrics(metrics: ServerMetrics, host: string, port: number): Promise<MetricsListener> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: the metrics are at /metrics\n');
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('method not allowed\n');
      return;
    }
    metrics.scrape().then(
      ({ contentType, text }) => response.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' }).end(request.method === 'HEAD' ? undefined : text),
      (error: Error) => response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`the metrics could not be collected: ${error.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const bound = typeof address === 'object' && address !== null ? address : { address: host, port };
  const shown = bound.address.includes(':') ? `[${bound.address}]` : bound.address;
  return {
    url: `http://${shown}:${bound.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
