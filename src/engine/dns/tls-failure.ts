import { NetintelError } from '../../errors.js';
import { notTlsReason } from '../http/https-failure.js';
import type { ExchangeOutcome } from './exchange-outcome.js';

/** OpenSSL's and Node's codes for a certificate or handshake that failed. */
const TLS_ERROR_CODE = /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH|ERR_OSSL)/;

/**
 * The outcome of a socket error on a DNS over HTTPS or TLS connection: a
 * certificate or handshake failure is `failed`/`tls` with a reason a person
 * can act on; a refusal by the connect guard is `failed`/`refused`;
 * anything else is the network's (`unreachable`).
 */
export function tlsFailureOutcome(error: NodeJS.ErrnoException, host: string): ExchangeOutcome {
  // The connect guard refused the address the name resolved to (connect-guard.ts).
  if (error instanceof NetintelError) return { kind: 'failed', failure: 'refused', code: error.code, reason: error.message };
  const code = error.code ?? '';
  if (!TLS_ERROR_CODE.test(code)) return { kind: 'unreachable', code: code || 'EIO' };
  return { kind: 'failed', failure: 'tls', code, reason: tlsReason(code, error.message, host) };
}

function tlsReason(code: string, message: string, host: string): string {
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `the certificate is not valid for ${host} (${message})`;
  if (/^(SELF_SIGNED|DEPTH_ZERO|UNABLE_TO_GET_ISSUER|UNABLE_TO_VERIFY)/.test(code)) {
    return `the certificate is not signed by a trusted CA (${message}); trust a private CA with --resolver-ca FILE`;
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') return `the certificate is outside its validity period (${message})`;
  // A plain DNS (or any plain TCP) server on the port answers the ClientHello with octets that are not a TLS record.
  return notTlsReason(message) ?? message;
}
