/**
 * The zones the mail tests serve from test/support/dns-server.ts: one
 * domain per situation the mail checks tell apart (SPF: nested includes
 * over the limit, void lookups, loops, two records, macros, sizes...; MX:
 * null MX, CNAME, IP literal, no address, reserved addresses, duplicates;
 * DMARC variants; MTA-STS and TLS-RPT), all under the reserved `.test` TLD.
 *
 * The MX hosts of the MX cases resolve to public-looking addresses: no test
 * connects to them, and documentation ranges would all read as reserved.
 */
import type { ZoneRecord } from '../../support/dns-server.js';

const txt = (name: string, data: string | string[]): ZoneRecord => ({ name, type: 'TXT', data });
const a = (name: string, data: string): ZoneRecord => ({ name, type: 'A', data });
const aaaa = (name: string, data: string): ZoneRecord => ({ name, type: 'AAAA', data });
const mx = (name: string, preference: number, exchange: string): ZoneRecord => ({ name, type: 'MX', data: { preference, exchange } });
const ptr = (name: string, data: string): ZoneRecord => ({ name, type: 'PTR', data });
const cname = (name: string, data: string): ZoneRecord => ({ name, type: 'CNAME', data });

/** An SPF record of nearly `octets` octets (within 20 below), split into 255-octet strings. */
export function longSpf(octets: number): string[] {
  let text = 'v=spf1';
  for (let i = 0; text.length + 20 + 5 <= octets; i++) text += ` ip4:198.51.100.${i % 250}`;
  text += ' -all';
  const strings: string[] = [];
  for (let offset = 0; offset < text.length; offset += 255) strings.push(text.slice(offset, offset + 255));
  return strings;
}

export const SPF_ZONE: ZoneRecord[] = [
  // A healthy record: an include, ip4/ip6, -all; a redirect to it.
  txt('good.test', 'v=spf1 ip4:192.0.2.0/24 include:_spf.good.test -all'),
  txt('good.test', 'google-site-verification=abc'),
  txt('_spf.good.test', 'v=spf1 ip4:198.51.100.0/24 ip6:2001:db8::/32 a:relay.good.test ~all'),
  a('relay.good.test', '203.0.113.9'),
  txt('redirect.test', 'v=spf1 redirect=good.test'),
  // Nested includes over the limit: 1 + 3 + 4 + 4 = 12 lookups.
  txt('over.test', 'v=spf1 include:n1.over.test -all'),
  txt('n1.over.test', 'v=spf1 include:n2.over.test a:h1.over.test a:h2.over.test ~all'),
  txt('n2.over.test', 'v=spf1 include:n3.over.test a:h1.over.test a:h2.over.test a:h3.over.test ~all'),
  txt('n3.over.test', 'v=spf1 a:h1.over.test a:h2.over.test a:h3.over.test a:h4.over.test -all'),
  ...['h1', 'h2', 'h3', 'h4'].map((host, i) => a(`${host}.over.test`, `203.0.113.${20 + i}`)),
  // Void lookups: three (over the limit of two) and two (at it).
  txt('void.test', 'v=spf1 a:nx1.void.test a:nx2.void.test mx:nomx.void.test -all'),
  txt('void2.test', 'v=spf1 a:nx1.void.test mx:nomx.void.test ip4:192.0.2.1 -all'),
  a('nomx.void.test', '192.0.2.200'),
  // An include loop.
  txt('loop.test', 'v=spf1 include:loop2.test -all'),
  txt('loop2.test', 'v=spf1 include:loop.test ~all'),
  // Two SPF records.
  txt('two.test', 'v=spf1 ip4:192.0.2.1 -all'),
  txt('two.test', 'v=spf1 mx -all'),
  // Macros: %{ir}, %{l1r+-}, %{d}; an exp with macros.
  txt('macro.test', 'v=spf1 exists:%{ir}.%{l1r+-}._spf.%{d} -all exp=why.macro.test'),
  a('4.2.0.192.alice._spf.macro.test', '127.0.0.2'),
  txt('why.macro.test', '%{i} may not send for %{d} (sender %{s}, helo %{h})'),
  // Syntax errors with positions.
  txt('syntax.test', 'v=spf1 ip4:192.0.2.1 ip4:1.2.3 foo:bar -all'),
  // Policies.
  txt('ptr.test', 'v=spf1 ptr -all'),
  txt('plusall.test', 'v=spf1 ip4:192.0.2.1 +all'),
  txt('neutral.test', 'v=spf1 ip4:192.0.2.1 ?all'),
  txt('noall.test', 'v=spf1 ip4:192.0.2.1'),
  txt('inclplus.test', 'v=spf1 include:plusall.test -all'),
  txt('after.test', 'v=spf1 -all ip4:192.0.2.1 redirect=good.test foo=bar'),
  txt('dupinc.test', 'v=spf1 include:_spf.good.test include:_spf.good.test -all'),
  txt('missinc.test', 'v=spf1 include:nothing.test -all'),
  txt('nothing.test', 'just text'),
  // Sizes.
  txt('long300.test', longSpf(300)),
  txt('long470.test', longSpf(475)),
  txt('long540.test', longSpf(545)),
  // An mx target with 11 MX records.
  txt('manymx.test', 'v=spf1 mx -all'),
  ...Array.from({ length: 11 }, (_, i) => mx('manymx.test', i, `m${i}.manymx.test`)),
  // Failures: an include that times out; a root that times out or SERVFAILs.
  txt('slowinc.test', 'v=spf1 include:silent.test ip4:192.0.2.1 -all'),
  txt('silent.test', 'v=spf1 -all'),
  txt('failing.test', 'v=spf1 -all'),
  txt('nospf.test', 'hello'),
  a('nospf.test', '192.0.2.77'),
  txt('macroinc.test', 'v=spf1 include:%{l}.users.macroinc.test -all'),
  txt('redir404.test', 'v=spf1 redirect=nothing.test'),
];

/** Names the DNS server never answers, and those it answers SERVFAIL. */
export const SILENT_NAMES = [
  'silent.test',
  'silentroot.test',
  '_dmarc.slowdmarc.test',
  'late.test._report._dmarc.silentreport.example',
  '170.32.33.45.in-addr.arpa',
];
export const SERVFAIL_NAMES = ['failing.test', 'servfail.test', 'ghostfail.rfc9989.test', '_dmarc.brokenwalk', 'mta-sts.stsdown.test', 'host.fwdfail.example'];

export const MX_ZONE: ZoneRecord[] = [
  mx('good.test', 10, 'mx1.good.test'),
  mx('good.test', 20, 'mx2.good.test'),
  a('mx1.good.test', '45.33.32.156'),
  aaaa('mx1.good.test', '2600:3c01::f03c:91ff:fe18:bb2f'),
  ptr('156.32.33.45.in-addr.arpa', 'mx1.good.test'),
  ptr('f.2.b.b.8.1.e.f.f.f.1.9.c.3.0.f.0.0.0.0.0.0.0.0.1.0.c.3.0.0.6.2.ip6.arpa', 'mx1.good.test'),
  a('mx2.good.test', '45.33.32.157'),
  ptr('157.32.33.45.in-addr.arpa', 'elsewhere.example.net'),
  mx('nullmx.test', 0, '.'),
  mx('mixednull.test', 0, '.'),
  mx('mixednull.test', 10, 'mx1.good.test'),
  a('nomx.test', '45.33.32.158'),
  txt('nomail.test', 'hello'),
  mx('cname.test', 10, 'alias.cname.test'),
  cname('alias.cname.test', 'real.cname.test'),
  a('real.cname.test', '45.33.32.159'),
  mx('literal.test', 10, '45.33.32.160'),
  mx('noaddr.test', 10, 'missing.noaddr.test'),
  mx('private.test', 10, 'mx.private.test'),
  a('mx.private.test', '10.0.0.25'),
  mx('dup.test', 10, 'mx1.good.test'),
  mx('dup.test', 20, 'mx1.good.test'),
  mx('slowmx.test', 10, 'silentmx.test'),
  mx('nullpref.test', 10, '.'),
  mx('ptrslow.test', 10, 'mx.ptrslow.test'),
  a('mx.ptrslow.test', '45.33.32.170'),
  // The PTR name's own A lookup gets SERVFAIL (SERVFAIL_NAMES): FCrDNS unknown, not a mismatch.
  mx('fwdfail.test', 10, 'mx.fwdfail.test'),
  a('mx.fwdfail.test', '45.33.32.171'),
  ptr('171.32.33.45.in-addr.arpa', 'host.fwdfail.example'),
];

export const MX_SILENT = ['silentmx.test', 'silentmxroot.test'];

export const DMARC_ZONE: ZoneRecord[] = [
  txt('_dmarc.good.test', 'v=DMARC1; p=reject; rua=mailto:dmarc@good.test; adkim=s; aspf=r'),
  txt('_dmarc.monitor.test', 'v=DMARC1; p=none; rua=mailto:agg@reports.example, mailto:agg@unauthorized.example; ruf=mailto:forensic@monitor.test'),
  txt('monitor.test._report._dmarc.reports.example', 'v=DMARC1'),
  txt('_dmarc.bad.test', 'v=DMARC1; p=block; sp=none; pct=150; adkim=x; fo=2; foo=bar; rua=dmarc@bad.test'),
  txt('_dmarc.two.test', 'v=DMARC1; p=none'),
  txt('_dmarc.two.test', 'v=DMARC1; p=reject'),
  txt('_dmarc.nop.test', 'v=DMARC1; rua=mailto:d@nop.test'),
  txt('_dmarc.partial.test', 'v=DMARC1; p=quarantine; pct=25; sp=none; rua=mailto:d@partial.test'),
  txt('_dmarc.order.test', 'p=reject; v=DMARC1'),
  txt('_dmarc.parent.test', 'v=DMARC1; p=reject; sp=quarantine; rua=mailto:d@parent.test'),
  txt('_dmarc.messy.test', 'v=DMARC1; p=none; p=reject; sp=maybe; rf=xml; ri=abc; bogus; rua=https://r.example/x'),
  txt('_dmarc.late.test', 'v=DMARC1; rua=mailto:a@late.test,mailto:b@silentreport.example; p=reject'),
  // RFC 9989's tags: np for names that do not exist, t=y testing, psd=n ends the tree walk here.
  txt('_dmarc.rfc9989.test', 'v=DMARC1; p=reject; sp=none; np=reject; t=y; psd=n; rua=mailto:d@rfc9989.test'),
  a('real.rfc9989.test', '192.0.2.10'),
  txt('_dmarc.badtags.test', 'v=DMARC1; p=reject; np=maybe; psd=x; t=sometimes; rua=mailto:d@badtags.test'),
  // A public suffix domain's record (psd=y) under a top label of its own, and a walk that fails above a record.
  txt('_dmarc.psd9989', 'v=DMARC1; p=quarantine; psd=y; rua=mailto:d@reports.psd9989'),
  txt('_dmarc.own.brokenwalk', 'v=DMARC1; p=reject'),
];

export const MTA_STS_ZONE: ZoneRecord[] = [
  txt('_mta-sts.good.test', 'v=STSv1; id=20240101T000000'),
  a('mta-sts.good.test', '127.0.0.1'),
  txt('_mta-sts.testing.test', 'v=STSv1; id=abc123'),
  a('mta-sts.testing.test', '127.0.0.1'),
  mx('testing.test', 10, 'mx.testing.test'),
  txt('_mta-sts.badpolicy.test', 'v=STSv1; id=x1'),
  a('mta-sts.badpolicy.test', '127.0.0.1'),
  txt('_mta-sts.untrusted.test', 'v=STSv1; id=u1'),
  a('mta-sts.untrusted.test', '127.0.0.1'),
  txt('_mta-sts.noid.test', 'v=STSv1;'),
  a('mta-sts.noid.test', '127.0.0.1'),
  // The policy host's own lookup gets SERVFAIL (SERVFAIL_NAMES).
  txt('_mta-sts.stsdown.test', 'v=STSv1; id=d1'),
  txt('_mta-sts.twosts.test', 'v=STSv1; id=a1'),
  txt('_mta-sts.twosts.test', 'v=STSv1; id=a2'),
  txt('_smtp._tls.good.test', 'v=TLSRPTv1; rua=mailto:tlsrpt@good.test,https://reports.good.test/tls'),
  txt('_smtp._tls.norua.test', 'v=TLSRPTv1; ruf=mailto:x@norua.test'),
  txt('_smtp._tls.two.test', 'v=TLSRPTv1; rua=mailto:a@two.test'),
  txt('_smtp._tls.two.test', 'v=TLSRPTv1; rua=mailto:b@two.test'),
];

/** Domains of the e-mail report tests: their MX hosts resolve to 127.0.0.1, where the tests run an SMTP server. */
export const REPORT_ZONE: ZoneRecord[] = [
  { name: 'mailhost.test', type: 'MX', data: { preference: 10, exchange: 'mx.mailhost.test' } },
  { name: 'mx.mailhost.test', type: 'A', data: '127.0.0.1' },
  { name: 'mailhost.test', type: 'TXT', data: 'v=spf1 mx -all' },
  { name: '_dmarc.mailhost.test', type: 'TXT', data: 'v=DMARC1; p=reject; rua=mailto:d@mailhost.test' },
  { name: '_smtp._tls.mailhost.test', type: 'TXT', data: 'v=TLSRPTv1; rua=mailto:tls@mailhost.test' },
  { name: 'slowdmarc.test', type: 'MX', data: { preference: 10, exchange: 'mx.mailhost.test' } },
  { name: 'slowdmarc.test', type: 'TXT', data: 'v=spf1 mx -all' },
  { name: 'closed.test', type: 'MX', data: { preference: 10, exchange: 'mx.closed.test' } },
  { name: 'mx.closed.test', type: 'A', data: '127.0.0.1' },
];

/** Every zone at once, for the report and command tests. */
export const MAIL_ZONE: ZoneRecord[] = [...SPF_ZONE, ...MX_ZONE, ...DMARC_ZONE, ...MTA_STS_ZONE, ...REPORT_ZONE];

export const MAIL_BEHAVIOURS = Object.fromEntries([
  ...[...SILENT_NAMES, ...MX_SILENT].map((name) => [name, 'silent' as const]),
  ...SERVFAIL_NAMES.map((name) => [name, 'servfail' as const]),
]);
