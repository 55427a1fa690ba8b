/**
 * A resolver that passes no DNSSEC records on, for differential tests: a
 * UDP forwarder on 127.0.0.1 that clears the DO bit (RFC 3225) of every
 * query before sending it to an upstream server, as some home routers and
 * old forwarders do. The upstream then leaves out RRSIG, NSEC and NSEC3
 * records, and answers DNSKEY and DS questions with unsigned RRsets.
 */
import dgram from 'node:dgram';
import dnsPacket from 'dns-packet';

export interface DoDroppingProxy {
  /** `127.0.0.1:<port>`, the form resolver options take. */
  address: string;
  port: number;
  close(): Promise<void>;
}

export async function startDoDroppingProxy(upstreamPort: number): Promise<DoDroppingProxy> {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (message, client) => {
    let query: dnsPacket.DecodedPacket;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    const additionals = (query.additionals ?? []).map((record) => (record.type === 'OPT' ? { ...record, flags: 0, flag_do: false } : record));
    const upstream = dgram.createSocket('udp4');
    const done = (): void => upstream.close();
    const timer = setTimeout(done, 5000);
    upstream.on('message', (reply) => {
      clearTimeout(timer);
      socket.send(reply, client.port, client.address);
      done();
    });
    upstream.send(dnsPacket.encode({ ...query, additionals } as dnsPacket.Packet), upstreamPort, '127.0.0.1');
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const port = socket.address().port;
  return { address: `127.0.0.1:${port}`, port, close: () => new Promise<void>((resolve) => socket.close(() => resolve())) };
}
