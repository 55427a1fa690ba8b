/**
 * DNS over HTTPS and TLS in front of a real authoritative server (NLnet
 * Labs NSD): answers larger than a UDP payload, a CNAME chain and NXDOMAIN
 * through both. Skipped, with a warning, when NSD is not installed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsTransport, type DnsTransport } from '../../../src/engine/dns/dns-transport.js';
import { resolveDns } from '../../../src/engine/dns/resolve-dns.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import { startNsd, type RunningNsd } from '../../support/nsd.js';
import { findExecutable } from '../../support/peers.js';
import { createTestPki, startDohServer, startDotServer, type EncryptedDnsServer } from './doh-servers.js';

const NSD = findExecutable('nsd');
if (!NSD) console.warn('SKIPPING test/engine/dns/doh-nsd.test.ts: nsd (Debian package nsd) not found on PATH or in /usr/sbin');

const ZONE = `$ORIGIN example.test.
$TTL 300
@     3600 IN SOA   ns1.example.test. hostmaster.example.test. 2024010101 7200 900 1209600 300
@          IN NS    ns1.example.test.
@          IN A     192.0.2.10
ns1        IN A     192.0.2.53
www        IN CNAME web.example.test.
web        IN A     192.0.2.80
${Array.from({ length: 8 }, (_, i) => `big IN TXT "${String(i).repeat(250)}"`).join('\n')}
`;

describe.skipIf(!NSD)('DoH and DoT in front of NSD', () => {
  let nsd: RunningNsd;
  const servers: EncryptedDnsServer[] = [];
  const transports: DnsTransport[] = [];
  const pki = createTestPki();

  beforeAll(async () => {
    let probe: DnsTransport | undefined;
    nsd = await startNsd(NSD!, [{ name: 'example.test', text: ZONE }], async (candidate) => {
      probe ??= createDnsTransport({ resolvers: [parseResolverAddress(`127.0.0.1:${candidate}`)], timeoutMs: 200, retries: 0 });
      const results = await resolveDns(probe, { domain: 'example.test', types: ['SOA'] });
      return results[0]?.status === 'answer';
    });
    await probe?.close();
    const upstream = { host: '127.0.0.1', port: nsd.port };
    servers.push(await startDohServer({ upstream, certificate: pki.server, http2: true }));
    servers.push(await startDohServer({ upstream, certificate: pki.server, http2: false }));
    servers.push(await startDotServer({ upstream, certificate: pki.server }));
  });

  afterAll(async () => {
    await Promise.all([...transports.map((t) => t.close()), ...servers.map((s) => s.close())]);
    await nsd?.stop();
  });

  const resolvers = () => [
    `https://127.0.0.1:${servers[0]!.port}/dns-query`,
    `https://127.0.0.1:${servers[1]!.port}/dns-query{?dns}`,
    `tls://127.0.0.1:${servers[2]!.port}`,
  ];

  it.each([0, 1, 2])('answers through resolver %i: a 2 kB TXT RRset, a CNAME chain, NXDOMAIN', async (index) => {
    const transport = createDnsTransport({ resolvers: [parseResolverAddress(resolvers()[index]!, { ca: [pki.ca.cert] })], timeoutMs: 3000, retries: 0 });
    transports.push(transport);
    const [big, www, missing] = await Promise.all([
      resolveDns(transport, { domain: 'big.example.test', types: ['TXT'] }),
      resolveDns(transport, { domain: 'www.example.test', types: ['A'] }),
      resolveDns(transport, { domain: 'nope.example.test', types: ['A'] }),
    ]);
    expect(big[0]!.transport).toBe(index === 2 ? 'tls' : 'https');
    expect(big[0]!.answers).toHaveLength(8);
    expect(big[0]!.answers.map((answer) => (answer.data as { text: string }).text).sort()).toEqual(Array.from({ length: 8 }, (_, i) => String(i).repeat(250)));
    expect(www[0]!.answers.map((answer) => `${answer.type} ${String(answer.data)}`)).toEqual(['CNAME web.example.test', 'A 192.0.2.80']);
    expect(missing[0]!.status).toBe('nxdomain');
  });
});
