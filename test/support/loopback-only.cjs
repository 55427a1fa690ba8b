'use strict';
/**
 * Keeps a test's network traffic on this machine: every TCP connection and
 * UDP datagram the process opens to an address that is not loopback is sent
 * to loopback port 9 instead (nothing listens there: refused, or no answer),
 * and recorded. Hostile inputs name public resolvers and mail servers; the
 * code under test may rightly try them, but a test must never reach out.
 *
 * In-process: `const network = loopbackOnly()`, then `network.redirected`,
 * `network.destinations` and `network.restore()`. In a child process:
 * `NODE_OPTIONS=--require <this file>` with NETINTEL_FUZZ_CHILD=1 installs it
 * for the whole run and says on stderr what it redirected.
 */
const net = require('node:net');
const dgram = require('node:dgram');

const DISCARD_PORT = 9;

function isLoopback(host) {
  if (host === undefined || host === null || host === '' || host === 'localhost') return true;
  const text = String(host).replace(/^\[|\]$/g, '').toLowerCase();
  return /^127\.\d+\.\d+\.\d+$/.test(text) || text === '::1' || text === '0:0:0:0:0:0:0:1' || /^::ffff:127\.\d+\.\d+\.\d+$/.test(text);
}

/**
 * @typedef {{ protocol: 'tcp' | 'udp', host: string, port: number, from?: number }} Destination
 * @returns {{ redirected: string[], destinations: Destination[], restore(): void }}
 */
function loopbackOnly(onRedirect = () => {}) {
  const redirected = [];
  const destinations = [];
  const socketConnect = net.Socket.prototype.connect;
  const udpConnect = dgram.Socket.prototype.connect;
  const udpSend = dgram.Socket.prototype.send;
  const loopbackFor = (host) => (net.isIPv6(String(host).replace(/^\[|\]$/g, '')) ? '::1' : '127.0.0.1');
  const redirect = (entry) => {
    redirected.push(entry);
    onRedirect(entry);
  };

  net.Socket.prototype.connect = function guardedConnect(...args) {
    const first = args[0];
    if (Array.isArray(first)) return socketConnect.apply(this, args); // Node's internal normalised form
    if (first !== null && typeof first === 'object') {
      if (first.path === undefined) {
        destinations.push({ protocol: 'tcp', host: String(first.host ?? 'localhost'), port: Number(first.port) });
        if (!isLoopback(first.host)) {
          redirect(`tcp ${String(first.host)}:${String(first.port)}`);
          args[0] = { ...first, host: loopbackFor(first.host), port: DISCARD_PORT };
        }
      }
    } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
      const host = typeof args[1] === 'string' ? args[1] : undefined;
      destinations.push({ protocol: 'tcp', host: host ?? 'localhost', port: Number(first) });
      if (!isLoopback(host)) {
        redirect(`tcp ${String(host)}:${String(first)}`);
        args[0] = DISCARD_PORT;
        args[1] = loopbackFor(host);
      }
    }
    return socketConnect.apply(this, args);
  };

  dgram.Socket.prototype.connect = function guardedUdpConnect(port, address, ...rest) {
    destinations.push({ protocol: 'udp', host: typeof address === 'string' ? address : 'localhost', port });
    if (typeof address === 'string' && !isLoopback(address)) {
      redirect(`udp ${address}:${port}`);
      return udpConnect.call(this, DISCARD_PORT, this.type === 'udp6' ? '::1' : '127.0.0.1', ...rest);
    }
    return udpConnect.call(this, port, address, ...rest);
  };

  dgram.Socket.prototype.send = function guardedUdpSend(...args) {
    // send(msg[, offset, length][, port][, address][, callback]): the address is the string after a port.
    for (let i = 1; i < args.length - 1; i++) {
      if (typeof args[i] !== 'number' || typeof args[i + 1] !== 'string') continue;
      let from;
      try {
        from = this.address().port;
      } catch {
        from = undefined;
      }
      destinations.push({ protocol: 'udp', host: args[i + 1], port: args[i], ...(from === undefined ? {} : { from }) });
      if (!isLoopback(args[i + 1])) {
        redirect(`udp ${String(args[i + 1])}:${String(args[i])}`);
        args[i] = DISCARD_PORT;
        args[i + 1] = this.type === 'udp6' ? '::1' : '127.0.0.1';
      }
      break;
    }
    return udpSend.apply(this, args);
  };

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

if (process.env.NETINTEL_FUZZ_CHILD === '1' && require.main !== module) {
  loopbackOnly((entry) => process.stderr.write(`loopback-only: blocked ${entry}\n`));
}

module.exports = { loopbackOnly, isLoopback };
