/**
 * The TCP connection of a probe (SMTP, `netintel tls`), through the
 * context's connect guard (docs/design.md, The public-target guard).
 */
import net from 'node:net';
import { NetintelError } from '../../errors.js';
import { guardedConnect, type ConnectGuard } from '../connect-guard.js';

/**
 * Opens a TCP connection, or says why not. The context's guard judges the
 * address first; its refusal rejects (nothing is sent).
 */
export function connectTcp(
  guard: ConnectGuard | null | undefined,
  target: { what: string; name: string; address: string; port: number },
  timeoutMs: number,
): Promise<{ ok: true; socket: net.Socket } | { ok: false; code: 'unreachable' | 'timeout'; reason: string }> {
  return new Promise((resolve, reject) => {
    // A refusal of the guard, thrown here, rejects the promise.
    const { what, name, address, port } = target;
    const guarded = guardedConnect(guard, address, { what, name, port });
    let socket: net.Socket;
    try {
      socket = net.connect({ host: address, port, ...guarded });
    } catch (error) {
      // Arguments net.connect refuses at once (a bad port) fail the stage
      // like a refused connection instead of rejecting with a RangeError.
      resolve({ ok: false, code: 'unreachable', reason: (error as Error).message });
      return;
    }
    const timer = setTimeout(() => {
      // A late error of the abandoned socket must not be an uncaught exception.
      socket.on('error', () => {});
      socket.destroy();
      resolve({ ok: false, code: 'timeout', reason: `no TCP connection within ${timeoutMs} ms` });
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      resolve({ ok: true, socket });
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      socket.on('error', () => {});
      socket.destroy();
      if (error instanceof NetintelError) {
        reject(error);
        return;
      }
      const reason =
        error.code === 'ECONNREFUSED'
          ? 'connection refused (nothing listens on that port)'
          : error.code === 'EHOSTUNREACH' || error.code === 'ENETUNREACH'
            ? `no route to the host (${error.code})`
            : error.code === 'ECONNRESET'
              ? 'connection reset'
              : `${error.message}`;
      resolve({ ok: false, code: 'unreachable', reason });
    });
  });
}
