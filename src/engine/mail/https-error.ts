import { NetintelError } from '../../errors.js';

/** A failed HTTPS fetch (MTA-STS policy, BIMI logo and certificate) as a NetintelError: tls, timeout or unreachable. */
export function httpError(error: unknown, host: string, timeoutMs: number): NetintelError {
  if (error instanceof NetintelError) return error;
  const code = (error as NodeJS.ErrnoException).code ?? '';
  const message = error instanceof Error ? error.message : String(error);
  if (/^(ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|ERR_SSL|HOSTNAME_MISMATCH)/.test(code) || /certificate|SSL|TLS/i.test(message)) {
    return new NetintelError('tls', `TLS with ${host} failed: ${message}`, { cause: error, details: { host, reason: code } });
  }
  if (code === 'ETIMEDOUT') return new NetintelError('timeout', `no answer from ${host} within ${timeoutMs} ms`, { cause: error });
  return new NetintelError('unreachable', `could not reach ${host}: ${message}`, { cause: error, details: { host, reason: code } });
}
