/** Finding and placing the Debian daemons the interoperability tests run as peers. */
import dgram from 'node:dgram';
import { accessSync, constants } from 'node:fs';
import net from 'node:net';
import { delimiter, join } from 'node:path';

/** An executable on PATH or in the sbin directories where Debian puts daemons, or null. */
export function findExecutable(name: string): string | null {
  const dirs = [...(process.env['PATH'] ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin', '/sbin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return null;
}

/** A loopback port free for both UDP and TCP (DNS listens on both). */
export async function freePort(): Promise<number> {
  for (;;) {
    const udp = dgram.createSocket('udp4');
    const port = await new Promise<number>((resolve) => udp.bind(0, '127.0.0.1', () => resolve(udp.address().port)));
    const tcp = net.createServer();
    const ok = await new Promise<boolean>((resolve) => {
      tcp.once('error', () => resolve(false));
      tcp.listen(port, '127.0.0.1', () => resolve(true));
    });
    await new Promise<void>((resolve) => udp.close(() => resolve()));
    if (ok) await new Promise<void>((resolve) => tcp.close(() => resolve()));
    if (ok) return port;
  }
}

/** A peer that exited before it was ready: on a port found free, most likely because another process bound it first. */
export class PeerExited extends Error {}

/**
 * Starts a peer on a free loopback port. A port found free can be taken by
 * another process (another test worker's peer) before the peer binds it;
 * the peer then exits, and `start` throws PeerExited: it is started again on
 * another port, `attempts` times at most. Any other error is thrown at once.
 */
export function startOnFreePort<T>(start: (port: number) => Promise<T>, attempts = 3): Promise<T> {
  return againOnPeerExit(async () => start(await freePort()), attempts);
}

/** Runs `attempt` again, `attempts` times at most, while it throws PeerExited; any other error is thrown at once. */
export async function againOnPeerExit<T>(attempt: () => Promise<T>, attempts = 3): Promise<T> {
  for (let tried = 1; ; tried++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof PeerExited) || tried === attempts) throw error;
    }
  }
}

/**
 * A loopback port nothing listens on, for tests of refused connections and
 * silent resolvers: one this process opened (TCP and UDP) and closed again.
 * No well-known port is assumed closed (a discard service, a web server on
 * 443 or a resolver on 53 may run on the machine); another process could
 * take this one in the moment between, which a test would notice as an
 * answer where it expected none.
 */
export const closedPort: () => Promise<number> = freePort;

/**
 * Binds `udp` (made by `createUdp`) to a port the system picks and `tcp` to
 * the same port, as a DNS server listens. The TCP side of that port may be
 * taken by another process (another test worker's peer): both are then
 * given up and tried again on a fresh port.
 */
export async function listenOnSamePort(host: string, createUdp: () => dgram.Socket, tcp: net.Server, attempts = 10): Promise<{ udp: dgram.Socket; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const udp = createUdp();
    const port = await new Promise<number>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(0, host, () => {
        udp.off('error', reject);
        resolve(udp.address().port);
      });
    });
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(port, host, () => {
          tcp.off('error', reject);
          resolve();
        });
      });
      return { udp, port };
    } catch (error) {
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= attempts) throw error;
    }
  }
}
