/**
 * A resolver that passes no DNSSEC records on, for differential tests: a
 * UDP forwarder on 127.0.0.1 that clears the DO bit (RFC 3225) of every
 * query before sending it to an upstream server, as some home routers and
 * old forwarders do. The upstream then leaves out RRSIG, NSEC and NSEC3
 * records, and answers DNSKEY and DS questions with unsigned RRsets.
 */
import dnsPacket from 'dns-packet';
import { startDnsProxy, type DnsProxy } from './dns-proxy.js';

export type DoDroppingProxy = DnsProxy;

export function startDoDroppingProxy(upstreamPort: number): Promise<DoDroppingProxy> {
  return startDnsProxy(upstreamPort, {
    rewrite(query) {
      const additionals = (query.additionals ?? []).map((record) => (record.type === 'OPT' ? { ...record, flags: 0, flag_do: false } : record));
      return dnsPacket.encode({ ...query, additionals } as dnsPacket.Packet);
    },
  });
}
