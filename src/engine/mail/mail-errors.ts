import { NetintelError } from '../../errors.js';

/** The JSON form of a failure kept inside a result (a lookup that could not be answered). */
export interface FailureJson {
  code: string;
  message: string;
}

export function failureJson(error: unknown): FailureJson {
  if (error instanceof NetintelError) return { code: error.code, message: error.message };
  return { code: 'internal', message: error instanceof Error ? error.message : String(error) };
}

export function failureText(error: unknown): string {
  const json = failureJson(error);
  return `${json.code}: ${json.message}`;
}

/** The same failure with a message that says which step of a check it stopped. */
export function withContext(error: unknown, context: string): NetintelError {
  const failure = error instanceof NetintelError ? error : new NetintelError('internal', String(error), { cause: error });
  return new NetintelError(failure.code, `${context}: ${failure.message}`, { cause: failure, details: failure.details });
}

/**
 * True when the error is a DNS lookup that got no answer (timeout, SERVFAIL,
 * REFUSED, a resolver out of reach: the transport names the resolver in its
 * details), as when a fetch could not look its host up. Such a failure says
 * nothing of the domain checked: the finding it makes is `unknown`, a part
 * not checked, never a problem found (findings.ts). A refusal by the connect
 * guard names the resolver too, but is a rule, not a failure.
 */
export function isUnansweredLookup(error: unknown): boolean {
  return error instanceof NetintelError && typeof error.details.resolver === 'string' && error.code !== 'forbidden';
}
