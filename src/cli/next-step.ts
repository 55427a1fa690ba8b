import type { NetintelError } from '../errors.js';

/** Why a connection to a netintel server never opened (api-client.ts's details.reason). */
const NO_CONNECTION = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'bad port']);

/**
 * What to try after a failure the CLI reports, keyed by the error's code
 * and the facts it carries (its details): the resolver, the netintel
 * server. The engine's messages say what failed and are also the
 * API's, where flags mean nothing; the next step is the CLI's to add.
 * Null when the message says it already or there is nothing to suggest.
 */
export function nextStep(error: NetintelError): string | null {
  const { code, details } = error;
  if (typeof details.resolver === 'string') {
    // A silent resolver: the run said what to do once already, at the first silence (silentResolverHint, runtime.ts).
    if (code === 'timeout') return null;
    if (code === 'unreachable') return 'check that a DNS server runs there, or name another with --resolver';
    if (details.rcode === 'SERVFAIL') return 'a broken or DNSSEC-bogus zone, or a server that cannot reach it: try another with --resolver';
    if (details.rcode === 'REFUSED') return 'the server will not resolve for this machine: name another with --resolver';
    if (code === 'upstream') return 'try another DNS server with --resolver';
    return null;
  }
  if (typeof details.server === 'string') {
    // No connection at all (a server that answered, then closed, is there: nothing to start).
    if (code === 'unreachable' && typeof details.reason === 'string' && NO_CONNECTION.has(details.reason)) return 'start one with "netintel serve", or check --server or NETINTEL_SERVER';
    if (code === 'timeout') return 'the server may be busy: allow more time with --timeout';
    return null;
  }
  return null;
}

/**
 * The message of a failure as the CLI reports it: the next step, in
 * parentheses or, after a message that ends in parentheses, after a colon.
 */
export function reportedMessage(error: NetintelError): string {
  const step = nextStep(error);
  if (step === null) return error.message;
  return error.message.endsWith(')') ? `${error.message}: ${step}` : `${error.message} (${step})`;
}
