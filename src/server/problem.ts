import { ERROR_CODES, NetintelError, type ErrorCode } from '../errors.js';

/** RFC 9457 media type of every error body. */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

/**
 * An RFC 9457 problem document carrying netintel's stable `code` (the
 * extension member clients should branch on) and the error's details.
 */
export interface ProblemBody {
  /** Where the code is documented: the docs page's anchor for it (a URI reference). */
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  /** The request path the problem occurred on. */
  instance?: string;
  details?: Record<string, unknown>;
  [extension: string]: unknown;
}

/** The HTTP status of an error code (src/errors.ts); codes without one answer 500. */
export function statusOf(code: ErrorCode): number {
  return ERROR_CODES[code].http ?? 500;
}

export function problemOf(error: NetintelError, options: { status?: number; instance?: string; extra?: Record<string, unknown> } = {}): ProblemBody {
  const meaning = ERROR_CODES[error.code].meaning;
  const body: ProblemBody = {
    type: `/docs#problem-${error.code}`,
    title: meaning.charAt(0).toUpperCase() + meaning.slice(1),
    status: options.status ?? statusOf(error.code),
    detail: error.message,
    code: error.code,
  };
  if (options.instance !== undefined) body.instance = options.instance;
  if (Object.keys(error.details).length > 0) body.details = error.details;
  return options.extra ? { ...body, ...options.extra } : body;
}

/** The path of a raw URL for a problem's `instance`, or undefined when it has none. */
export function safePath(url: string | undefined): string | undefined {
  if (url === undefined || !url.startsWith('/')) return undefined;
  return url.split('?')[0];
}

/**
 * Builds an error without capturing a stack trace: refusals (429, 401) are
 * answers, and a flood of them should cost as little as possible; the
 * stack would only ever say "the limiter refused".
 */
export function withoutStack<T>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}
