/**
 * One line per cause for a download that failed before or while its body
 * arrived: the name that does not resolve, the host or proxy that refused,
 * the silence, the certificate, the status, each with how to fix it. The
 * codes are the error table's: `unreachable` and `tls` (exit 5), `timeout`
 * (exit 4), `upstream` (exit 5) and `not_found` (exit 3).
 */
import { NetintelError } from '../../errors.js';

export interface FailureContext {
  /** The download's own idle timer fired (the request was aborted for silence). */
  timedOut: boolean;
  idleTimeoutMs: number;
  /** The proxy URLs the request may have gone through. */
  proxies: readonly string[];
}

/** What undici and node:net/tls put on a failure: a code, and the peer when known. */
interface NetworkCause {
  code?: string;
  message?: string;
  hostname?: string;
  address?: string;
  port?: number;
}

const PROXY_ENV = 'HTTPS_PROXY or HTTP_PROXY';
/** OpenSSL's verification codes (X509_V_ERR_*) that mean the chain does not end at a trusted root. */
const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_CHAIN_TOO_LONG',
  'INVALID_CA',
]);

export function downloadFailure(url: string, error: unknown, context: FailureContext): NetintelError {
  if (error instanceof NetintelError) return error;
  const target = new URL(url);
  const details = { url };
  if (context.timedOut) {
    return new NetintelError('timeout', `${url}: no data for ${context.idleTimeoutMs} ms (check the network or the proxy settings; a longer --timeout waits longer)`, {
      cause: error,
      details,
    });
  }
  const cause = causeOf(error);
  const code = cause.code ?? '';
  const proxy = proxyAt(context.proxies, cause);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'EAI_NODATA' || code === 'EAI_NONAME') {
    const host = cause.hostname ?? target.hostname;
    if (proxy !== null) {
      return new NetintelError('unreachable', `cannot resolve the proxy host ${proxy.hostname} (check ${PROXY_ENV}, or the network's DNS)`, {
        cause: error,
        details: { ...details, proxy: `${proxy.protocol}//${proxy.host}`, reason: code },
      });
    }
    const hint = context.proxies.length > 0 ? 'check the name in the URL, or NO_PROXY if it sends this host around the proxy' : `check the name in the URL and the network's DNS; behind a proxy set ${PROXY_ENV}`;
    return new NetintelError('unreachable', `cannot resolve ${host} (${hint})`, { cause: error, details: { ...details, host, reason: code } });
  }
  if (code === 'ECONNREFUSED') {
    const where = cause.address !== undefined && cause.port !== undefined ? hostPort(cause.address, cause.port) : target.host;
    if (proxy !== null) {
      return new NetintelError('unreachable', `the proxy ${where} refused the connection (check ${PROXY_ENV}, or that the proxy is running)`, {
        cause: error,
        details: { ...details, proxy: `${proxy.protocol}//${proxy.host}`, reason: code },
      });
    }
    return new NetintelError('unreachable', `${where} refused the connection to ${url} (check the URL's host and port, or that the server is up)`, {
      cause: error,
      details: { ...details, reason: code },
    });
  }
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT') {
    const through = proxy !== null ? `the proxy ${proxy.host}` : target.host;
    return new NetintelError('timeout', `${through} did not accept the connection in time (check the network, a firewall, or ${PROXY_ENV})`, {
      cause: error,
      details: { ...details, reason: code },
    });
  }
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'ENETDOWN') {
    return new NetintelError('unreachable', `no route to ${proxy?.host ?? target.host} (${code}: check the network; behind a proxy set ${PROXY_ENV})`, {
      cause: error,
      details: { ...details, reason: code },
    });
  }
  if (cause.message === 'bad port') {
    // The Fetch standard's "bad port" list (port 1, 25, 6000, ...): fetch refuses them before connecting.
    return new NetintelError('unreachable', `${url}: fetch never connects to port ${target.port} (a port the Fetch standard blocks; serve the file on another port)`, {
      cause: error,
      details: { ...details, reason: 'bad port' },
    });
  }
  const proxyStatus = /^Proxy response \((\d{3})\)/.exec(cause.message ?? '');
  if (proxyStatus !== null) return proxyRefusal(url, Number(proxyStatus[1]), context.proxies, error);
  if (UNTRUSTED.has(code)) {
    return tlsFailure(url, error, code, `the certificate of ${target.host} is not trusted: ${code} (for a private CA give its certificate in NODE_EXTRA_CA_CERTS=FILE)`);
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
    return tlsFailure(url, error, code, `the certificate of ${target.host} is not valid now: ${code} (check this machine's clock, or tell the server's operator)`);
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return tlsFailure(url, error, code, `the certificate of ${target.host} is for another name: ${code} (check the host in the URL)`);
  }
  if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || code.startsWith('CERT_') || code === 'EPROTO') {
    return tlsFailure(url, error, code, `TLS handshake with ${target.host} failed: ${code} (check that the URL's port speaks https)`);
  }
  const why = code !== '' ? code : cause.message ?? (error as Error).message;
  return new NetintelError('unreachable', `${url}: ${why} (check the network, then run the update again)`, { cause: error, details: { ...details, reason: why } });
}

/** A status other than 2xx or 304 from the server that holds the file. */
export function httpStatusFailure(url: string, status: number, statusText: string): NetintelError {
  const line = `${url}: HTTP ${status} ${statusText}`.trim();
  const details = { url, status };
  if (status === 404 || status === 410) return new NetintelError('not_found', `${line} (check the URL, or give another with --feed NAME=URL)`, { details });
  if (status === 407) return proxyRefusal(url, status, [], undefined);
  if (status === 401 || status === 403) return new NetintelError('upstream', `${line} (the server refuses the download; check the URL)`, { details });
  if (status === 429 || status >= 500) return new NetintelError('upstream', `${line} (the server could not answer; try again later)`, { details });
  return new NetintelError('upstream', `${line} (the server did not send the file; check the URL)`, { details });
}

function proxyRefusal(url: string, status: number, proxies: readonly string[], error: unknown): NetintelError {
  const proxy = proxies.length === 1 ? ` ${safeProxy(proxies[0]!)}` : '';
  const details = { url, status, ...(proxy === '' ? {} : { proxy: proxy.trim() }) };
  const options = error === undefined ? { details } : { cause: error, details };
  if (status === 407) {
    return new NetintelError('upstream', `the proxy${proxy} requires authentication (HTTP 407) (put the user and password in the proxy URL: HTTPS_PROXY=http://USER:PASSWORD@HOST:PORT)`, options);
  }
  return new NetintelError('upstream', `the proxy${proxy} refused the tunnel to ${new URL(url).host} (HTTP ${status}) (ask its operator to allow the host, or set NO_PROXY for it)`, options);
}

function tlsFailure(url: string, error: unknown, code: string, message: string): NetintelError {
  return new NetintelError('tls', message, { cause: error, details: { url, reason: code } });
}

/** The innermost error that says what happened (fetch wraps the socket's error in `cause`). */
function causeOf(error: unknown): NetworkCause {
  let current: unknown = error;
  for (let depth = 0; depth < 4; depth++) {
    const next = (current as { cause?: unknown } | null)?.cause;
    if (next === undefined || next === null || typeof next !== 'object') break;
    current = next;
  }
  return (current ?? {}) as NetworkCause;
}

/** The configured proxy the failing connection went to, judged by the peer the error names. */
function proxyAt(proxies: readonly string[], cause: NetworkCause): URL | null {
  for (const text of proxies) {
    let proxy: URL;
    try {
      proxy = new URL(text);
    } catch {
      continue;
    }
    const host = proxy.hostname.replace(/^\[|\]$/g, '');
    const port = Number(proxy.port || (proxy.protocol === 'https:' ? 443 : 80));
    if (cause.hostname !== undefined && cause.hostname === host) return proxy;
    if (cause.address !== undefined && cause.address === host && cause.port === port) return proxy;
  }
  return null;
}

/** A proxy URL without its credentials, for a message. */
function safeProxy(text: string): string {
  try {
    const url = new URL(text);
    return url.host;
  } catch {
    return 'from HTTPS_PROXY';
  }
}

function hostPort(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}
