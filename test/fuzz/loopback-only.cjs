'use strict';
// A net for fuzzing: every TCP connection and UDP socket this process opens
// goes to loopback. A connection elsewhere is redirected to 127.0.0.1 port 1
// (refused) and recorded, so a hostile input that would reach the internet
// fails its test instead of sending anything. Loaded with
// `node --require` into spawned CLIs (NODE_OPTIONS) and imported by the
// in-process fuzz tests.
const net = require('node:net');
const dgram = require('node:dgram');

const violations = [];

function isLoopback(host) {
  if (host === undefined || host === null || host === '' || host === 'localhost') return true;
  const text = String(host).replace(/^\[|\]$/g, '');
  return /^127\./.test(text) || text === '::1' || /^::ffff:127\./i.test(text) || /^0:0:0:0:0:0:0:1$/.test(text);
}

function record(kind, host, port) {
  const entry = `${kind} ${host}:${port}`;
  violations.push(entry);
  if (process.env.NETINTEL_FUZZ_CHILD === '1') process.stderr.write(`loopback-only: blocked ${entry}\n`);
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function patchedConnect(...args) {
  const first = args[0];
  if (Array.isArray(first)) return connect.apply(this, args); // internal normalised form
  if (first !== null && typeof first === 'object') {
    if (first.path === undefined && !isLoopback(first.host)) {
      record('tcp', first.host, first.port);
      args[0] = { ...first, host: '127.0.0.1', port: 1 };
    }
  } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    const host = typeof args[1] === 'string' ? args[1] : undefined;
    if (!isLoopback(host)) {
      record('tcp', host, first);
      args[0] = 1;
      args[1] = '127.0.0.1';
    }
  }
  return connect.apply(this, args);
};

const udpConnect = dgram.Socket.prototype.connect;
dgram.Socket.prototype.connect = function patchedUdpConnect(port, address, ...rest) {
  if (typeof address === 'string' && !isLoopback(address)) {
    record('udp', address, port);
    return udpConnect.call(this, 1, this.type === 'udp6' ? '::1' : '127.0.0.1', ...rest);
  }
  return udpConnect.call(this, port, address, ...rest);
};

const udpSend = dgram.Socket.prototype.send;
dgram.Socket.prototype.send = function patchedUdpSend(...args) {
  // send(msg[, offset, length][, port][, address][, callback]): the address is the string after a port.
  for (let i = 1; i < args.length - 1; i++) {
    if (typeof args[i] === 'number' && typeof args[i + 1] === 'string' && !isLoopback(args[i + 1])) {
      record('udp', args[i + 1], args[i]);
      args[i] = 1;
      args[i + 1] = this.type === 'udp6' ? '::1' : '127.0.0.1';
      break;
    }
  }
  return udpSend.apply(this, args);
};

module.exports = { violations, isLoopback };
