/**
 * Keeps a test's network traffic on this machine: every TCP connection and
 * UDP datagram this process opens to an address that is not loopback is
 * sent to loopback port 9 instead (nothing listens there: refused, or no
 * answer), and counted. Hostile inputs name public resolvers and mail
 * servers; the server may rightly try them, but a test must not reach the
 * internet.
 */
import dgram from 'node:dgram';
import net from 'node:net';

export interface LoopbackOnly {
  /** Destinations redirected so far (host:port). */
  redirected: string[];
  /** Every destination asked for, loopback or not, in order (before any redirection). */
  destinations: Array<{ protocol: 'tcp' | 'udp'; host: string; port: number; /** UDP: the local port it was sent from, when bound. */ from?: number }>;
  restore(): void;
}

function isLoopback(host: unknown): boolean {
  if (host === undefined || host === null || host === '' || host === 'localhost') return true;
  const text = String(host).replace(/^\[|\]$/g, '').toLowerCase();
  return /^127\.\d+\.\d+\.\d+$/.test(text) || text === '::1' || /^::ffff:127\.\d+\.\d+\.\d+$/.test(text);
}

const DISCARD_PORT = 9;

export function loopbackOnly(): LoopbackOnly {
  const redirected: string[] = [];
  const destinations: LoopbackOnly['destinations'] = [];
  const socketConnect = net.Socket.prototype.connect;
  const udpConnect = dgram.Socket.prototype.connect;
  const udpSend = dgram.Socket.prototype.send;
  const loopbackFor = (host: string) => (net.isIPv6(host.replace(/^\[|\]$/g, '')) ? '::1' : '127.0.0.1');

  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    const first = args[0];
    if (first !== null && typeof first === 'object' && !Array.isArray(first)) {
      const options = first as net.TcpNetConnectOpts & { path?: string };
      if (options.path === undefined) destinations.push({ protocol: 'tcp', host: String(options.host ?? 'localhost'), port: Number(options.port) });
      if (options.path === undefined && !isLoopback(options.host)) {
        redirected.push(`tcp ${String(options.host)}:${String(options.port)}`);
        args[0] = { ...options, host: loopbackFor(String(options.host)), port: DISCARD_PORT };
      }
    } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
      const host = typeof args[1] === 'string' ? args[1] : undefined;
      destinations.push({ protocol: 'tcp', host: host ?? 'localhost', port: Number(first) });
      if (!isLoopback(host)) {
        redirected.push(`tcp ${String(host)}:${String(first)}`);
        args[0] = DISCARD_PORT;
        args[1] = loopbackFor(String(host));
      }
    }
    return (socketConnect as (...rest: unknown[]) => net.Socket).apply(this, args);
  } as typeof net.Socket.prototype.connect;

  dgram.Socket.prototype.connect = function (this: dgram.Socket, port: number, address?: unknown, callback?: unknown) {
    destinations.push({ protocol: 'udp', host: typeof address === 'string' ? address : 'localhost', port });
    if (typeof address === 'string' && !isLoopback(address)) {
      redirected.push(`udp ${address}:${port}`);
      return (udpConnect as (...rest: unknown[]) => void).call(this, DISCARD_PORT, this.type === 'udp6' ? '::1' : '127.0.0.1', callback);
    }
    return (udpConnect as (...rest: unknown[]) => void).call(this, port, address, callback);
  } as typeof dgram.Socket.prototype.connect;

  dgram.Socket.prototype.send = function (this: dgram.Socket, ...args: unknown[]) {
    // send(msg, [offset, length,] port, address, callback): the address is the string after the port.
    for (let i = 1; i < args.length; i++) {
      if (typeof args[i] === 'number' && typeof args[i + 1] === 'string') {
        let from: number | undefined;
        try {
          from = this.address().port;
        } catch {
          from = undefined;
        }
        destinations.push({ protocol: 'udp', host: args[i + 1] as string, port: args[i] as number, ...(from === undefined ? {} : { from }) });
      }
      if (typeof args[i] === 'number' && typeof args[i + 1] === 'string' && !isLoopback(args[i + 1])) {
        redirected.push(`udp ${String(args[i + 1])}:${String(args[i])}`);
        args[i] = DISCARD_PORT;
        args[i + 1] = this.type === 'udp6' ? '::1' : '127.0.0.1';
        break;
      }
    }
    return (udpSend as (...rest: unknown[]) => void).apply(this, args);
  } as typeof dgram.Socket.prototype.send;

  return {
    redirected,
    destinations,
    restore() {
      net.Socket.prototype.connect = socketConnect;
      dgram.Socket.prototype.connect = udpConnect;
      dgram.Socket.prototype.send = udpSend;
    },
  };
}
