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
 * destinations alone (only those ports are redirected). `standIns` sends
 * chosen destinations (`host:port`, a public resolver or loopback's SMTP
 * port 25) to a loopback port where a test peer stands in for them.
 *
 * In-process: `const network = loopbackOnly({ closedPort })`, then
 * `network.redirected`, `network.destinations` and `network.restore()`. In a
 * child process: `NODE_OPTIONS=--require <this file>` with
 * NETINTEL_TEST_CLOSED_PORT set, and either NETINTEL_FUZZ_CHILD=1 (the
 * whole guard, saying on stderr what it redirected) or
 * NETINTEL_TEST_CLOSED_LOOPBACK_PORTS=443,... (those ports alone, quietly;
 * `well-known` for WELL_KNOWN_PORTS), and NETINTEL_TEST_STAND_INS, a JSON
 * object of `"host:port": loopbackPort` (`"9.9.9.9:53": 40123`). Diverted
 * loopback ports and stand-ins are listed in `diverted`, not in
 * `redirected`: the test chose them.
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
 * @param {{ closedPort: number, onRedirect?: (entry: string) => void, loopbackPorts?: number[], keepOthers?: boolean, standIns?: Record<string, number> }} options
 * @returns {{ redirected: string[], diverted: string[], destinations: Destination[], restore(): void }}
 */
function loopbackOnly(options) {
  const { closedPort, onRedirect = () => {}, loopbackPorts = [], keepOthers = false, standIns = {} } = options;
  if (!Number.isInteger(closedPort) || closedPort < 1 || closedPort > 65535) throw new Error(`loopback-only needs the closed port a test opened and closed, not ${String(closedPort)}`);
  // Whether a destination goes to the closed port instead: off loopback, or a loopback port named.
  const named = new Set(loopbackPorts.map(Number));
  const diverted = (host, port) => (isLoopback(host) ? named.has(Number(port)) : !keepOthers);
  // The loopback port of the peer standing in for host:port, or undefined.
  const standInFor = (host, port) => {
    const text = String(host ?? 'localhost').replace(/^\[|\]$/g, '').toLowerCase();
    return standIns[`${text === 'localhost' ? '127.0.0.1' : text}:${Number(port)}`];
  };
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
    // net.connect() and http's agents hand over Node's internal normalised form, [options, callback]:
    // its options are guarded in place, the array kept (Node knows it by a symbol on it).
    const normalised = Array.isArray(args[0]) ? args[0] : null;
    const first = normalised ? normalised[0] : args[0];
    if (first !== null && typeof first === 'object') {
      if (first.path === undefined) {
        destinations.push({ protocol: 'tcp', host: String(first.host ?? 'localhost'), port: Number(first.port) });
        const standIn = standInFor(first.host, first.port);
        if (standIn !== undefined) {
          divertedPorts.push(`tcp ${String(first.host)}:${String(first.port)}`);
          args[0] = { ...first, host: loopbackFor(first.host), port: standIn };
        } else if (diverted(first.host, first.port)) {
          redirect(`tcp ${String(first.host)}:${String(first.port)}`, first.host);
          args[0] = { ...first, host: loopbackFor(first.host), port: closedPort };
        }
        if (normalised && args[0] !== normalised) {
          normalised[0] = args[0];
          args[0] = normalised;
        }
      }
    } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
      const host = typeof args[1] === 'string' ? args[1] : undefined;
      destinations.push({ protocol: 'tcp', host: host ?? 'localhost', port: Number(first) });
      const standIn = standInFor(host, first);
      if (standIn !== undefined) {
        divertedPorts.push(`tcp ${String(host)}:${String(first)}`);
        args[0] = standIn;
        args[1] = loopbackFor(host);
      } else if (diverted(host, first)) {
        redirect(`tcp ${String(host)}:${String(first)}`, host);
        args[0] = closedPort;
        args[1] = loopbackFor(host);
      }
    }
    return socketConnect.apply(this, args);
  };

  dgram.Socket.prototype.connect = function guardedUdpConnect(port, address, ...rest) {
    destinations.push({ protocol: 'udp', host: typeof address === 'string' ? address : 'localhost', port });
    const standIn = standInFor(address, port);
    if (standIn !== undefined) {
      divertedPorts.push(`udp ${String(address)}:${port}`);
      return udpConnect.call(this, standIn, this.type === 'udp6' ? '::1' : '127.0.0.1', ...rest);
    }
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
      const standIn = standInFor(args[i + 1], args[i]);
      if (standIn !== undefined) {
        divertedPorts.push(`udp ${String(args[i + 1])}:${String(args[i])}`);
        args[i] = standIn;
        args[i + 1] = this.type === 'udp6' ? '::1' : '127.0.0.1';
      } else if (diverted(args[i + 1], args[i])) {
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
  const standIns = JSON.parse(process.env.NETINTEL_TEST_STAND_INS || '{}');
  if (process.env.NETINTEL_FUZZ_CHILD === '1') {
    loopbackOnly({ closedPort, loopbackPorts: ports, standIns, onRedirect: (entry) => process.stderr.write(`loopback-only: blocked ${entry}\n`) });
  } else if (ports.length > 0 || Object.keys(standIns).length > 0) {
    loopbackOnly({ closedPort, loopbackPorts: ports, standIns, keepOthers: true });
  }
}

module.exports = { loopbackOnly, isLoopback, WELL_KNOWN_PORTS };
