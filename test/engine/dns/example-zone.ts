import type { ZoneRecord } from '../../support/dns-server.js';

/** 255 + 255 + 10 octets: one TXT record made of three character strings. */
export const LONG_TXT_STRINGS = ['a'.repeat(255), 'b'.repeat(255), 'c'.repeat(10)];

export const V6_REVERSE = '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa';

/** A zone with every record type netintel models, a CNAME chain, an IDN and reverse names. */
export const EXAMPLE_ZONE: ZoneRecord[] = [
  {
    name: 'example.test',
    type: 'SOA',
    ttl: 3600,
    data: {
      mname: 'ns1.example.test',
      rname: 'hostmaster.example.test',
      serial: 2024010101,
      refresh: 7200,
      retry: 900,
      expire: 1209600,
      minimum: 300,
    },
  },
  { name: 'example.test', type: 'NS', ttl: 86400, data: 'ns1.example.test' },
  { name: 'example.test', type: 'NS', ttl: 86400, data: 'ns2.example.test' },
  { name: 'example.test', type: 'A', ttl: 300, data: '192.0.2.10' },
  { name: 'example.test', type: 'A', ttl: 300, data: '192.0.2.11' },
  { name: 'example.test', type: 'AAAA', ttl: 300, data: '2001:db8::10' },
  { name: 'example.test', type: 'MX', ttl: 3600, data: { preference: 10, exchange: 'mx1.example.test' } },
  { name: 'example.test', type: 'MX', ttl: 3600, data: { preference: 20, exchange: 'mx2.example.test' } },
  { name: 'example.test', type: 'TXT', ttl: 600, data: 'v=spf1 mx -all' },
  { name: 'example.test', type: 'CAA', ttl: 3600, data: { flags: 0, tag: 'issue', value: 'letsencrypt.org' } },
  { name: 'example.test', type: 'CAA', ttl: 3600, data: { flags: 128, tag: 'iodef', value: 'mailto:security@example.test' } },
  { name: 'mx1.example.test', type: 'A', ttl: 300, data: '192.0.2.25' },
  { name: 'long.example.test', type: 'TXT', ttl: 60, data: LONG_TXT_STRINGS },
  { name: '_dmarc.example.test', type: 'TXT', ttl: 300, data: 'v=DMARC1; p=reject' },
  {
    name: '_sip._tcp.example.test',
    type: 'SRV',
    ttl: 120,
    data: { priority: 10, weight: 60, port: 5060, target: 'sip.example.test' },
  },
  { name: 'www.example.test', type: 'CNAME', ttl: 120, data: 'web.example.test' },
  { name: 'web.example.test', type: 'CNAME', ttl: 60, data: 'origin.example.test' },
  { name: 'origin.example.test', type: 'A', ttl: 30, data: '192.0.2.80' },
  { name: 'dangling.example.test', type: 'CNAME', ttl: 120, data: 'gone.example.test' },
  { name: 'leaf.branch.example.test', type: 'A', ttl: 300, data: '192.0.2.90' },
  { name: 'xn--bcher-kva.example.test', type: 'A', ttl: 300, data: '192.0.2.20' },
  { name: '10.2.0.192.in-addr.arpa', type: 'PTR', ttl: 3600, data: 'example.test' },
  { name: V6_REVERSE, type: 'PTR', ttl: 3600, data: 'v6.example.test' },
];
