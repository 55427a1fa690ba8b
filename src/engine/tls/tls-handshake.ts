/**
 * The TLS handshake over a connected socket, shared by every probe that
 * speaks TLS (the SMTP probe after STARTTLS or on connect, `netintel tls`
 * after any STARTTLS preamble): one deadline, one wording of failures, and
 * the stapled OCSP response when one was asked for (RFC 6066 §8).
 */
import type { Socket } from 'node:net';
import tls from 'node:tls';

export type HandshakeOutcome =
  | { ok: true; socket: tls.TLSSocket; ocspResponse: Buffer | null }
  | { ok: false; error: string; code: string | null };

/**
 * Starts TLS on `plain` (its data listeners already removed by the caller)
 * and waits for the handshake, at most `timeoutMs`. On failure both sockets
 * are destroyed.
 */
export function tlsHandshake(plain: Socket, options: tls.ConnectionOptions, timeoutMs: number): Promise<HandshakeOutcome> {
  // Errors of the plain socket during the handshake surface through the TLS socket.
  plain.on('error', () => {});
  return new Promise((resolve) => {
    let settled = false;
    let ocspResponse: Buffer | null = null;
    let secure: tls.TLSSocket;
    const finish = (outcome: HandshakeOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      secure.off('secureConnect', onSecure);
      secure.off('error', onError);
      secure.off('close', onClose);
      if (!outcome.ok) {
        secure.on('error', () => {});
        secure.destroy();
        plain.destroy();
      }
      resolve(outcome);
    };
    const onSecure = () => finish({ ok: true, socket: secure, ocspResponse });
    const onError = (error: NodeJS.ErrnoException) => finish({ ok: false, error: describeTlsError(error), code: error.code ?? null });
    const onClose = () => finish({ ok: false, error: 'the server closed the connection during the TLS handshake', code: null });
    const timer = setTimeout(() => finish({ ok: false, error: `no TLS handshake within ${timeoutMs} ms`, code: 'ETIMEDOUT' }), timeoutMs);
    try {
      secure = tls.connect({ ...options, socket: plain });
    } catch (error) {
      // Options OpenSSL refuses before any byte is sent (a protocol version it cannot offer).
      const failure = error as NodeJS.ErrnoException;
      settled = true;
      clearTimeout(timer);
      plain.destroy();
      resolve({ ok: false, error: describeTlsError(failure), code: failure.code ?? null });
      return;
    }
    secure.once('OCSPResponse', (response: Buffer) => {
      ocspResponse = response;
    });
    secure.once('secureConnect', onSecure);
    secure.once('error', onError);
    secure.once('close', onClose);
  });
}

/** A readable reason for a TLS failure: OpenSSL's reason where there is one. */
export function describeTlsError(error: NodeJS.ErrnoException & { reason?: string }): string {
  const reason = typeof error.reason === 'string' ? error.reason : null;
  const code = error.code ?? null;
  if (code === 'ECONNRESET') return 'the server reset the connection during the TLS handshake';
  if (reason) return `${reason}${code ? ` (${code})` : ''}`;
  return code ? `${error.message} (${code})` : error.message;
}
