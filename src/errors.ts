/**
 * The one error type of netintel and the table that gives each of its codes
 * a process exit code (CLI) and an HTTP status (server).
 *
 * The engine throws only `NetintelError`; `src/app/program.ts` is the only place
 * that turns a code into an exit code, the server the only place that turns it
 * into a status. A test keeps this table and docs/exit-codes.md in sync.
 */

export const ERROR_CODES = {
  usage: { exit: 2, http: 400, meaning: 'bad flag or argument' },
  invalid_input: { exit: 2, http: 400, meaning: 'a target is not a valid IP, domain, ASN or host' },
  not_found: { exit: 3, http: 404, meaning: 'a named object has no entry and no result can be formed' },
  timeout: { exit: 4, http: 504, meaning: 'no answer before the deadline' },
  unreachable: { exit: 5, http: 502, meaning: 'connection refused, reset, or no route' },
  upstream: { exit: 5, http: 502, meaning: 'the peer said it could not answer (SERVFAIL, REFUSED)' },
  tls: { exit: 5, http: 502, meaning: 'TLS handshake or certificate failure' },
  data_unavailable: { exit: 6, http: 503, meaning: 'a local dataset is missing or invalid, or the key database cannot be reached' },
  partial: { exit: 7, http: null, meaning: 'some, not all, targets of a run failed' },
  unauthorized: { exit: 8, http: 401, meaning: 'API key missing, malformed, unknown or revoked' },
  // Also a server-side probe refused by the SSRF rule (details.rule `private-target`, `smtp-port`,
  // `resolver-port`): the request is understood and valid, and the server will not act on it.
  forbidden: { exit: 8, http: 403, meaning: 'not allowed: the plan lacks the feature, or a probe targets a private address or port' },
  rate_limited: { exit: 8, http: 429, meaning: 'over the plan limit' },
  not_implemented: { exit: 9, http: 501, meaning: 'the feature is not built yet' },
  findings: { exit: 10, http: null, meaning: 'a check reported findings at or above --fail-on' },
  output_failed: { exit: 11, http: null, meaning: 'the output could not be written (disk full, I/O error)' },
  internal: { exit: 1, http: 500, meaning: 'a bug in netintel' },
} as const satisfies Record<string, { exit: number; http: number | null; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface NetintelErrorOptions {
  cause?: unknown;
  /** JSON-safe facts that explain the error (the input, the resolver, ...). */
  details?: Record<string, unknown>;
}

export class NetintelError extends Error {
  override readonly name = 'NetintelError';
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: NetintelErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details ?? {};
  }

  /** The JSON-safe form used in error rows, `--format json` output and API bodies. */
  toJSON(): { code: ErrorCode; message: string; details?: Record<string, unknown> } {
    return Object.keys(this.details).length > 0
      ? { code: this.code, message: this.message, details: this.details }
      : { code: this.code, message: this.message };
  }
}

/** Wraps anything thrown into a NetintelError; unknown throwables become `internal`. */
export function toNetintelError(error: unknown): NetintelError {
  if (error instanceof NetintelError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new NetintelError('internal', message, { cause: error });
}

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_CODES, value);
}

/**
 * The code of a failure another netintel hands over (a server's problem
 * document, a record's `failure`, a report's `errors`), or null: a known
 * code a request can fail with (it has an HTTP status), never one of the
 * run's own verdicts (`partial`, `findings`, `output_failed`), which a peer
 * must not choose for this run.
 */
export function peerErrorCode(value: unknown): ErrorCode | null {
  return typeof value === 'string' && isErrorCode(value) && ERROR_CODES[value].http !== null ? value : null;
}
