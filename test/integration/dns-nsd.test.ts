/**
 * Interoperability: netintel's DNS engine against a real authoritative
 * server (NLnet Labs NSD) serving zone files, checked record by record
 * against BIND's dig for the same questions. Needs the Debian packages nsd
 * and bind9-dnsutils; skipped, with a warning, when either is missing.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNsd, type RunningNsd } from '../support/nsd.js';
import { findExecutable } from '../support/peers.js';
import { createDnsTransport, type DnsTransport } from '../../src/engine/dns/dns-transport.js';
import type { DnsAnswer } from '../../src/engine/dns/dns-result.js';
import type { DnsRecordType } from '../../src/engine/dns/dns-type.js';
import { resolveDns } from '../../src/engine/dns/resolve-dns.js';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';

const run = promisify(execFile);

const NSD = findExecutable('nsd');
const DIG = findExecutable('dig');
const missing = [NSD ? null : 'nsd (Debian package nsd)', DIG ? null : 'dig (Debian package bind9-dnsutils)'].filter(
  (item): item is string => item !== null,
);
if (missing.length > 0) {
  console.warn(`SKIPPING test/integration/dns-nsd.test.ts: ${missing.join(' and ')} not found on PATH or in /usr/sbin`);
}

const BIG_TXT = Array.from({ length: 6 }, (_, i) => `"${String(i).repeat(250)}"`);

const FORWARD_ZONE = `$ORIGIN example.test.
$TTL 300
@        3600  IN SOA   ns1.example.test. hostmaster.example.test. 2024010101 7200 900 1209600 300
@        86400 IN NS    ns1.example.test.
@        86400 IN NS    ns2.example.test.
@              IN A     192.0.2.10
@              IN A     192.0.2.11
@        600   IN AAAA  2001:db8:0:0:1:0:0:1
@        3600  IN MX    10 mx1.example.test.
@        3600  IN MX    20 mx2.example.test.
@        3600  IN CAA   0 issue "letsencrypt.org"
@        3600  IN CAA   128 iodef "mailto:security@example.test"
@        600   IN TXT   "v=spf1 mx -all"
multi    60    IN TXT   "${'a'.repeat(255)}" "${'b'.repeat(255)}" "with space"
big      60    IN TXT   ${BIG_TXT.join('\nbig 60 IN TXT ')}
_dmarc         IN TXT   "v=DMARC1; p=reject"
_sip._tcp 120  IN SRV   10 60 5060 sip.example.test.
www      120   IN CNAME web.example.test.
web      60    IN CNAME origin.example.test.
origin   30    IN A     192.0.2.80
ns1            IN A     192.0.2.53
ns2            IN A     192.0.2.54
mx1            IN A     192.0.2.25
xn--bcher-kva  IN A     192.0.2.20
`;

const REVERSE_ZONE = `$ORIGIN 2.0.192.in-addr.arpa.
$TTL 3600
@   IN SOA ns1.example.test. hostmaster.example.test. 1 7200 900 1209600 300
@   IN NS  ns1.example.test.
10  IN PTR example.test.
`;

/** A port free for both UDP and TCP on 127.0.0.1 at the time of asking. */
/** dig's presentation form of one record, as `+noall +answer` prints it (whitespace normalised). */
function present(answer: DnsAnswer): string {
  const fqdn = (name: string): string => (name === '.' ? '.' : `${name}.`);
  let rdata: string;
  switch (answer.type) {
    case 'A':
    case 'AAAA':
      rdata = answer.data;
      break;
    case 'NS':
    case 'CNAME':
    case 'PTR':
      rdata = fqdn(answer.data);
      break;
    case 'MX':
      rdata = `${answer.data.preference} ${fqdn(answer.data.exchange)}`;
      break;
    case 'SOA': {
      const soa = answer.data;
      rdata = `${fqdn(soa.mname)} ${fqdn(soa.rname)} ${soa.serial} ${soa.refresh} ${soa.retry} ${soa.expire} ${soa.minimum}`;
      break;
    }
    case 'TXT':
      rdata = answer.data.strings.map((s) => `"${s}"`).join(' ');
      break;
    case 'CAA':
      rdata = `${answer.data.flags} ${answer.data.tag} "${answer.data.value}"`;
      break;
    case 'SRV':
      rdata = `${answer.data.priority} ${answer.data.weight} ${answer.data.port} ${fqdn(answer.data.target)}`;
      break;
    default:
      rdata = String(answer.data);
  }
  return `${fqdn(answer.name)} ${answer.ttl_seconds} IN ${answer.type} ${rdata}`;
}

describe.skipIf(missing.length > 0)('DNS engine against NSD, compared with dig', () => {
  let port = 0;
  let nsd: RunningNsd | undefined;
  let transport: DnsTransport | undefined;

  async function dig(...args: string[]): Promise<string> {
    const { stdout } = await run(DIG!, [`@127.0.0.1`, '-p', String(port), '+tries=1', '+time=2', ...args]);
    return stdout;
  }

  async function digAnswers(name: string, type: string): Promise<string[]> {
    const out = await dig('+noall', '+answer', name, type);
    return out
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith(';'))
      .map((line) => line.trim().replace(/^(\S+)\s+(\d+)\s+(\S+)\s+(\S+)\s+/, '$1 $2 $3 $4 '));
  }

  beforeAll(async () => {
    nsd = await startNsd(
      NSD!,
      [
        { name: 'example.test', text: FORWARD_ZONE },
        { name: '2.0.192.in-addr.arpa', text: REVERSE_ZONE },
      ],
      async (candidate) => {
        transport ??= createDnsTransport({ resolvers: [parseResolverAddress(`127.0.0.1:${candidate}`)], timeoutMs: 200, retries: 0 });
        const results = await resolveDns(transport, { domain: 'example.test', types: ['SOA'] });
        return results[0]?.status === 'answer';
      },
    );
    port = nsd.port;
  }, 10_000);

  afterAll(async () => {
    await transport?.close();
    await nsd?.stop();
  });

  it.each<[string, DnsRecordType]>([
    ['example.test', 'A'],
    ['example.test', 'AAAA'],
    ['example.test', 'MX'],
    ['example.test', 'NS'],
    ['example.test', 'SOA'],
    ['example.test', 'CAA'],
    ['example.test', 'TXT'],
    ['multi.example.test', 'TXT'],
    ['_dmarc.example.test', 'TXT'],
    ['_sip._tcp.example.test', 'SRV'],
    ['www.example.test', 'CNAME'],
    ['www.example.test', 'A'],
  ])('gives the same records and TTLs as dig for %s %s', async (name, type) => {
    const [result] = await resolveDns(transport!, { domain: name, types: [type] });
    const expected = await digAnswers(name, type);
    expect(expected.length).toBeGreaterThan(0);
    expect(result?.status).toBe('answer');
    expect(result?.answers.map(present).sort()).toEqual([...expected].sort());
  });

  it('keeps the CNAME chain in the order NSD sends it', async () => {
    const [result] = await resolveDns(transport!, { domain: 'www.example.test', types: ['A'] });
    expect(result?.answers.map((a) => `${a.name} ${a.type}`)).toEqual([
      'www.example.test CNAME',
      'web.example.test CNAME',
      'origin.example.test A',
    ]);
  });

  it('reads a multi-string TXT record as joined text and raw strings', async () => {
    const [result] = await resolveDns(transport!, { domain: 'multi.example.test', types: ['TXT'] });
    expect(result?.answers[0]?.data).toEqual({
      text: `${'a'.repeat(255)}${'b'.repeat(255)}with space`,
      strings: ['a'.repeat(255), 'b'.repeat(255), 'with space'],
    });
  });

  it('falls back to TCP when NSD truncates an answer larger than 1232 octets, and agrees with dig', async () => {
    const [result] = await resolveDns(transport!, { domain: 'big.example.test', types: ['TXT'] });
    expect(result?.transport).toBe('tcp');
    expect(result?.answers).toHaveLength(6);
    expect(result?.answers.map(present).sort()).toEqual((await digAnswers('big.example.test', 'TXT')).sort());
  });

  it('queries an internationalised name in punycode like dig does', async () => {
    const [result] = await resolveDns(transport!, { domain: 'bücher.example.test', types: ['A'] });
    expect(result?.domain_unicode).toBe('bücher.example.test');
    expect(result?.answers.map(present)).toEqual(await digAnswers('xn--bcher-kva.example.test', 'A'));
  });

  it('finds the PTR of an IPv4 address like dig -x', async () => {
    const [result] = await resolveDns(transport!, { domain: '192.0.2.10' });
    expect(result?.answers.map(present)).toEqual(await digAnswers('10.2.0.192.in-addr.arpa', 'PTR'));
    expect(result?.answers.map((a) => a.data)).toEqual(['example.test']);
  });

  it('reports NXDOMAIN and NODATA as dig shows them in the header status', async () => {
    const [nx] = await resolveDns(transport!, { domain: 'nope.example.test', types: ['A'] });
    expect(nx).toMatchObject({ status: 'nxdomain', rcode: 'NXDOMAIN', answers: [] });
    expect(await dig('+noall', '+comments', 'nope.example.test', 'A')).toContain('status: NXDOMAIN');

    const [nodata] = await resolveDns(transport!, { domain: 'ns1.example.test', types: ['MX'] });
    expect(nodata).toMatchObject({ status: 'nodata', rcode: 'NOERROR', answers: [] });
    expect(await dig('+noall', '+comments', 'ns1.example.test', 'MX')).toContain('status: NOERROR');
  });

  it('gives one result per type for ALL against a real server', async () => {
    const results = await resolveDns(transport!, { domain: 'example.test', types: ['ALL'] });
    expect(results.map((r) => `${r.type}:${r.status}:${r.answers.length}`)).toEqual([
      'A:answer:2',
      'AAAA:answer:1',
      'CNAME:nodata:0',
      'MX:answer:2',
      'NS:answer:2',
      'SOA:answer:1',
      'TXT:answer:1',
      'CAA:answer:2',
    ]);
  });
});
