import https from 'node:https';
import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { guardedConnect, type ConnectGuard } from '../connect-guard.js';
import { NetintelError } from '../../errors.js';
import type { MailDns } from './mail-dns.js';
import { httpError } from './https-error.js';

/** How the BIMI fetches connect; tests point them at a local HTTPS server. */
export interface BimiFetchOptions {
  /** TCP port for every fetch, replacing the URL's (tests). */
  port?: number;
  /** Trusted CA certificates in PEM, replacing the system's (default: the system's). */
  ca?: string | Buffer | Array<string | Buffer>;
}

/** One HTTPS GET with redirects followed. */
export interface FetchedDocument {
  /** The URL asked first. */
  url: string;
  /** The URL that answered 200 (after redirects). */
  finalUrl: string;
  /** Each URL redirected to, in order. */
  redirects: string[];
  contentType: string | null;
  body: Buffer;
  /** True when the body was cut at `maxOctets` (it is larger). */
  truncated: boolean;
}

export interface FetchRequest {
  url: string;
  /** What is fetched, for messages and the connect guard (`BIMI logo host`). */
  what: string;
  accept: string;
  maxOctets: number;
  maxRedirects: number;
  timeoutMs: number;
  guard: ConnectGuard | null | undefined;
  options: BimiFetchOptions;
}

/**
 * GETs an HTTPS URL as the MTA-STS policy fetch does: the host's address
 * from the check's resolver (A, then AAAA), the connect guard judging that
 * address just before connecting (the SSRF rule of `netintel serve`), the
 * certificate validated for the host name. Follows HTTPS redirects up to
 * `maxRedirects` (each one judged again), stops reading at `maxOctets`.
 *
 * @throws NetintelError `upstream` (HTTP status, a redirect loop, to http:,
 *   too many), `tls`, `timeout`, `unreachable`, `not_found` (no address),
 *   `forbidden` (the guard).
 */
export async function fetchHttps(dns: MailDns, request: FetchRequest): Promise<FetchedDocument> {
  const redirects: string[] = [];
  const seen = new Set<string>([request.url]);
  let current = new URL(request.url);
  for (;;) {
    const answer = await getOnce(dns, current, request);
    if (answer.kind === 'document') return { url: request.url, finalUrl: current.href, redirects, ...answer.document };
    const next = new URL(answer.location, current);
    if (next.protocol !== 'https:') {
      throw new NetintelError('upstream', `${current.href} redirects to ${next.href}, which is not HTTPS`, { details: { url: current.href, location: next.href } });
    }
    if (seen.has(next.href)) {
      throw new NetintelError('upstream', `redirect loop: ${current.href} sends back to ${next.href}`, { details: { url: current.href, location: next.href, redirects } });
    }
    if (redirects.length >= request.maxRedirects) {
      throw new NetintelError('upstream', `more than ${request.maxRedirects} redirects from ${request.url}`, { details: { url: request.url, redirects } });
    }
    redirects.push(next.href);
    seen.add(next.href);
    current = next;
  }
}

type Answer = { kind: 'document'; document: Pick<FetchedDocument, 'contentType' | 'body' | 'truncated'> } | { kind: 'redirect'; location: string };

async function hostAddress(dns: MailDns, host: string): Promise<string> {
  if (isIP(host) !== 0) return host;
  const [a, aaaa] = await Promise.all([dns.lookup(host, 'A'), dns.lookup(host, 'AAAA')]);
  const address = a.records[0] ?? aaaa.records[0];
  if (address === undefined) throw new NetintelError('not_found', `${host} has no A or AAAA record`, { details: { host } });
  return address;
}

async function getOnce(dns: MailDns, url: URL, request: FetchRequest): Promise<Answer> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const address = await hostAddress(dns, host);
  const port = request.options.port ?? (url.port === '' ? 443 : Number(url.port));
  const connect = guardedConnect(request.guard, address, { what: request.what, name: host, port });
  const { timeoutMs, maxOctets } = request;
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | null, answer?: Answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      if (error) reject(httpError(error, host, timeoutMs));
      else resolve(answer!);
    };
    const client = https.request(
      {
        host: address,
        port,
        ...connect,
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        servername: isIP(host) === 0 ? host : undefined,
        headers: { host: url.host, 'user-agent': 'netintel', accept: request.accept },
        ...(request.options.ca === undefined ? {} : { ca: request.options.ca }),
        agent: false,
        timeout: timeoutMs,
      },
      (response: IncomingMessage) => {
        const status = response.statusCode ?? 0;
        const location = response.headers.location;
        if (status >= 300 && status < 400 && location !== undefined) {
          response.resume();
          client.destroy();
          finish(null, { kind: 'redirect', location });
          return;
        }
        if (status !== 200) {
          response.resume();
          client.destroy();
          finish(new NetintelError('upstream', `${url.href} answered HTTP ${status}`, { details: { url: url.href, status } }));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          if (settled) return;
          const room = maxOctets - size;
          size += chunk.length;
          if (size > maxOctets) {
            // Reading stops at the cap (draft §7.6 allows the limit at retrieval).
            chunks.push(chunk.subarray(0, room));
            client.destroy();
            finish(null, { kind: 'document', document: { contentType: response.headers['content-type'] ?? null, body: Buffer.concat(chunks), truncated: true } });
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () =>
          finish(null, { kind: 'document', document: { contentType: response.headers['content-type'] ?? null, body: Buffer.concat(chunks), truncated: false } }),
        );
        response.on('error', (error) => finish(error));
      },
    );
    // The socket timeout covers silence; this covers a server that drips bytes.
    const deadline = setTimeout(() => client.destroy(new NetintelError('timeout', `${url.href} did not answer within ${timeoutMs} ms`)), timeoutMs);
    client.on('timeout', () => client.destroy(new NetintelError('timeout', `no answer from ${host} (${address}) within ${timeoutMs} ms`)));
    client.on('error', (error) => finish(error));
    client.end();
  });
}
