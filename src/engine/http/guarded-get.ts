import { ipVersionOf } from '../address/ip-text.js';
import { pipeline, Transform, type Readable } from 'node:stream';
import type { EngineContext } from '../context.js';
import { createMailDns, type MailDns } from '../mail/mail-dns.js';
import { NetintelError } from '../../errors.js';
import { byteSizeText } from '../../byte-size.js';
import { ACCEPTED_CODINGS, decoderFor } from './content-coding.js';
import { httpsFailure, type FetchPlace } from './https-failure.js';

/**
 * What one kind of outward fetch is allowed: what its host is called (for
 * the connect guard and messages), what it asks for, how much of the body
 * it reads and how many redirects it follows.
 */
export interface HttpsFetchKind {
  /** The host's role, as the connect guard and messages name it: `MTA-STS policy host`. */
  what: string;
  /** The Accept header. */
  accept: string;
  /** Most octets of the body read (after content decoding, and on the wire); reading stops there and `truncated` is set. */
  maxOctets: number;
  /** Redirects followed, each to HTTPS only and each judged by the connect guard; 0: a 3xx answer is an error. */
  maxRedirects: number;
  /** Why no redirect is followed, quoted in the error of a 3xx answer when `maxRedirects` is 0. */
  redirectRule: string | null;
}

/** The engine's outward HTTPS fetches and their limits; the deadline of each is the context's `timeoutMs`. */
export const HTTPS_FETCH_KINDS = {
  /** RFC 8461 §3.3: 3xx redirects must not be followed; 64 kilobytes is its suggested largest policy. */
  mtaStsPolicy: { what: 'MTA-STS policy host', accept: 'text/plain', maxOctets: 64 * 1024, maxRedirects: 0, redirectRule: 'RFC 8461 §3.3' },
  /** BIMI draft §7.6: receivers are advised to accept logos up to 32 KiB. */
  bimiLogo: { what: 'BIMI logo host', accept: 'image/svg+xml', maxOctets: 32 * 1024, maxRedirects: 3, redirectRule: null },
  /** A PEM chain with its embedded logo stays well under this. */
  bimiCertificate: {
    what: 'BIMI certificate host',
    accept: 'application/pem-certificate-chain, application/x-pem-file, */*',
    maxOctets: 256 * 1024,
    maxRedirects: 3,
    redirectRule: null,
  },
  /** RFC 9083 answers of registries and registrars: a large network's record with its entities stays well under 1 MiB. */
  rdap: { what: 'RDAP server', accept: 'application/rdap+json, application/json', maxOctets: 1024 * 1024, maxRedirects: 3, redirectRule: null },
} as const satisfies Record<string, HttpsFetchKind>;

/** How the fetches connect; tests point them at a local HTTPS server and trust its CA. */
export interface HttpsConnectOptions {
  /** TCP port for every hop, replacing the URL's (tests; default the URL's, else 443). */
  port?: number;
  /** Trusted CA certificates in PEM, replacing the system's (default: the system's). */
  ca?: string | Buffer | Array<string | Buffer>;
}

export interface GuardedGetRequest extends HttpsFetchKind {
  /** An https: URL. */
  url: string;
  /** Deadline of the whole fetch in milliseconds: every hop's address lookup, connection, TLS, headers and body (default: the context's `timeoutMs`). */
  deadlineMs?: number;
  connect?: HttpsConnectOptions;
  /** Where host names are resolved (default: the context's resolvers, through a MailDns of its own). */
  dns?: Pick<MailDns, 'lookup'>;
  /** HTTP statuses besides 200 whose answer is returned as a document rather than thrown (RDAP's 404 and 429). */
  answerStatuses?: readonly number[];
}

/** One HTTPS GET that ended in a 200 answer. */
export interface HttpsDocument {
  /** The URL asked first. */
  url: string;
  /** The URL that answered 200, or one of `answerStatuses` (after redirects). */
  final_url: string;
  /** The HTTP status of the answer: 200, or one of the request's `answerStatuses`. */
  status: number;
  /** The Retry-After header of the answer, as sent, or null. */
  retryAfter: string | null;
  /** Each URL redirected to, in order. */
  redirects: string[];
  contentType: string | null;
  /** The Content-Encoding the body came with (already decoded in `body`), null for none. */
  contentEncoding: string | null;
  /** The body, decoded; at most `maxOctets`. */
  body: Buffer;
  /**
   * True when the body is larger than `maxOctets`, decoded or as sent:
   * reading stopped there, and `body` holds what was decoded by then (the
   * first `maxOctets` of a plain body; less, even nothing, of a coded one).
   */
  truncated: boolean;
}

/**
 * The engine's one HTTPS GET for a document a domain points to (the
 * MTA-STS policy, the BIMI logo and Mark Certificate). For each hop: the
 * host's address from the check's resolvers (A, then AAAA), the context's
 * connect guard judging that address just before connecting to it (the
 * SSRF rule of `netintel serve`; a redirect to a private address is
 * refused like a first hop), TLS with the certificate validated for the
 * host name, then undici's HTTP/1.1 client. One deadline covers the whole
 * fetch, so a peer that drips its headers or body a byte at a time ends at
 * the deadline, not at an idle timer it keeps resetting. The body is read
 * up to `maxOctets`, decoded from gzip, deflate or br as it arrives and
 * capped after decoding too (a small compressed body cannot inflate beyond
 * the cap). No proxy: a proxy would connect to the host, and the guard must
 * judge the address that is connected to.
 *
 * Every failure carries `details.redirects` (see {@link redirectsOf}).
 *
 * @throws NetintelError `timeout` (the deadline), `upstream` (an HTTP status
 *   other than 200, a redirect not followed, to http:, a loop, too many, a
 *   coding it cannot decode, an answer that is not HTTP), `tls`,
 *   `unreachable` (refused, reset, closed early; also when `ctx.signal`
 *   stops the fetch), `not_found` (a host without address), `forbidden` (the
 *   connect guard), and the DNS errors of the lookup.
 */
export async function guardedGet(ctx: EngineContext, request: GuardedGetRequest): Promise<HttpsDocument> {
  const deadlineMs = request.deadlineMs ?? ctx.timeoutMs;
  const dns = request.dns ?? createMailDns(ctx);
  const redirects: string[] = [];
  const place: FetchPlace & { phase: string } = { url: request.url, host: '', address: null, bodyOctets: null, phase: 'before connecting' };
  const deadline = startDeadline(
    deadlineMs,
    ctx.signal,
    () =>
      new NetintelError('timeout', `no complete answer from ${place.url} within ${deadlineMs} ms (stopped ${stoppedAt(place)})`, {
        details: { url: place.url, host: place.host, timeout_ms: deadlineMs, body_octets: place.bodyOctets },
      }),
    () => new NetintelError('unreachable', `the fetch of ${place.url} was stopped before it ended (the work was cancelled)`, { details: { url: place.url } }),
  );
  try {
    let current = httpsUrl(request.url);
    const seen = new Set<string>([current.href]);
    for (;;) {
      place.url = current.href;
      const answer = await getOnce(ctx, dns, current, request, place, deadline, deadlineMs);
      if (answer.kind === 'document') return { url: request.url, final_url: current.href, redirects, ...answer.document };
      const next = redirectTarget(current, answer.location);
      if (request.maxRedirects === 0) {
        throw new NetintelError(
          'upstream',
          `${current.href} answered HTTP ${answer.status} (a redirect to ${next?.href ?? JSON.stringify(answer.location)}); redirects are not followed (${request.redirectRule ?? 'no redirects for this fetch'})`,
          { details: { url: current.href, status: answer.status, location: answer.location } },
        );
      }
      if (next === null) {
        throw new NetintelError('upstream', `${current.href} redirects to ${JSON.stringify(answer.location.slice(0, 200))}, which is not a URL`, {
          details: { url: current.href, location: answer.location },
        });
      }
      if (next.protocol !== 'https:') {
        throw new NetintelError('upstream', `${current.href} redirects to ${next.href}, which is not HTTPS`, { details: { url: current.href, location: next.href } });
      }
      if (seen.has(next.href)) throw new NetintelError('upstream', `redirect loop: ${current.href} sends back to ${next.href}`, { details: { url: current.href, location: next.href } });
      if (redirects.length >= request.maxRedirects) {
        throw new NetintelError('upstream', `more than ${request.maxRedirects} redirects from ${request.url}`, { details: { url: current.href, location: next.href } });
      }
      redirects.push(next.href);
      seen.add(next.href);
      current = next;
    }
  } catch (error) {
    throw withRedirects(httpsFailure(error, place), request.url, redirects);
  } finally {
    deadline.stop();
  }
}

/** The redirects a failed {@link guardedGet} had followed before it failed (empty for other errors). */
export function redirectsOf(error: unknown): string[] {
  const redirects = error instanceof NetintelError ? error.details.redirects : undefined;
  return Array.isArray(redirects) ? redirects.filter((item): item is string => typeof item === 'string') : [];
}

/** The error of a document larger than its fetch's cap (`truncated`), naming the cap in the unit people read. */
export function tooLargeError(url: string, maxOctets: number): NetintelError {
  return new NetintelError('upstream', `${url} is larger than the ${byteSizeText(maxOctets)} limit`, { details: { url, limit_octets: maxOctets } });
}

type Answer =
  | { kind: 'document'; document: Pick<HttpsDocument, 'status' | 'retryAfter' | 'contentType' | 'contentEncoding' | 'body' | 'truncated'> }
  | { kind: 'redirect'; status: number; location: string };

interface Deadline {
  /** Aborted when the deadline passes or the context's signal aborts, with the error as reason. */
  signal: AbortSignal;
  /** `work`, or the deadline's error if that comes first (`work` then settles unobserved). */
  race<T>(work: Promise<T>): Promise<T>;
  /** Runs `stop` with the deadline's error when it passes (at once if it has). */
  onExpiry(stop: (error: NetintelError) => void): void;
  stop(): void;
}

async function getOnce(
  ctx: EngineContext,
  dns: Pick<MailDns, 'lookup'>,
  url: URL,
  request: GuardedGetRequest,
  place: FetchPlace & { phase: string },
  deadline: Deadline,
  deadlineMs: number,
): Promise<Answer> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  place.host = host;
  place.address = null;
  place.bodyOctets = null;
  place.phase = `while resolving ${host}`;
  const address = ipVersionOf(host) !== 0 ? host : await deadline.race(firstAddress(dns, host));
  place.address = address;
  const port = request.connect?.port ?? (url.port === '' ? 443 : Number(url.port));
  // The address judged is the one connected to: undici is given it, not the name.
  ctx.connectGuard?.(address, { what: request.what, name: host, port });
  const { Client } = await deadline.race(import('undici'));
  // The library's own timers stay out of the way: the deadline ends the fetch (these are backstops).
  const backstopMs = Math.ceil(deadlineMs) + 1000;
  const client = new Client(`https://${ipVersionOf(address) === 6 ? `[${address}]` : address}:${port}`, {
    connect: { timeout: backstopMs, ...(request.connect?.ca === undefined ? {} : { ca: request.connect.ca }) },
    headersTimeout: backstopMs,
    bodyTimeout: backstopMs,
    pipelining: 1,
  });
  deadline.onExpiry((error) => void client.destroy(error).catch(() => {}));
  place.phase = `while connecting to ${address === host ? host : `${host} (${address})`}`;
  client.once('connect', () => {
    place.phase = 'before the headers were complete';
  });
  try {
    const response = await deadline.race(
      client.request({
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        // undici takes the TLS server name (SNI, and the name the certificate is checked for) from Host.
        headers: { host: url.host, 'user-agent': 'netintel', accept: request.accept, 'accept-encoding': ACCEPTED_CODINGS },
        signal: deadline.signal,
      }),
    );
    // Stopping a body early (a redirect, the cap, the deadline) makes undici emit an abort error;
    // the fetch's outcome is already known then, and a real failure still reaches the reader.
    response.body.on('error', () => {});
    const status = response.statusCode;
    const location = headerText(response.headers.location);
    if (status >= 300 && status < 400 && location !== null) {
      response.body.destroy();
      return { kind: 'redirect', status, location };
    }
    if (status !== 200 && !(request.answerStatuses ?? []).includes(status)) {
      response.body.destroy();
      throw new NetintelError('upstream', `${url.href} answered HTTP ${status}`, { details: { url: url.href, status } });
    }
    const contentType = headerText(response.headers['content-type']);
    const contentEncoding = headerText(response.headers['content-encoding']);
    const decoder = decoderFor(contentEncoding, url.href);
    place.bodyOctets = 0;
    place.phase = 'in the body';
    const read = await deadline.race(readCapped(response.body, decoder, request.maxOctets, place));
    const retryAfter = headerText(response.headers['retry-after']);
    return { kind: 'document', document: { status, retryAfter, contentType, contentEncoding: decoder === null ? null : contentEncoding, ...read } };
  } finally {
    void client.destroy().catch(() => {});
  }
}

/**
 * Reads at most `maxOctets` of the body, through `decoder` when the body is
 * content-coded; past the cap (decoded, or on the wire) it stops reading and
 * says `truncated`. `place.bodyOctets` follows the octets received.
 */
async function readCapped(
  body: Readable,
  decoder: ReturnType<typeof decoderFor>,
  maxOctets: number,
  place: FetchPlace,
): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let wireOver = false;
  let source: AsyncIterable<Buffer> = body;
  if (decoder !== null) {
    let wire = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        wire += chunk.length;
        place.bodyOctets = wire;
        if (wire > maxOctets) {
          wireOver = true;
          done(new Error('wire cap'));
        } else {
          done(null, chunk);
        }
      },
    });
    // Errors reach the loop below through the decoder's iterator.
    source = pipeline(body, counter, decoder, () => {});
  }
  try {
    for await (const chunk of source) {
      if (decoder === null) place.bodyOctets = size + chunk.length;
      const room = maxOctets - size;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        return { body: Buffer.concat(chunks), truncated: true };
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  } catch (error) {
    if (wireOver) return { body: Buffer.concat(chunks), truncated: true };
    const code = (error as NodeJS.ErrnoException).code ?? '';
    // zlib's errors (Z_DATA_ERROR, Z_BUF_ERROR; brotli's ERR__ERROR_*) carry a negative errno.
    if (decoder !== null && typeof (error as NodeJS.ErrnoException).errno === 'number' && /^(Z_|ERR__|ERR_BROTLI)/.test(code)) {
      throw new NetintelError('upstream', `the content-coded body does not decode: ${(error as Error).message}`, { cause: error, details: { reason: code } });
    }
    throw error;
  }
  return { body: Buffer.concat(chunks), truncated: false };
}

async function firstAddress(dns: Pick<MailDns, 'lookup'>, host: string): Promise<string> {
  const [a, aaaa] = await Promise.all([dns.lookup(host, 'A'), dns.lookup(host, 'AAAA')]);
  const address = a.records[0] ?? aaaa.records[0];
  if (address === undefined) throw new NetintelError('not_found', `${host} has no A or AAAA record`, { details: { host } });
  return address;
}

function httpsUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new NetintelError('invalid_input', `${JSON.stringify(text.slice(0, 200))} is not a URL`, { details: { url: text } });
  }
  if (url.protocol !== 'https:') throw new NetintelError('invalid_input', `${url.href} is not an HTTPS URL`, { details: { url: url.href } });
  return url;
}

function redirectTarget(from: URL, location: string): URL | null {
  try {
    return new URL(location, from);
  } catch {
    return null;
  }
}

function headerText(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

function stoppedAt(place: FetchPlace & { phase: string }): string {
  return place.bodyOctets === null ? place.phase : `after ${place.bodyOctets} octets of the body`;
}

function withRedirects(error: NetintelError, url: string, redirects: readonly string[]): NetintelError {
  return new NetintelError(error.code, error.message, { cause: error.cause ?? error, details: { ...error.details, start_url: url, redirects: [...redirects] } });
}

/** One timer for the whole fetch; the context's signal (a server shutting down) ends it early. */
function startDeadline(ms: number, signal: AbortSignal | undefined, expired: () => NetintelError, stopped: () => NetintelError): Deadline {
  const controller = new AbortController();
  const stops: Array<(error: NetintelError) => void> = [];
  let reject: (error: NetintelError) => void = () => {};
  const passed = new Promise<never>((_, fail) => {
    reject = fail;
  });
  passed.catch(() => {});
  const fire = (error: NetintelError) => {
    if (controller.signal.aborted) return;
    controller.abort(error);
    reject(error);
    for (const stop of stops.splice(0)) stop(error);
  };
  const timer = setTimeout(() => fire(expired()), ms);
  const onAbort = () => fire(stopped());
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();
  return {
    signal: controller.signal,
    race: (work) => {
      work.catch(() => {});
      return Promise.race([work, passed]);
    },
    onExpiry: (stop) => {
      if (controller.signal.aborted) stop(controller.signal.reason as NetintelError);
      else stops.push(stop);
    },
    stop: () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    },
  };
}
