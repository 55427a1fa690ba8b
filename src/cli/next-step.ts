import type { NetintelError } from '../errors.js';

/** Why a connection to a netintel server never opened (api-client.ts's details.reason). */
const NO_CONNECTION = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'bad port']);

/**
 * What to try after a failure the CLI reports, keyed by the error's code
 * and the facts it carries (its details): the resolver, the netintel
 * server, the file. The engine's messages say what failed and are also the
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
  if (code === 'usage' && typeof details.path === 'string' && !error.message.includes(' (')) return 'check the path and its permissions';
  return null;
}

/**
 * The message of a failure as the CLI reports it: Node's text of a file
 * error shortened to its reason (`ENOENT: no such file or directory, open
 * 'x'` says the path twice), then the next step, in parentheses or, after
 * a message that ends in parentheses, after a colon.
 */
export function reportedMessage(error: NetintelError): string {
  const message = error.message.replace(/\b(E[A-Z]+): ([a-z][a-z ,]*?), [a-z]+ '[^']*'/, '$2');
  const step = nextStep(error);
  if (step === null) return message;
  return message.endsWith(')') ? `${message}: ${step}` : `${message} (${step})`;
}
