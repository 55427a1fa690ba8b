/**
 * Signed test zones made at test time with BIND's dnssec-keygen and
 * dnssec-signzone (Debian bind9-utils), for NSD to serve on 127.0.0.1:
 *
 *   test.            ECDSA P-256, NSEC: the trust anchor's zone, parent of all below, a wildcard
 *   child.test.      RSA/SHA-256, NSEC3: www A, a wildcard, NXDOMAIN and NODATA, CNAMEs into ed.test. and bogus.test.
 *   ed.test.         Ed25519, NSEC
 *   p384.test.       ECDSA P-384, NSEC
 *   bogus.test.      ECDSA P-256: the RRSIG over www A tampered after signing
 *   expired.test.    ECDSA P-256: www A carries a signature that expired in 2020
 *   nsec3.test.      ECDSA P-256, NSEC3 with opt-out: a wildcard, and the delegation below
 *   iter.test.       ECDSA P-256, NSEC3 hashed again with 200 iterations (test/support/nsec3-rechain.ts): a wildcard
 *   wrongdigest.test. ECDSA P-256, delegated with a DS of the right key tag and a wrong digest
 *   unsigned.test.   not signed, delegated without DS (NSEC proves it)
 *   optout.nsec3.test. not signed, delegated from the NSEC3 opt-out zone nsec3.test.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { NsdZone } from './nsd.js';
import { rechainNsec3 } from './nsec3-rechain.js';
import { editDs, swapSignatures, tamperSignatures } from './zone-edit.js';

const run = promisify(execFile);

export interface SignedZones {
  zones: NsdZone[];
  /** The KSK of `test.` as dnssec-keygen wrote it (K*.key): a DNSKEY trust anchor file. */
  anchorKeyFile: string;
  /** The DS of that key as dnssec-dsfromkey prints it. */
  anchorDs: string;
  /** The same key as delv's `-a` file reads it (`trust-anchors { ... };`). */
  delvAnchor: string;
  dir: string;
  cleanup(): Promise<void>;
}

interface ZoneSpec {
  name: string;
  algorithm: string | null;
  body: string;
  nsec3?: string[];
  /** NSEC3 iterations to hash the chain with again after signing (beyond what dnssec-signzone allows). */
  rechain?: number;
  /** The DS the parent publishes, from the key's. */
  ds?: (line: string) => string;
}

const SOA = (zone: string): string => `$TTL 300\n@ IN SOA ns.${zone} host.${zone} 1 3600 600 86400 300\n@ IN NS ns.${zone}\nns IN A 127.0.0.1\n`;

/** Records of the types netintel shows from generic data, to compare with dig's presentation. */
export const PRESENTATION_RECORDS = `_25._tcp.www IN TLSA 3 1 1 0B9FA5A59EED715C26C1020C711B4F6EC42D58B0015E14337A39DAD301C5AFC3
_443._tcp.www IN TLSA 2 0 2 ${'AB'.repeat(64)}
svc IN HTTPS 1 . alpn="h2,h3" port=8443 ipv4hint=192.0.2.1,192.0.2.2 ipv6hint=2001:db8::1
alias IN SVCB 0 www.child.test.
`;

/** CNAMEs into other zones, whose targets must validate too. */
const CNAME_RECORDS = 'cname-ed IN CNAME www.ed.test.\ncname-bogus IN CNAME www.bogus.test.\n';

const CHILDREN: ZoneSpec[] = [
  { name: 'child.test.', algorithm: 'RSASHA256', body: 'www IN A 192.0.2.10\n*.wild IN TXT "wildcard"\nmail IN MX 10 www.child.test.\n' + PRESENTATION_RECORDS + CNAME_RECORDS, nsec3: ['-3', '-', '-H', '0'] },
  { name: 'ed.test.', algorithm: 'ED25519', body: 'www IN A 192.0.2.11\n' },
  { name: 'p384.test.', algorithm: 'ECDSAP384SHA384', body: 'www IN A 192.0.2.12\n' },
  { name: 'bogus.test.', algorithm: 'ECDSAP256SHA256', body: 'www IN A 192.0.2.13\n' },
  { name: 'expired.test.', algorithm: 'ECDSAP256SHA256', body: 'www IN A 192.0.2.14\n' },
  { name: 'nsec3.test.', algorithm: 'ECDSAP256SHA256', body: 'www IN A 192.0.2.15\n*.wild IN A 192.0.2.16\noptout IN NS ns.optout.nsec3.test.\nns.optout IN A 127.0.0.1\n', nsec3: ['-3', 'AB12', '-H', '1', '-A'] },
  { name: 'iter.test.', algorithm: 'ECDSAP256SHA256', body: 'www IN A 192.0.2.17\n*.wild IN A 192.0.2.18\n', nsec3: ['-3', 'CD34', '-H', '0'], rechain: 200 },
  { name: 'wrongdigest.test.', algorithm: 'ECDSAP256SHA256', body: 'www IN A 192.0.2.19\n', ds: (line) => editDs(line, { corruptDigest: true }) },
  { name: 'unsigned.test.', algorithm: null, body: 'www IN A 192.0.2.20\n' },
  { name: 'optout.nsec3.test.', algorithm: null, body: 'www IN A 192.0.2.21\n' },
];

/** Generates the keys, signs the zones, and gives them with the trust anchor in each form. */
export async function buildSignedZones(): Promise<SignedZones> {
  const dir = await mkdtemp(join(tmpdir(), 'netintel-dnssec-'));
  const keygen = async (zone: string, algorithm: string, ksk: boolean): Promise<string> => {
    const size = algorithm.startsWith('RSA') ? ['-b', ksk ? '2048' : '1024'] : [];
    const { stdout } = await run('dnssec-keygen', ['-q', '-K', dir, '-a', algorithm, ...size, ...(ksk ? ['-f', 'KSK'] : []), '-n', 'ZONE', zone]);
    return stdout.trim();
  };
  const sign = async (zone: string, text: string, extra: string[] = []): Promise<string> => {
    const input = join(dir, `${zone}unsigned`);
    const output = join(dir, `${zone}signed`);
    await writeFile(input, text);
    await run('dnssec-signzone', ['-q', '-K', dir, '-d', dir, '-S', '-O', 'full', ...extra, '-o', zone, '-f', output, input]);
    return readFile(output, 'utf8');
  };

  const zones: NsdZone[] = [];
  const parentDs: string[] = [];
  for (const child of CHILDREN) {
    const text = SOA(child.name) + child.body;
    if (child.algorithm === null) {
      zones.push({ name: child.name.slice(0, -1), text });
      continue;
    }
    const ksk = await keygen(child.name, child.algorithm, true);
    await keygen(child.name, child.algorithm, false);
    let signed = await sign(child.name, text, child.nsec3);
    if (child.rechain !== undefined) signed = await rechainNsec3(signed, child.name, child.rechain, dir);
    if (child.name === 'bogus.test.') signed = tamperSignatures(signed, 'www.bogus.test.', 'A');
    if (child.name === 'expired.test.') {
      // Signed again with a validity window in the past (-P: no post-signing check, which would refuse it).
      const old = await sign(child.name, text, ['-P', '-s', '20200101000000', '-e', '20200201000000']);
      signed = swapSignatures(signed, old, 'www.expired.test.', 'A');
    }
    parentDs.push(...(await dsOf(ksk, dir)).map(child.ds ?? ((line) => line)));
    zones.push({ name: child.name.slice(0, -1), text: signed });
  }

  const anchorKsk = await keygen('test.', 'ECDSAP256SHA256', true);
  await keygen('test.', 'ECDSAP256SHA256', false);
  const delegations = CHILDREN.filter((c) => c.name.split('.').length === 3)
    .map((c) => `${c.name} IN NS ns.${c.name}\nns.${c.name} IN A 127.0.0.1\n`)
    .join('');
  const parent = await sign('test.', SOA('test.') + 'www IN A 192.0.2.1\n*.w IN TXT "wildcard"\n' + delegations + parentDs.join('\n') + '\n');
  zones.push({ name: 'test', text: parent });

  const anchorKeyFile = await readFile(join(dir, `${anchorKsk}.key`), 'utf8');
  const anchorDs = (await dsOf(anchorKsk, dir)).join('\n') + '\n';
  const keyLine = anchorKeyFile.split('\n').find((line) => /\sDNSKEY\s/.test(line) && !line.startsWith(';'))!;
  const [, , , flags, protocol, algorithm, ...key] = keyLine.trim().split(/\s+/);
  const delvAnchor = `trust-anchors {\n  "test." static-key ${flags} ${protocol} ${algorithm} "${key.join('')}";\n};\n`;
  return { zones, anchorKeyFile, anchorDs, delvAnchor, dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

async function dsOf(keyBase: string, dir: string): Promise<string[]> {
  const { stdout } = await run('dnssec-dsfromkey', ['-2', join(dir, `${keyBase}.key`)]);
  return stdout.trim().split('\n');
}

/** The signed zones served by NSD on 127.0.0.1, once it answers for `test.`; `stop` stops NSD and removes the files. */
export interface ServedSignedZones {
  zones: SignedZones;
  /** NSD's port: `127.0.0.1:<port>` is the resolver to give. */
  port: number;
  stop(): Promise<void>;
}

export async function serveSignedZones(nsdPath: string): Promise<ServedSignedZones> {
  const [{ startNsd }, { createDnsTransport }, { parseResolverAddress }] = await Promise.all([
    import('./nsd.js'),
    import('../../src/engine/dns/dns-transport.js'),
    import('../../src/engine/dns/resolver-address.js'),
  ]);
  const zones = await buildSignedZones();
  const nsd = await startNsd(nsdPath, zones.zones, async (port) => {
    const transport = createDnsTransport({ resolvers: [parseResolverAddress(`127.0.0.1:${port}`)], timeoutMs: 200, retries: 0 });
    try {
      return (await transport.query('test', 'SOA')).rcode === 'NOERROR';
    } finally {
      await transport.close();
    }
  });
  return {
    zones,
    port: nsd.port,
    stop: async () => {
      await nsd.stop();
      await zones.cleanup();
    },
  };
}
