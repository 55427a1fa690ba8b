/**
 * DNS answers in presentation (zone-file) form. Each expected line is what
 * `dig +noall +answer` (BIND 9.18) printed for the same record served by NSD,
 * with the tabs between fields turned into single spaces;
 * test/integration/dns-cli.test.ts repeats the comparison live when nsd and
 * dig are installed.
 */
import { describe, expect, it } from 'vitest';
import type { DnsAnswer } from '../../src/engine/dns/dns-result.js';
import { presentDnsAnswer, presentDnsData } from '../../src/output/dns-presentation.js';
import { DNS_SCHEMA } from '../../src/output/schemas/dns-schema.js';

function answer(name: string, type: string, ttl_seconds: number, data: unknown): DnsAnswer {
  return { name, type, ttl_seconds, data } as DnsAnswer;
}

describe('presentDnsAnswer', () => {
  it.each<[string, DnsAnswer, string]>([
    ['A', answer('example.test', 'A', 300, '192.0.2.10'), 'example.test. 300 IN A 192.0.2.10'],
    ['AAAA', answer('example.test', 'AAAA', 600, '2001:db8::1:0:0:1'), 'example.test. 600 IN AAAA 2001:db8::1:0:0:1'],
    ['NS', answer('example.test', 'NS', 86400, 'ns1.example.test'), 'example.test. 86400 IN NS ns1.example.test.'],
    ['CNAME', answer('www.example.test', 'CNAME', 120, 'web.example.test'), 'www.example.test. 120 IN CNAME web.example.test.'],
    ['PTR (IPv4)', answer('10.2.0.192.in-addr.arpa', 'PTR', 3600, 'example.test'), '10.2.0.192.in-addr.arpa. 3600 IN PTR example.test.'],
    [
      'PTR (IPv6)',
      answer('1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa', 'PTR', 3600, 'v6.example.test'),
      '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa. 3600 IN PTR v6.example.test.',
    ],
    ['MX', answer('example.test', 'MX', 3600, { preference: 10, exchange: 'mx1.example.test' }), 'example.test. 3600 IN MX 10 mx1.example.test.'],
    ['null MX (RFC 7505)', answer('pres.test', 'MX', 300, { preference: 0, exchange: '.' }), 'pres.test. 300 IN MX 0 .'],
    [
      'SOA',
      answer('example.test', 'SOA', 3600, {
        mname: 'ns1.example.test',
        rname: 'hostmaster.example.test',
        serial: 2024010101,
        refresh: 7200,
        retry: 900,
        expire: 1209600,
        minimum: 300,
      }),
      'example.test. 3600 IN SOA ns1.example.test. hostmaster.example.test. 2024010101 7200 900 1209600 300',
    ],
    [
      'SOA with a dot in the mailbox local part',
      answer('pres.test', 'SOA', 300, { mname: 'ns1.pres.test', rname: 'john\\.doe.pres.test', serial: 1, refresh: 7200, retry: 900, expire: 1209600, minimum: 300 }),
      'pres.test. 300 IN SOA ns1.pres.test. john\\.doe.pres.test. 1 7200 900 1209600 300',
    ],
    ['TXT', answer('example.test', 'TXT', 600, { text: 'v=spf1 mx -all', strings: ['v=spf1 mx -all'] }), 'example.test. 600 IN TXT "v=spf1 mx -all"'],
    ['empty TXT', answer('star.pres.test', 'TXT', 300, { text: '', strings: [''] }), 'star.pres.test. 300 IN TXT ""'],
    [
      'TXT with quotes, backslash, controls, UTF-8 and DEL',
      answer('q.pres.test', 'TXT', 300, {
        text: 'say "hi"back\\slashsemi;colontab\txnl\nutf8 bücherdel\x7f',
        strings: ['say "hi"', 'back\\slash', 'semi;colon', 'tab\tx', 'nl\n', 'utf8 bücher', 'del\x7f'],
      }),
      'q.pres.test. 300 IN TXT "say \\"hi\\"" "back\\\\slash" "semi;colon" "tab\\009x" "nl\\010" "utf8 b\\195\\188cher" "del\\127"',
    ],
    ['CAA', answer('example.test', 'CAA', 3600, { flags: 0, tag: 'issue', value: 'letsencrypt.org' }), 'example.test. 3600 IN CAA 0 issue "letsencrypt.org"'],
    [
      'CAA (critical) with quotes in the value',
      answer('q.pres.test', 'CAA', 300, { flags: 128, tag: 'issue', value: 'ca.example; account="x"' }),
      'q.pres.test. 300 IN CAA 128 issue "ca.example; account=\\"x\\""',
    ],
    [
      'SRV',
      answer('_sip._tcp.example.test', 'SRV', 120, { priority: 10, weight: 60, port: 5060, target: 'sip.example.test' }),
      '_sip._tcp.example.test. 120 IN SRV 10 60 5060 sip.example.test.',
    ],
    ['SRV "no service" (RFC 2782)', answer('srv.pres.test', 'SRV', 300, { priority: 0, weight: 0, port: 0, target: '.' }), 'srv.pres.test. 300 IN SRV 0 0 0 .'],
    ['DNAME (a name-valued type netintel does not model)', answer('d.pres.test', 'DNAME', 300, 'target.pres.test'), 'd.pres.test. 300 IN DNAME target.pres.test.'],
    ['unknown type (RFC 3597)', answer('u.pres.test', 'TYPE65534', 300, '\\# 6 0a0000010203'), 'u.pres.test. 300 IN TYPE65534 \\# 6 0A0000010203'],
    ['unknown type, empty data', answer('u2.pres.test', 'TYPE65534', 300, '\\# 0'), 'u2.pres.test. 300 IN TYPE65534 \\# 0'],
    ['a record at the root', answer('.', 'NS', 518400, 'a.root-servers.net'), '. 518400 IN NS a.root-servers.net.'],
    ['a wildcard owner', answer('*.example.test', 'A', 300, '192.0.2.99'), '*.example.test. 300 IN A 192.0.2.99'],
  ])('prints %s as dig does', (_what, record, expected) => {
    expect(presentDnsAnswer(record)).toBe(expected);
  });

  it.each<[string, string]>([
    ['a b.pres.test', 'a\\032b.pres.test.'],
    ['semi;colon.pres.test', 'semi\\;colon.pres.test.'],
    ['at@x.pres.test', 'at\\@x.pres.test.'],
    ['dollar$x.pres.test', 'dollar\\$x.pres.test.'],
    ['paren(x).pres.test', 'paren\\(x\\).pres.test.'],
    ['q"uote.pres.test', 'q\\"uote.pres.test.'],
    ['bücher.pres.test', 'b\\195\\188cher.pres.test.'],
  ])('escapes the name %j as dig does', (name, expected) => {
    expect(presentDnsAnswer(answer(name, 'A', 300, '192.0.2.1'))).toBe(`${expected} 300 IN A 192.0.2.1`);
    expect(presentDnsData('CNAME', name)).toBe(expected);
  });

  it('prints long unknown data unbroken, equal to dig\'s output once the spaces dig puts between hex words are gone', () => {
    const hex = Buffer.from(Array.from({ length: 40 }, (_, i) => i)).toString('hex');
    const dig = 'big.pres.test. 300 IN TYPE65535 \\# 40 000102030405060708090A0B0C0D0E0F101112131415161718191A1B 1C1D1E1F2021222324252627';
    const ours = presentDnsAnswer(answer('big.pres.test', 'TYPE65535', 300, `\\# 40 ${hex}`));
    expect(ours).toBe(`big.pres.test. 300 IN TYPE65535 \\# 40 ${hex.toUpperCase()}`);
    const [head, data] = [dig.slice(0, dig.indexOf('\\# 40 ') + 6), dig.slice(dig.indexOf('\\# 40 ') + 6)];
    expect(ours).toBe(head + data.replace(/ /g, ''));
  });
});

describe('DNS schema answers column', () => {
  const base = {
    kind: 'dns',
    target: 'example.test',
    domain: 'example.test',
    domain_unicode: 'example.test',
    type: 'MX',
    status: 'answer',
    rcode: 'NOERROR',
    resolver: '192.0.2.53:53',
    transport: 'udp',
    latency_ms: 1.5,
  };

  it('is the answer section in zone-file form, one record per line, in answer order', () => {
    const record = {
      ...base,
      answers: [
        answer('example.test', 'MX', 3600, { preference: 20, exchange: 'mx2.example.test' }),
        answer('example.test', 'MX', 3600, { preference: 10, exchange: 'mx1.example.test' }),
      ],
    };
    expect(DNS_SCHEMA.presentColumn!(record, 'answers')).toBe('example.test. 3600 IN MX 20 mx2.example.test.\nexample.test. 3600 IN MX 10 mx1.example.test.');
  });

  it('is empty for NODATA and NXDOMAIN, and the other columns read straight from the record', () => {
    const record = { ...base, status: 'nodata', answers: [] };
    expect(DNS_SCHEMA.presentColumn!(record, 'answers')).toBe('');
    expect(DNS_SCHEMA.columns.filter((c) => c !== 'answers').map((c) => DNS_SCHEMA.presentColumn!(record, c))).toEqual([
      'example.test',
      'example.test',
      'example.test',
      'MX',
      'nodata',
      'NOERROR',
      '192.0.2.53:53',
      'udp',
      1.5,
    ]);
  });
});
