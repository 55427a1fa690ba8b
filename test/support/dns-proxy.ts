/**
 * A DNS forwarder on 127.0.0.1 for differential tests, in front of an
 * upstream server (NSD): each UDP query is passed on, rewritten first if
 * asked, or answered by the proxy itself; with `tcp`, TCP on the same port
 * is passed through untouched (for answers too large for UDP).
 */
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket from 'dns-packet';
import { listenOnSamePort } from './peers.js';

export interface DnsProxy {
  /** `127.0.0.1:<port>`, the form resolver options take. */
  address: string;
  port: number;
  close(): Promise<void>;
}

export interface DnsProxyOptions {
  /** The proxy's own reply to a query, or undefined to pass the query on. */
  answer?: (query: dnsPacket.DecodedPacket) => Buffer | undefined;
  /** The query as it is sent upstream; by default the bytes as they came. */
  rewrite?: (query: dnsPacket.DecodedPacket, message: Buffer) => Buffer;
  /** Also pass TCP through on the same port. */
  tcp?: boolean;
}

export async function startDnsProxy(upstreamPort: number, options: DnsProxyOptions = {}): Promise<DnsProxy> {
  const createUdp = (): dgram.Socket => udpForwarder(upstreamPort, options);
  if (!options.tcp) {
    const socket = createUdp();
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const port = socket.address().port;
    return { address: `127.0.0.1:${port}`, port, close: () => new Promise<void>((resolve) => socket.close(() => resolve())) };
  }
  const tcp = tcpPassThrough(upstreamPort);
  const { udp, port } = await listenOnSamePort('127.0.0.1', createUdp, tcp);
  const close = async (): Promise<void> => {
    await Promise.all([new Promise<void>((resolve) => udp.close(() => resolve())), new Promise<void>((resolve) => tcp.close(() => resolve()))]);
  };
  return { address: `127.0.0.1:${port}`, port, close };
}

function udpForwarder(upstreamPort: number, { answer, rewrite }: DnsProxyOptions): dgram.Socket {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (message, client) => {
    let query: dnsPacket.DecodedPacket;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    const own = answer?.(query);
    if (own) {
      socket.send(own, client.port, client.address);
      return;
    }
    const upstream = dgram.createSocket('udp4');
    const done = (): void => upstream.close();
    const timer = setTimeout(done, 5000);
    upstream.on('message', (reply) => {
      clearTimeout(timer);
      socket.send(reply, client.port, client.address);
      done();
    });
    upstream.send(rewrite ? rewrite(query, message) : message, upstreamPort, '127.0.0.1');
  });
  return socket;
}

function tcpPassThrough(upstreamPort: number): net.Server {
  // Half-open on both sides, so a client that ends its side still reads the answer.
  return net.createServer({ allowHalfOpen: true }, (client) => {
    const upstream = net.connect({ port: upstreamPort, host: '127.0.0.1', allowHalfOpen: true });
    // pipe() passes each side's end on once what it read is written; a
    // failure on either side ends both.
    const fail = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', fail);
    upstream.on('error', fail);
    client.pipe(upstream).pipe(client);
  });
}
