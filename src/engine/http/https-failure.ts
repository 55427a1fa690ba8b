import { NetintelError } from '../../errors.js';

/** Where a failed HTTPS fetch was, for its message. */
export interface FetchPlace {
  /** The URL of the hop that failed. */
  url: string;
  host: string;
  /** The address connected to, when known. */
  address: string | null;
  /** Octets of the body received before the failure, null before the body began. */
  bodyOctets: number | null;
}

/** OpenSSL's record-layer complaints when the peer does not speak TLS at all (plain HTTP on the port). */
const NOT_TLS = /wrong version number|packet length too long|unknown protocol|http request/i;

/**
 * What a TLS failure means when OpenSSL's complaint (`message`) says the
 * peer does not speak TLS at all (plain text where a handshake was due):
 * the words every TLS client of the engine uses, or null for other failures.
 */
export function notTlsReason(message: string): string | null {
  return NOT_TLS.test(message) ? 'the server does not speak TLS on this port (it answered in plain text)' : null;
}

/**
 * A failed HTTPS fetch as a NetintelError, from what node:net, node:tls and
 * undici throw: `tls` (handshake, certificate, a peer that does not speak
 * TLS), `unreachable` (refused, reset, closed early, no route), `upstream`
 * (an answer that is not HTTP/1.1), `timeout` (a library timer; the guarded
 * GET's own deadline makes its own error). A NetintelError passes through.
 */
export function httpsFailure(error: unknown, place: FetchPlace): NetintelError {
  if (error instanceof NetintelError) return error;
  const code = (error as NodeJS.ErrnoException).code ?? '';
  const message = error instanceof Error ? error.message : String(error);
  const { url, host } = place;
  const details = { url, host, ...(place.address === null ? {} : { address: place.address }), reason: code || message };
  const peer = place.address === null || place.address === host ? host : `${host} (${place.address})`;
  const during = place.bodyOctets === null ? 'before the answer was complete' : `after ${place.bodyOctets} octets of the body`;
  if (/^(ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|ERR_SSL|HOSTNAME_MISMATCH|ERR_OSSL)/.test(code) || /certificate|SSL|TLS/.test(message)) {
    const reason = notTlsReason(message) ?? message;
    return new NetintelError('tls', `TLS with ${peer} failed: ${reason}`, { cause: error, details });
  }
  if (code === 'ECONNREFUSED') return new NetintelError('unreachable', `${peer} refused the connection for ${url}`, { cause: error, details });
  if (code === 'ECONNRESET' || code === 'EPIPE') return new NetintelError('unreachable', `${peer} reset the connection ${during} (${url})`, { cause: error, details });
  if (code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED' || code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') {
    return new NetintelError('unreachable', `${peer} closed the connection ${during} (${url})`, { cause: error, details });
  }
  if (code.startsWith('HPE_') || code === 'UND_ERR_HEADERS_OVERFLOW') {
    return new NetintelError('upstream', `${peer} did not answer ${url} with HTTP/1.1: ${message}`, { cause: error, details });
  }
  if (code === 'ETIMEDOUT' || code.endsWith('_TIMEOUT')) return new NetintelError('timeout', `no answer from ${peer} for ${url} in time: ${message}`, { cause: error, details });
  return new NetintelError('unreachable', `could not reach ${peer} for ${url}: ${message}`, { cause: error, details });
}
