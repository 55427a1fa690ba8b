'use strict';
/**
 * Keeps a test's network traffic on this machine: every TCP connection and
 * UDP datagram the process opens to an address that is not loopback is sent
 * to a loopback port the test opened and closed itself (`closedPort`:
 * refused, or no answer), and recorded. Hostile inputs name public resolvers
 * and mail servers; the code under test may rightly try them, but a test
 * must never reach out. No well-known port is assumed closed: something may
 * listen on any of them on the machine running the tests.
 *
 * `loopbackPorts` also sends connections to those loopback ports to
 * `closedPort` (a peer the code cannot be told the port of, such as the
 * MTA-STS policy host on 443), and `keepOthers` leaves non-loopback
 * destinations alone (only those ports are redirected).
 *
 * In-process: `const network = loopbackOnly({ closedPort })`, then
 * `network.redirected`, `network.destinations` and `network.restore()`. In a
 * child process: `NODE_OPTIONS=--require <this file>` with
 * NETINTEL_TEST_CLOSED_PORT set, and either NETINTEL_FUZZ_CHILD=1 (the
 * whole guard, saying on stderr what it redirected) or
 * NETINTEL_TEST_CLOSED_LOOPBACK_PORTS=443,... (those ports alone, quietly;
 * `well-known` for WELL_KNOWN_PORTS). Diverted loopback ports are listed in
 * `diverted`, not in `redirected`: the test chose them.
 */
const net = require('node:net');
const dgram = require('node:dgram');

function isLoopback(host) {
  if (host === undefined || host === null || host === '' || host === 'localhost') return true;
  const text = String(host).replace(/^\[|\]$/g, '').toLowerCase();
  return /^127\.\d+\.\d+\.\d+$/.test(text) || text === '::1' || text === '0:0:0:0:0:0:0:1' || /^::ffff:127\.\d+\.\d+\.\d+$/.test(text);
}

/**
 * @typedef {{ protocol: 'tcp' | 'udp', host: string, port: number, from?: number }} Destination
 * @param {{ closedPort: number, onRedirect?: (entry: string) => void, loopbackPorts?: number[], keepOthers?: boolean }} options
 * @returns {{ redirected: string[], diverted: string[], destinations: Destination[], restore(): void }}
 */
function loopbackOnly(options) {
  const { closedPort, onRedirect = () => {}, loopbackPorts = [], keepOthers = false } = options;
  if (!Number.isInteger(closedPort) || closedPort < 1 || closedPort > 65535) throw new Error(`loopback-only needs the closed port a test opened and closed, not ${String(closedPort)}`);
  // Whether a destination goes to the closed port instead: off loopback, or a loopback port named.
  const named = new Set(loopbackPorts.map(Number));
  const diverted = (host, port) => (isLoopback(host) ? named.has(Number(port)) : !keepOthers);
  // The loopback ports diverted: not a violation (the test chose them), but seen.
  const divertedPorts = [];
  const redirected = [];
  const destinations = [];
  const socketConnect = net.Socket.prototype.connect;
  const udpConnect = dgram.Socket.prototype.connect;
  const udpSend = dgram.Socket.prototype.send;
  const loopbackFor = (host) => (net.isIPv6(String(host).replace(/^\[|\]$/g, '')) ? '::1' : '127.0.0.1');
  const redirect = (entry, host) => {
    if (isLoopback(host)) {
      divertedPorts.push(entry);
      return;
    }
    redirected.push(entry);
    onRedirect(entry);
  };

  net.Socket.prototype.connect = function guardedConnect(...args) {
    const first = args[0];
    if (Array.isArray(first)) return socketConnect.apply(this, args); // Node's internal normalised form
    if (first !== null && typeof first === 'object') {
      if (first.path === undefined) {
        destinations.push({ protocol: 'tcp', host: String(first.host ?? 'localhost'), port: Number(first.port) });
        if (diverted(first.host, first.port)) {
          redirect(`tcp ${String(first.host)}:${String(first.port)}`, first.host);
          args[0] = { ...first, host: loopbackFor(first.host), port: closedPort };
        }
      }
    } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
      const host = typeof args[1] === 'string' ? args[1] : undefined;
      destinations.push({ protocol: 'tcp', host: host ?? 'localhost', port: Number(first) });
      if (diverted(host, first)) {
        redirect(`tcp ${String(host)}:${String(first)}`, host);
        args[0] = closedPort;
        args[1] = loopbackFor(host);
      }
    }
    return socketConnect.apply(this, args);
  };

  dgram.Socket.prototype.connect = function guardedUdpConnect(port, address, ...rest) {
    destinations.push({ protocol: 'udp', host: typeof address === 'string' ? address : 'localhost', port });
    if (typeof address === 'string' && diverted(address, port)) {
      redirect(`udp ${address}:${port}`, address);
      return udpConnect.call(this, closedPort, this.type === 'udp6' ? '::1' : '127.0.0.1', ...rest);
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
      if (diverted(args[i + 1], args[i])) {
        redirect(`udp ${String(args[i + 1])}:${String(args[i])}`, args[i + 1]);
        args[i] = closedPort;
        args[i + 1] = this.type === 'udp6' ? '::1' : '127.0.0.1';
      }
      break;
    }
    return udpSend.apply(this, args);
  };

  return {
    redirected,
    diverted: divertedPorts,
    destinations,
    restore() {
      net.Socket.prototype.connect = socketConnect;
      dgram.Socket.prototype.connect = udpConnect;
      dgram.Socket.prototype.send = udpSend;
    },
  };
}

/**
 * The loopback ports a service of the machine may listen on: 1 to 1023, and
 * the usual alternatives for mail (2525) and DNS (5353). Test peers listen on
 * ports the system gives (above 1023), so these are never theirs.
 */
const WELL_KNOWN_PORTS = [...Array.from({ length: 1023 }, (_, i) => i + 1), 2525, 5353];

if (require.main !== module) {
  const closedPort = Number(process.env.NETINTEL_TEST_CLOSED_PORT);
  const listed = process.env.NETINTEL_TEST_CLOSED_LOOPBACK_PORTS ?? '';
  const ports = listed === 'well-known' ? WELL_KNOWN_PORTS : listed.split(',').filter((port) => port !== '').map(Number);
  if (process.env.NETINTEL_FUZZ_CHILD === '1') {
    loopbackOnly({ closedPort, loopbackPorts: ports, onRedirect: (entry) => process.stderr.write(`loopback-only: blocked ${entry}\n`) });
  } else if (ports.length > 0) {
    loopbackOnly({ closedPort, loopbackPorts: ports, keepOthers: true });
  }
}

module.exports = { loopbackOnly, isLoopback, WELL_KNOWN_PORTS };
