import { NetintelError, peerErrorCode, type ErrorCode } from '../errors.js';
import type { AnswerCheck, ExpectedAnswer } from './answer-check.js';
import { discardBody, readCappedBody } from './capped-body.js';
import { byteSizeText } from '../byte-size.js';
import { REMOTE_LIMITS } from './remote-limits.js';
import { retryAfterOf } from './retry-after.js';

export interface ApiClientOptions {
  /** Base URL of a `netintel serve` (http://host:port, optionally with a path prefix). */
  server: string;
  /** Sent as X-API-Key, to the server's origin only; null for the free tier. */
  apiKey: string | null;
  /**
   * Deadline of one call, in milliseconds: connecting, sending, redirects,
   * the waits after a 429 and their retries, and reading the whole answer.
   */
  timeoutMs: number;
  /** Checks each answer against the schema the published API gives it. */
  answers: AnswerCheck;
  /** Retries after a 429 before giving up (default REMOTE_LIMITS.retries). */
  maxRetries?: number;
  /** A 429 asking for a longer wait than this fails at once (default REMOTE_LIMITS.maxWaitMs): the daily allowance is spent. */
  maxWaitMs?: number;
  /** First backoff step in ms, doubled on each retry (default 500) and capped at 30 s. */
  backoffMs?: number;
  /** Waits; tests pass a fake that moves their clock. */
  sleep?: (ms: number) => Promise<void>;
  /** The clock of the deadline, in ms (default Date.now); tests move it with their sleep. */
  now?: () => number;
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
  /** GET `path`; the answer must be `expected` (default: what the published API says the path answers). */
  get(path: string, query?: Record<string, string | undefined>, expected?: ExpectedAnswer): Promise<ApiResponse>;
  /** POST `body` as JSON to `path`; the answer must be `expected` (default as for get). */
  post(path: string, body: unknown, expected?: ExpectedAnswer): Promise<ApiResponse>;
}

const sleepReal = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Statuses whose Location is followed (RFC 9110 §15.4). */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Longest problem detail passed on; a server's own messages are far shorter. */
const MAX_DETAIL_CHARS = 1000;

/**
 * An API client. Each call has one deadline for all of it. The key goes to
 * the server's origin only: a redirect to another scheme, host or port is
 * refused, one within the origin followed at most REMOTE_LIMITS.redirects
 * times. Bodies are read up to a cap (a record's answer, a bulk answer, an
 * error's), parsed, bounded in depth and checked against the published
 * schema before anyone reads them.
 *
 * On 429 it waits what X-RateLimit-RetryAfter (or Retry-After) says, plus
 * an exponentially growing random extra (full jitter), so that many clients
 * refused together do not all come back in the same second; it gives up
 * with `rate_limited` after `maxRetries`, or at once when the wait would
 * pass `maxWaitMs` or the call's deadline.
 */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const base = options.server.replace(/\/+$/, '');
  const maxRetries = options.maxRetries ?? REMOTE_LIMITS.retries;
  const maxWaitMs = options.maxWaitMs ?? REMOTE_LIMITS.maxWaitMs;
  const backoffMs = options.backoffMs ?? 500;
  const sleep = options.sleep ?? sleepReal;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const doFetch = options.fetch ?? fetch;
  const origin = serverOrigin(options.server, base);

  // The failures of calls that got no answer at all; an error the server answered with (a 504 problem document
  // of code `timeout`) is an answer.
  const unanswered = new WeakSet<NetintelError>();
  const call = async (method: 'GET' | 'POST', path: string, body: string | undefined, expected: ExpectedAnswer): Promise<ApiResponse> => {
    const started = now();
    const deadline = AbortSignal.timeout(options.timeoutMs);
    const left = () => options.timeoutMs - (now() - started);
    let url = `${base}${path}`;
    let redirects = 0;
    let attempt = 0;
    for (;;) {
      const headers: Record<string, string> = { accept: 'application/json, application/problem+json' };
      if (options.apiKey !== null) headers['x-api-key'] = options.apiKey;
      if (method === 'POST') headers['content-type'] = 'application/json';
      const progress = { octets: 0 };
      const sent = now();
      let response: Response;
      try {
        // Redirects are ours to judge: fetch would carry the key to any host a Location names.
        response = await doFetch(url, { method, headers, body, redirect: 'manual', signal: deadline });
      } catch (error) {
        // No answer at all (refused, reset, no headers before the deadline): the server may be down.
        const failure = transportError(error, base, path, options.timeoutMs, null);
        unanswered.add(failure);
        throw failure;
      }

      if (REDIRECTS.has(response.status) && response.headers.has('location')) {
        await discardBody(response);
        const next = redirectTarget(response, url, origin, base, path, method);
        if (++redirects > REMOTE_LIMITS.redirects) {
          throw new NetintelError('upstream', `the server at ${base} redirected ${path} more than ${REMOTE_LIMITS.redirects} times`, {
            details: { server: base, path, redirects: REMOTE_LIMITS.redirects },
          });
        }
        url = next;
        continue;
      }

      if (response.status === 429) {
        // A retry needs time for its own answer: as long as this refusal took to come.
        const answerMs = now() - sent;
        const wait = retryAfterOf(response.headers, now());
        const problem = await problemOf(response, progress, base, path, options.timeoutMs);
        const asked = wait?.ms ?? null;
        // Without a usable wait, the client's own exponential backoff (docs/api.md, Plans and limits).
        const floorMs = asked ?? backoffMs * 2 ** attempt;
        const refusal = (why: string) => rateLimited(problem, base, path, wait?.text ?? null, why);
        const unusable = wait === null ? 'gave no Retry-After' : `sent Retry-After: ${wait.text}, which is not a wait`;
        const remaining = `the ${Math.max(0, Math.round(left()))} ms left of the ${options.timeoutMs} ms deadline`;
        // Retry-After is seconds or an HTTP-date (RFC 9110 §10.2.3).
        const waitText = wait === null ? '' : /[a-z]{2}/i.test(wait.text) ? `until ${wait.text} (${Math.round((wait.ms ?? 0) / 1000)} s)` : `${wait.text} s`;
        if (asked !== null && asked > maxWaitMs) throw refusal(`asks to wait ${waitText}, more than the ${maxWaitMs / 1000} s netintel waits`);
        if (asked !== null && asked + answerMs >= left()) throw refusal(`asks to wait ${waitText}, more than ${remaining}`);
        if (asked === null && floorMs + answerMs >= left()) throw refusal(`${unusable}, and the next backoff of ${floorMs} ms is more than ${remaining}`);
        if (attempt >= maxRetries) throw refusal(`still refused after ${maxRetries} retries${asked === null ? ` (it ${unusable})` : ''}`);
        // The jitter spreads clients refused together; it never leaves the retry too little time to be answered.
        const jittered = Math.round(floorMs + random() * Math.min(backoffMs * 2 ** attempt, 30_000));
        const waitMs = jittered + answerMs < left() ? jittered : Math.round(floorMs);
        attempt += 1;
        options.onRetry?.(waitMs, attempt, path);
        await sleep(waitMs);
        continue;
      }

      if (!response.ok) {
        const problem = await problemOf(response, progress, base, path, options.timeoutMs);
        throw problemError(problem, response.status, base);
      }

      let read;
      try {
        read = await readCappedBody(response, expected.maxOctets, progress);
      } catch (error) {
        throw transportError(error, base, path, options.timeoutMs, progress.octets);
      }
      if (read.over) {
        throw new NetintelError('upstream', `the server at ${base} sent more than ${byteSizeText(expected.maxOctets)} answering ${path}, the cap on one ${expected.name}`, {
          details: { server: base, path, limit_octets: expected.maxOctets },
        });
      }
      const json = parseJson(read.bytes, response.headers.get('content-type'));
      if (json === undefined) {
        throw new NetintelError('upstream', `the server at ${base} answered ${path} with something other than JSON`, { details: { server: base, status: response.status } });
      }
      const mismatch = options.answers.problem(expected, json);
      if (mismatch !== null) {
        throw new NetintelError('upstream', `the server's answer is not a valid ${expected.name}: ${mismatch}`, { details: { server: base, path } });
      }
      return { status: response.status, headers: response.headers, body: json };
    }
  };

  const unlessDown = whileAnswering(call, unanswered, base);
  const pathOnly = (path: string) => path.split('?')[0]!;
  return {
    server: base,
    get: (path, query = {}, expected) => {
      const search = new URLSearchParams();
      for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, value);
      const text = search.toString();
      return unlessDown('GET', text ? `${path}?${text}` : path, undefined, expected ?? options.answers.ofRoute('GET', pathOnly(path)));
    },
    post: (path, body, expected) => unlessDown('POST', path, JSON.stringify(body), expected ?? options.answers.ofRoute('POST', pathOnly(path))),
  };
}

/** The origin of a --server URL. @throws NetintelError `usage` for another scheme, a user name or password, a query. */
function serverOrigin(server: string, base: string): string {
  let parsed: URL;
  try {
    parsed = new URL(base);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new NetintelError('usage', `--server must be an http:// or https:// URL, not ${JSON.stringify(server)}`, { details: { server } });
  }
  const shown = `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  // A password in the URL would be echoed in every message naming the server; the key goes in --api-key.
  if (parsed.username !== '' || parsed.password !== '') {
    throw new NetintelError('usage', `--server must not carry a user name or password (${shown}): give the key with --api-key`, { details: { server: parsed.origin } });
  }
  // URL.search and URL.hash are empty for a bare `?` or `#`: the text tells.
  if (base.includes('?') || base.includes('#')) {
    throw new NetintelError('usage', `--server must be the server's address without a query or fragment, such as ${shown}`, { details: { server: parsed.origin } });
  }
  return parsed.origin;
}

type Call = (method: 'GET' | 'POST', path: string, body: string | undefined, expected: ExpectedAnswer) => Promise<ApiResponse>;

/**
 * `call`, until REMOTE_LIMITS.downInARow calls in a row got no answer (their
 * failures are in `unanswered`); then each call fails at once with the last
 * failure, without asking. Any answer starts the count again. A deadline
 * that passed counts only while the server has answered nothing in this
 * run: one that answers is up, and may just be slow for some targets (an
 * e-mail test of a domain whose servers do not answer it).
 */
function whileAnswering(call: Call, unanswered: WeakSet<NetintelError>, base: string): Call {
  let down = 0;
  let lastDown: NetintelError | null = null;
  let everAnswered = false;
  return async (method, path, body, expected) => {
    if (down >= REMOTE_LIMITS.downInARow && lastDown !== null) {
      throw new NetintelError(lastDown.code, `not asked: the server at ${base} did not answer ${down} calls in a row (the last: ${lastDown.message})`, { details: { server: base, path: path.split('?')[0]! } });
    }
    try {
      const response = await call(method, path, body, expected);
      down = 0;
      everAnswered = true;
      return response;
    } catch (error) {
      const noAnswer = error instanceof NetintelError && unanswered.has(error);
      if (noAnswer && (error.code !== 'timeout' || !everAnswered)) {
        down += 1;
        lastDown = error;
      } else if (!noAnswer) {
        down = 0;
        everAnswered = true;
      }
      throw error;
    }
  };
}

/**
 * Where a redirect leads, when it may be followed: within the server's
 * origin (RFC 6454: scheme, host and port), since the key is the server's
 * to see and nobody else's, and for a POST only by 307/308, which keep the
 * method and body (RFC 9110 §15.4.8, §15.4.9).
 */
function redirectTarget(response: Response, current: string, origin: string, base: string, path: string, method: string): string {
  let target: URL;
  try {
    target = new URL(response.headers.get('location')!, current);
  } catch {
    throw new NetintelError('upstream', `the server at ${base} redirected ${path} to a Location that is not a URL`, { details: { server: base, path } });
  }
  if (target.origin !== origin) {
    throw new NetintelError(
      'upstream',
      `the server at ${origin} redirected ${path} to another origin, ${target.origin}: not followed, so that the API key goes to ${origin} only; ` +
        `if the API has moved there, give that as --server`,
      { details: { server: base, path, origin, redirect_origin: target.origin } },
    );
  }
  if (method === 'POST' && response.status !== 307 && response.status !== 308) {
    throw new NetintelError('upstream', `the server at ${base} answered POST ${path} with a ${response.status} redirect, which would drop the request's body`, {
      details: { server: base, path, status: response.status },
    });
  }
  return target.href;
}

/** The JSON of a body whose Content-Type says JSON, or undefined. */
function parseJson(bytes: Buffer, contentType: string | null): unknown {
  if (!contentType || !/json/i.test(contentType)) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** The problem document of an error answer, read up to REMOTE_LIMITS.errorOctets; undefined when there is none. */
async function problemOf(response: Response, progress: { octets: number }, base: string, path: string, timeoutMs: number): Promise<unknown> {
  let read;
  try {
    read = await readCappedBody(response, REMOTE_LIMITS.errorOctets, progress);
  } catch (error) {
    throw transportError(error, base, path, timeoutMs, progress.octets);
  }
  return read.over ? undefined : parseJson(read.bytes, response.headers.get('content-type'));
}

/** A problem document's code, message and details, when it is one. */
function problemParts(json: unknown): { code: ErrorCode; detail: string; details: Record<string, unknown> } | null {
  const problem = json as { code?: unknown; detail?: unknown; details?: unknown } | null | undefined;
  if (problem === null || typeof problem !== 'object' || Array.isArray(problem)) return null;
  const code = peerErrorCode(problem.code);
  if (code === null || typeof problem.detail !== 'string') return null;
  const detail = problem.detail.length > MAX_DETAIL_CHARS ? `${problem.detail.slice(0, MAX_DETAIL_CHARS)}…` : problem.detail;
  const details = problem.details !== null && typeof problem.details === 'object' && !Array.isArray(problem.details) ? (problem.details as Record<string, unknown>) : {};
  return { code, detail, details };
}

/** A problem+json answer as the NetintelError the server raised: same code, message and details. */
export function problemError(json: unknown, status: number, server: string): NetintelError {
  const problem = problemParts(json);
  if (problem !== null) return new NetintelError(problem.code, problem.detail, { details: problem.details });
  // A 4xx is about the request; a 5xx, or a status no call of the API expects (300, 304, a 302 without Location), the server's.
  return new NetintelError(status >= 400 && status < 500 ? 'usage' : 'upstream', `the server at ${server} answered HTTP ${status}`, { details: { server, status } });
}

/** A 429 given up on: always `rate_limited`, the server's own words first when it sent a problem document. */
function rateLimited(json: unknown, server: string, path: string, retryAfter: string | null, why: string): NetintelError {
  const problem = problemParts(json);
  const said = problem?.code === 'rate_limited' ? `${problem.detail}; ` : '';
  return new NetintelError('rate_limited', `${said}rate limited by ${server} for ${path}: the server ${why}`, {
    details: { ...(problem?.code === 'rate_limited' ? problem.details : {}), server, retry_after: retryAfter },
  });
}

/** An item error of a bulk answer (`{code, message, details}`) as a NetintelError. */
export function itemError(error: { code: string; message: string; details?: Record<string, unknown> }): NetintelError {
  return new NetintelError(peerErrorCode(error.code) ?? 'upstream', error.message, { details: error.details ?? {} });
}

/**
 * A failed exchange as a NetintelError: the deadline (`timeout`, saying how
 * far the answer got), TLS (`tls`), an answer that is not HTTP (`upstream`),
 * else `unreachable`. `octets` is null before the body began.
 */
function transportError(error: unknown, server: string, path: string, timeoutMs: number, octets: number | null): NetintelError {
  if (error instanceof NetintelError) return error;
  const name = (error as Error).name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    const where = octets === null ? 'before the headers of the answer were complete' : `after ${octets} octets of the body`;
    return new NetintelError('timeout', `the server at ${server} did not answer ${path} within ${timeoutMs} ms (stopped ${where})`, {
      cause: error,
      details: { server, timeout_ms: timeoutMs },
    });
  }
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code ?? '';
  const reason = cause?.message ?? (error as Error).message;
  const details = { server, reason: code || reason };
  if (/^(ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|ERR_SSL|HOSTNAME_MISMATCH|ERR_OSSL)/.test(code)) {
    return new NetintelError('tls', `TLS with the netintel server at ${server} failed: ${reason}`, { cause: error, details });
  }
  if (code.startsWith('HPE_') || code === 'UND_ERR_HEADERS_OVERFLOW') {
    return new NetintelError('upstream', `the server at ${server} did not answer ${path} with valid HTTP: ${reason}`, { cause: error, details });
  }
  if (octets !== null || code === 'UND_ERR_SOCKET') {
    const where = octets === null || octets === 0 ? 'before the answer' : `after ${octets} octets of the answer`;
    return new NetintelError('unreachable', `the netintel server at ${server} closed the connection ${where} to ${path}`, { cause: error, details });
  }
  return new NetintelError('unreachable', `cannot reach the netintel server at ${server}: ${code || reason}`, { cause: error, details });
}
