import type { DnsTransport } from './dns-transport.js';

/**
 * Closes a transport made for one operation when `signal` aborts (a
 * server shutting down), which ends its waiting queries as `unreachable`
 * at once instead of at their timeouts. Returns the function that stops
 * listening; call it when the operation closes the transport itself, so
 * that a long-lived signal does not collect one listener per operation.
 */
export function closeOnAbort(transport: DnsTransport, signal: AbortSignal | undefined): () => void {
  if (signal === undefined) return () => {};
  const close = () => void transport.close();
  if (signal.aborted) {
    close();
    return () => {};
  }
  signal.addEventListener('abort', close, { once: true });
  return () => signal.removeEventListener('abort', close);
}
