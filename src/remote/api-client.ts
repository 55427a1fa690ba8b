import { isErrorCode, NetintelError } from '../errors.js';

export interface ApiClientOptions {
  /** Base URL of a `netintel serve` (http://host:port, optionally with a path prefix). */
  server: string;
  /** Sent as X-API-Key; null for the free tier. */
  apiKey: string | null;
  /** Deadline of one HTTP exchange, in milliseconds. */
  timeoutMs: number;
  /** Retries after a 429 before giving up (default 6). */
  maxRetries?: number;
  /** A 429 asking for a longer wait than this fails at once (default 120 s): the daily allowance is spent. */
  maxWaitMs?: number;
  /** First backoff step in ms, doubled on each retry (default 500) and capped at 30 s. */
  backoffMs?: number;
  /** Waits; tests pass a fake that moves their clock. */
  sleep?: (ms: number) => Promise<void>;
  /** Uniform [0, 1), for the jitter. */
  random?: () => number;
  /** Told about each wait after a 429 (verbose diagnostics). */
  onRetry?: (waitMs: number, attempt: number, path: string) => void;
  /** The fetch to use (default the global one). */
  fetch?: typeof fetch;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

/** Talks to the API: JSON in and out, problem+json answers as NetintelErrors with their code. */
export interface ApiClient {
  readonly server: string;
  get(path: string, query?: Record<string, string | undefined>): Promise<ApiResponse>;
  post(path: string, body: unknown): Promise<ApiResponse>;
}

const sleepReal = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * An API client. On 429 it waits what X-RateLimit-RetryAfter (or
 * Retry-After) says, plus an exponentially growing random extra (full
 * jitter), so that many clients refused together do not all come back in
 * the same second; it gives up after `maxRetries`, or at once when the wait
 * would exceed `maxWaitMs`.
 */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const base = options.server.replace(/\/+$/, '');
  const maxRetries = options.maxRetries ?? 6;
  const maxWaitMs = options.maxWaitMs ?? 120_000;
  const backoffMs = options.backoffMs ?? 500;
  const sleep = options.sleep ?? sleepReal;
  const random = options.random ?? Math.random;
  const doFetch = options.fetch ?? fetch;
  let parsed: URL;
  try {
    parsed = new URL(base);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new NetintelError('usage', `--server must be an http:// or https:// URL, not ${JSON.stringify(options.server)}`, { details: { server: options.server } });
  }

  const exchange = async (method: 'GET' | 'POST', path: string, body: string | undefined): Promise<ApiResponse> => {
    const url = `${base}${path}`;
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { accept: 'application/json, application/problem+json' };
      if (options.apiKey !== null) headers['x-api-key'] = options.apiKey;
      if (body !== undefined) headers['content-type'] = 'application/json';
      let response: Response;
      let text: string;
      try {
        response = await doFetch(url, { method, headers, body, signal: AbortSignal.timeout(options.timeoutMs) });
        text = await response.text();
      } catch (error) {
        throw transportError(error, base, options.timeoutMs);
      }
      if (response.status === 429) {
        const retryAfter = Number(response.headers.get('x-ratelimit-retryafter') ?? response.headers.get('retry-after') ?? '1');
        const floorMs = (Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : 1) * 1000;
        if (attempt < maxRetries && floorMs <= maxWaitMs) {
          const waitMs = Math.round(floorMs + random() * Math.min(backoffMs * 2 ** attempt, 30_000));
          options.onRetry?.(waitMs, attempt + 1, path);
          await sleep(waitMs);
          continue;
        }
      }
      const json = parseJson(text, response.headers.get('content-type'));
      if (response.ok) {
        if (json === undefined) throw new NetintelError('upstream', `the server at ${base} answered ${path} with something other than JSON`, { details: { server: base, status: response.status } });
        return { status: response.status, headers: response.headers, body: json };
      }
      throw problemError(json, response.status, base);
    }
  };

  return {
    server: base,
    get: (path, query = {}) => {
      const search = new URLSearchParams();
      for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, value);
      const text = search.toString();
      return exchange('GET', text ? `${path}?${text}` : path, undefined);
    },
    post: (path, body) => exchange('POST', path, JSON.stringify(body)),
  };
}

function parseJson(text: string, contentType: string | null): unknown {
  if (!contentType || !/json/i.test(contentType)) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A problem+json answer as the NetintelError the server raised: same code, message and details. */
export function problemError(json: unknown, status: number, server: string): NetintelError {
  const problem = json as { code?: unknown; detail?: unknown; details?: unknown } | undefined;
  if (problem && typeof problem.code === 'string' && isErrorCode(problem.code) && typeof problem.detail === 'string') {
    const details = problem.details !== null && typeof problem.details === 'object' ? (problem.details as Record<string, unknown>) : {};
    return new NetintelError(problem.code, problem.detail, { details });
  }
  return new NetintelError(status >= 500 ? 'upstream' : 'usage', `the server at ${server} answered HTTP ${status}`, { details: { server, status } });
}

/** An item error of a bulk answer (`{code, message, details}`) as a NetintelError. */
export function itemError(error: { code: string; message: string; details?: Record<string, unknown> }): NetintelError {
  return new NetintelError(isErrorCode(error.code) ? error.code : 'internal', error.message, { details: error.details ?? {} });
}

function transportError(error: unknown, server: string, timeoutMs: number): NetintelError {
  const name = (error as Error).name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new NetintelError('timeout', `the server at ${server} did not answer within ${timeoutMs} ms`, { cause: error, details: { server, timeoutMs } });
  }
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const reason = cause?.code ?? cause?.message ?? (error as Error).message;
  return new NetintelError('unreachable', `cannot reach the netintel server at ${server}: ${reason}`, { cause: error, details: { server } });
}
