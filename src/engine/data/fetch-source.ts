import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Writable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { NetintelError } from '../../errors.js';
import { downloadFailure, httpStatusFailure } from './download-failure.js';
import { fileErrorReason } from '../../file-error.js';

/** What is known of the installed version, for a conditional request. */
export interface Validators {
  etag: string | null;
  lastModified: string | null;
}

export interface FetchOptions {
  /** Abort when no byte (or no response) arrives for this long, in milliseconds. */
  idleTimeoutMs: number;
  /** Larger downloads are abandoned (a wrong URL, a runaway server). */
  maxBytes: number;
  userAgent: string;
  /** Ignore the validators: always download. */
  force: boolean;
  /** Bytes received so far, and the total when the server announced it. */
  onBytes?: (received: number, total: number | null) => void;
  /** How http(s) requests reach the network: the caller's proxy settings; direct when omitted. */
  network?: DownloadNetwork;
}

/** The route of downloads, which the caller builds from its environment (HTTPS_PROXY, NO_PROXY, ...). */
export interface DownloadNetwork {
  dispatcher: Dispatcher;
  /** The proxy URLs the dispatcher may use, to name a proxy in a failure. */
  proxies: readonly string[];
}

export type FetchResult =
  | { status: 'not_modified' }
  | { status: 'downloaded'; etag: string | null; lastModified: string | null; bytes: number; sha256: string };

/**
 * Downloads `url` into `target` (a path that does not exist yet, in the
 * update's work dir). http(s) requests are conditional (If-None-Match,
 * If-Modified-Since, RFC 9110 section 13); a 304 answers `not_modified`
 * and writes nothing. `file:` URLs compare size and modification time.
 * A body shorter than its Content-Length, a non-2xx status, a network
 * failure or silence beyond `idleTimeoutMs` throw (`upstream`,
 * `unreachable`, `tls`, `timeout`) with one line naming the cause and its
 * fix (download-failure.ts), the partial file left for the caller to drop.
 */
export async function fetchSource(url: string, target: string, validators: Validators, options: FetchOptions): Promise<FetchResult> {
  const parsed = new URL(url);
  if (parsed.protocol === 'file:') return copyFile(fileURLToPath(parsed), target, validators, options);
  return download(url, target, validators, options);
}

async function copyFile(path: string, target: string, validators: Validators, options: FetchOptions): Promise<FetchResult> {
  let stat;
  try {
    stat = statSync(path);
  } catch (error) {
    throw new NetintelError('unreachable', `cannot read ${path}: ${fileErrorReason(error)} (check the path and its permissions)`, { cause: error, details: { path } });
  }
  if (!stat.isFile()) throw new NetintelError('unreachable', `${path} is not a file`, { details: { path } });
  const etag = `"file-${stat.size}-${Math.trunc(stat.mtimeMs)}"`;
  if (!options.force && validators.etag === etag) return { status: 'not_modified' };
  if (stat.size > options.maxBytes) throw tooLarge(path, options.maxBytes);
  const hash = createHash('sha256');
  let bytes = 0;
  const out = createWriteStream(target, { flags: 'wx' });
  try {
    for await (const chunk of createReadStream(path)) {
      bytes += (chunk as Buffer).length;
      hash.update(chunk as Buffer);
      await write(out, chunk as Buffer);
      options.onBytes?.(bytes, stat.size);
    }
  } finally {
    await end(out);
  }
  return { status: 'downloaded', etag, lastModified: stat.mtime.toUTCString(), bytes, sha256: hash.digest('hex') };
}

async function download(url: string, target: string, validators: Validators, options: FetchOptions): Promise<FetchResult> {
  const controller = new AbortController();
  let timedOut = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, options.idleTimeoutMs);
  };
  const headers: Record<string, string> = { 'user-agent': options.userAgent, accept: '*/*' };
  if (!options.force && validators.etag) headers['if-none-match'] = validators.etag;
  if (!options.force && validators.lastModified) headers['if-modified-since'] = validators.lastModified;
  const proxies = options.network?.proxies ?? [];
  const failed = (error: unknown): NetintelError => downloadFailure(url, error, { timedOut, idleTimeoutMs: options.idleTimeoutMs, proxies });

  // undici loads here, not with the module: data status and lookups import this file's neighbours.
  const { fetch } = await import('undici');
  arm();
  let response: Awaited<ReturnType<typeof fetch>>;
  try {
    const init = { headers, signal: controller.signal, redirect: 'follow' as const };
    response = await fetch(url, options.network ? { ...init, dispatcher: options.network.dispatcher } : init);
  } catch (error) {
    clearTimeout(timer);
    throw failed(error);
  }
  if (response.status === 304) {
    clearTimeout(timer);
    await response.body?.cancel().catch(() => {});
    return { status: 'not_modified' };
  }
  if (response.status < 200 || response.status > 299) {
    clearTimeout(timer);
    await response.body?.cancel().catch(() => {});
    throw httpStatusFailure(url, response.status, response.statusText);
  }
  const lengthHeader = response.headers.get('content-length');
  // With a content coding, Content-Length counts the coded bytes, not what the body yields.
  const coded = (response.headers.get('content-encoding') ?? 'identity') !== 'identity';
  const announced = lengthHeader !== null && /^\d+$/.test(lengthHeader) && !coded ? Number(lengthHeader) : null;
  if (announced !== null && announced > options.maxBytes) {
    clearTimeout(timer);
    await response.body?.cancel().catch(() => {});
    throw tooLarge(url, options.maxBytes);
  }
  const hash = createHash('sha256');
  let bytes = 0;
  const out = createWriteStream(target, { flags: 'wx' });
  try {
    if (response.body) {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        arm();
        bytes += chunk.length;
        if (bytes > options.maxBytes) throw tooLarge(url, options.maxBytes);
        hash.update(chunk);
        await write(out, chunk);
        options.onBytes?.(bytes, announced);
      }
    }
  } catch (error) {
    controller.abort();
    const failure = failed(error);
    if (failure.code !== 'unreachable') throw failure;
    const of = announced === null ? '' : ` of ${announced}`;
    const reason = String(failure.details.reason ?? failure.message);
    throw new NetintelError('unreachable', `${url}: the download broke off after ${bytes}${of} bytes (${reason}; run the update again)`, {
      cause: error,
      details: { url, bytes, expected: announced },
    });
  } finally {
    clearTimeout(timer);
    await end(out);
  }
  if (announced !== null && bytes !== announced) {
    throw new NetintelError('upstream', `${url}: the download ended after ${bytes} of ${announced} bytes (truncated)`, { details: { url, bytes, expected: announced } });
  }
  return {
    status: 'downloaded',
    etag: response.headers.get('etag'),
    lastModified: response.headers.get('last-modified'),
    bytes,
    sha256: hash.digest('hex'),
  };
}

function tooLarge(where: string, maxBytes: number): NetintelError {
  return new NetintelError('upstream', `${where}: larger than ${Math.round(maxBytes / 2 ** 20)} MiB, abandoned`, { details: { url: where, max_bytes: maxBytes } });
}

function write(stream: Writable, chunk: Uint8Array): Promise<void> | void {
  if (stream.write(chunk)) return;
  return new Promise((resolve, reject) => {
    const onDrain = () => {
      stream.off('error', onError);
      resolve();
    };
    const onError = (error: Error) => {
      stream.off('drain', onDrain);
      reject(error);
    };
    stream.once('drain', onDrain);
    stream.once('error', onError);
  });
}

function end(stream: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    if (stream.destroyed) {
      resolve();
      return;
    }
    stream.once('error', reject);
    stream.end(() => resolve());
  });
}
