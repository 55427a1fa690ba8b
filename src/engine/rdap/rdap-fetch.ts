import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { NetintelError } from '../../errors.js';
import { writeFileAtomically } from '../../write-file-atomically.js';
import type { EngineContext } from '../context.js';
import { guardedGet, HTTPS_FETCH_KINDS, tooLargeError, type HttpsConnectOptions } from '../http/guarded-get.js';
import { retryAfterValueMs } from '../http/retry-after.js';
import { reportStage } from '../stage.js';
import { rfc3339Time } from './rdap-record.js';

/** An RDAP answer: the object's JSON, the URL that gave it, and whether it came from the cache. */
export interface RdapAnswer {
  url: string;
  json: Record<string, unknown>;
  cached: boolean;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** An answer is kept at least this long, even when an event of it is due sooner. */
const MIN_CACHE_MS = 60 * 1000;
/** The longest Retry-After waited for within one lookup; a longer one is recorded and obeyed by later runs. */
const MAX_RETRY_WAIT_MS = 10 * 1000;
/** The longest wait a Retry-After makes later runs keep: one odd header does not stop a registry's lookups for years. */
const MAX_BACKOFF_MS = DAY_MS;
const CACHE_DIR = 'rdap-cache';

/**
 * GETs an RDAP URL (RFC 9082) over the engine's guarded HTTPS fetch (the
 * connect guard on every hop and redirect, the size cap, one deadline), or
 * answers from the data dir's cache of answers. A 404 is `not_found`
 * (RFC 9083 §6). A 429 with a Retry-After of a few seconds is waited out
 * once; a longer one is remembered for the host, and until it passes the
 * host is not asked again (RFC 9110 §10.2.3, RFC 6585 §4).
 *
 * @throws NetintelError `not_found`, `upstream` (a 429, an answer that is
 *   not a JSON object, one over the cap), and the errors of guardedGet.
 */
export async function fetchRdap(ctx: EngineContext, url: string, connect: HttpsConnectOptions | undefined): Promise<RdapAnswer> {
  const cache = ctx.dataDir === null ? null : join(ctx.dataDir, CACHE_DIR);
  if (cache !== null) {
    const kept = await readCached(cache, url, ctx.now());
    if (kept !== null) return { ...kept, cached: true };
  }
  const host = hostOf(url);
  if (cache !== null) await refuseWhileBackingOff(cache, host, url, ctx.now());
  let document = await getOnce(ctx, url, connect);
  if (document.status === 429) {
    const waitMs = retryAfterMs(document.retryAfter, ctx.now());
    if (waitMs !== null && waitMs <= Math.min(MAX_RETRY_WAIT_MS, ctx.timeoutMs)) {
      await sleep(waitMs, ctx.signal);
      document = await getOnce(ctx, url, connect);
    }
    if (document.status === 429) {
      const laterMs = retryAfterMs(document.retryAfter, ctx.now());
      if (cache !== null && laterMs !== null) await rememberBackoff(cache, host, new Date(ctx.now().getTime() + laterMs));
      throw rateLimited(url, laterMs);
    }
  }
  if (document.status === 404) throw new NetintelError('not_found', `${url} answered 404: the RDAP server has no such object`, { details: { url, status: 404 } });
  if (document.truncated) throw tooLargeError(document.final_url, HTTPS_FETCH_KINDS.rdap.maxOctets);
  const json = parseObject(document.body, document.final_url);
  if (cache !== null) await keep(cache, url, { url: document.final_url, json }, ctx.now());
  return { url: document.final_url, json, cached: false };
}

function getOnce(ctx: EngineContext, url: string, connect: HttpsConnectOptions | undefined) {
  reportStage(ctx, 'https', url, 'RDAP record');
  return guardedGet(ctx, { ...HTTPS_FETCH_KINDS.rdap, url, answerStatuses: [404, 429], ...(connect === undefined ? {} : { connect }) });
}

/** The answer's text as a JSON object (RFC 9083 §4: every answer is one). */
export function parseObject(body: Buffer, url: string): Record<string, unknown> {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new NetintelError('upstream', `${url} answered with what is not JSON: ${(error as Error).message}`, { details: { url } });
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new NetintelError('upstream', `${url} answered with JSON that is not an RDAP object`, { details: { url } });
  return json as Record<string, unknown>;
}

/**
 * Retry-After as milliseconds from now (RFC 9110 §10.2.3, read by
 * retryAfterValueMs), held to a day at most; null when absent or
 * unreadable.
 */
export function retryAfterMs(value: string | null, now: Date): number | null {
  const ms = value === null ? null : retryAfterValueMs(value, now.getTime());
  return ms === null ? null : Math.min(ms, MAX_BACKOFF_MS);
}

function rateLimited(url: string, laterMs: number | null): NetintelError {
  const when = laterMs === null ? 'without saying when to ask again' : `and asks to wait ${Math.ceil(laterMs / 1000)} s`;
  return new NetintelError('upstream', `${url} answered 429 (too many requests) ${when}`, {
    details: { url, status: 429, retry_after_seconds: laterMs === null ? null : Math.ceil(laterMs / 1000) },
  });
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new NetintelError('unreachable', 'the RDAP lookup was stopped before it ended (the work was cancelled)'));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new NetintelError('unreachable', 'the RDAP lookup was stopped before it ended (the work was cancelled)'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

function cacheFile(cache: string, key: string): string {
  return join(cache, `${createHash('sha256').update(key).digest('hex')}.json`);
}

/**
 * How long an answer is kept: a day, or less when one of its events (an
 * expiry, say) falls due sooner, so that a domain's next state is asked
 * for once it may have changed; never under a minute.
 */
export function cacheLifetimeMs(json: Record<string, unknown>, now: Date): number {
  let lifetime = DAY_MS;
  if (Array.isArray(json.events)) {
    for (const event of json.events.slice(0, 100)) {
      const date = event !== null && typeof event === 'object' ? (event as Record<string, unknown>).eventDate : undefined;
      const at = typeof date === 'string' ? rfc3339Time(date.trim()) : null;
      if (at !== null && at > now.getTime()) lifetime = Math.min(lifetime, at - now.getTime());
    }
  }
  return Math.max(MIN_CACHE_MS, lifetime);
}

/** The answer kept for `url`, with the URL that gave it (after redirects), while it is fresh. */
async function readCached(cache: string, url: string, now: Date): Promise<Omit<RdapAnswer, 'cached'> | null> {
  try {
    const kept = JSON.parse(await readFile(cacheFile(cache, url), 'utf8')) as { url?: unknown; final_url?: unknown; expires?: unknown; json?: unknown };
    if (kept.url !== url || typeof kept.expires !== 'string' || Date.parse(kept.expires) <= now.getTime()) return null;
    const finalUrl = typeof kept.final_url === 'string' ? kept.final_url : url;
    return kept.json !== null && typeof kept.json === 'object' && !Array.isArray(kept.json) ? { url: finalUrl, json: kept.json as Record<string, unknown> } : null;
  } catch {
    // No entry, or one a crash or another version left unreadable: asked afresh.
    return null;
  }
}

/** Keeps an answer; a cache that cannot be written costs the next run a fetch, not this one its answer. */
async function keep(cache: string, url: string, answer: Omit<RdapAnswer, 'cached'>, now: Date): Promise<void> {
  const expires = new Date(now.getTime() + cacheLifetimeMs(answer.json, now)).toISOString();
  try {
    await mkdir(cache, { recursive: true });
    await writeFileAtomically(cacheFile(cache, url), JSON.stringify({ url, final_url: answer.url, fetched: now.toISOString(), expires, json: answer.json }));
  } catch {
    // See above.
  }
}

async function rememberBackoff(cache: string, host: string, until: Date): Promise<void> {
  try {
    await mkdir(cache, { recursive: true });
    await writeFileAtomically(cacheFile(cache, `backoff ${host}`), JSON.stringify({ host, until: until.toISOString() }));
  } catch {
    // The next run asks, and is told again.
  }
}

async function refuseWhileBackingOff(cache: string, host: string, url: string, now: Date): Promise<void> {
  let until: number;
  try {
    const kept = JSON.parse(await readFile(cacheFile(cache, `backoff ${host}`), 'utf8')) as { host?: unknown; until?: unknown };
    until = kept.host === host && typeof kept.until === 'string' ? Date.parse(kept.until) : Number.NaN;
  } catch {
    return;
  }
  // A wait longer than any this version keeps was written by an older one: asked afresh, and told again.
  if (Number.isNaN(until) || until <= now.getTime() || until - now.getTime() > MAX_BACKOFF_MS) return;
  throw rateLimited(url, until - now.getTime());
}
