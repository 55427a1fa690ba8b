/**
 * Whether a certificate names the host (`hostname_match` of `netintel tls`,
 * `smtp` and `email`) against OpenSSL's own command: `openssl x509
 * -checkhost` and `-checkip`, Debian's OpenSSL in a process of its own.
 * Certificates are made by `openssl req` with generated subject alternative
 * names and common names: wildcards whole and partial, A-labels, upper case,
 * trailing dots, IP addresses, no SAN at all. The host names are what
 * netintel checks: names of letters, digits, hyphens and underscores (with or
 * without the dot that marks them absolute) and IP addresses.
 *
 * node:tls's checkServerIdentity, which netintel used before, differs from
 * OpenSSL on one kind of name: one written with a trailing dot in the
 * certificate (`DNS:mx.example.com.`), which node matched and OpenSSL does not.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isIPv4Text } from '../../src/engine/address/ip-text.js';
import { judgeCertificate, namesHost, probeTlsOptions } from '../../src/engine/tls/tls-certificate.js';

const OPENSSL = spawnSync('openssl', ['version'], { encoding: 'utf8' }).status === 0;
if (!OPENSSL) console.warn('SKIPPING test/interop/tls-hostname-openssl.test.ts: openssl (Debian package openssl) not found');

/** Labels names in certificates are made of: plain, A-labels, upper case, and the wildcard forms RFC 6125 §6.4.3 discusses. */
const PATTERN_LABELS = ['mx', 'www', 'mail', 'a', 'b1', 'x-y', 'a_b', 'WWW', 'Mx', 'xn--bcher-kva', 'example', 'test', 'com', 'co', 'uk', '*', 'w*', '*w', 'x*y', 'xn--*', '*.*'];
/** What a wildcard stands for in a host made from a pattern: nothing, part of a label, a whole label, an A-label. */
const FILLERS = ['', 'w', 'zz', 'mx', 'xn--bcher-kva'];
const IPS = ['192.0.2.1', '192.0.2.10', '2001:db8::1', '2001:db8::a'];

const patternArb = fc
  .record({ labels: fc.array(fc.constantFrom(...PATTERN_LABELS), { minLength: 1, maxLength: 4 }), absolute: fc.boolean() })
  .map(({ labels, absolute }) => `${labels.join('.')}${absolute ? '.' : ''}`);

const certificateArb = fc.record({
  dnsNames: fc.array(patternArb, { maxLength: 3 }),
  ips: fc.subarray(IPS, { maxLength: 2 }),
  commonName: fc.option(patternArb, { nil: null }),
  fillers: fc.array(fc.constantFrom(...FILLERS), { minLength: 3, maxLength: 3 }),
  extraHosts: fc.array(fc.oneof(patternArb.map((name) => name.replaceAll('*', 'w')), fc.constantFrom(...IPS)), { maxLength: 2 }),
});
type CertificateCase = typeof certificateArb extends fc.Arbitrary<infer T> ? T : never;

/** A host netintel could check: made of letters, digits, hyphens and underscores, or an IP address. */
const checkable = (host: string): boolean => IPS.includes(host) || /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?$/.test(host);

/** The hosts a certificate is checked against: its own names with each wildcard filled in, its common name, others. */
function hostsFor(each: CertificateCase): string[] {
  const names = [...each.dnsNames, ...(each.commonName ? [each.commonName] : [])];
  const hosts = new Set<string>([...each.ips, ...each.extraHosts]);
  names.forEach((name, i) => {
    hosts.add(name.replaceAll('*', each.fillers[i % each.fillers.length]!));
    hosts.add(name.replace(/\.$/, '').toLowerCase().replaceAll('*', 'zz'));
    hosts.add(`${name.replaceAll('*', 'w').replace(/\.$/, '')}.`);
  });
  return [...hosts].filter(checkable);
}

describe.skipIf(!OPENSSL)('whether a certificate names the host agrees with OpenSSL', () => {
  const dir = OPENSSL ? mkdtempSync(join(tmpdir(), 'netintel-hostname-')) : '';
  const key = join(dir, 'key.pem');
  let made = 0;

  beforeAll(() => {
    execFileSync('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', key]);
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A self-signed certificate with these names, made by openssl; its path. */
  function makeCertificate(dnsNames: readonly string[], ips: readonly string[], commonName: string | null): string {
    const path = join(dir, `c${made++}.pem`);
    const san = [...dnsNames.map((name) => `DNS:${name}`), ...ips.map((ip) => `IP:${ip}`)];
    const subject = commonName === null ? '/O=netintel test' : `/CN=${commonName}`;
    execFileSync('openssl', ['req', '-x509', '-new', '-key', key, '-subj', subject, '-days', '30', ...(san.length > 0 ? ['-addext', `subjectAltName=${san.join(',')}`] : []), '-out', path], { stdio: 'ignore' });
    return path;
  }

  /** OpenSSL's answer, from its own command; the host's trailing dot (absolute name) left out, as netintel does. */
  function opensslNames(path: string, host: string): Promise<boolean> {
    const ip = IPS.includes(host);
    const args = ['x509', '-noout', '-in', path, ip ? '-checkip' : '-checkhost', ip ? host : host.replace(/\.$/, '')];
    return new Promise((resolve, reject) => {
      execFile('openssl', args, { timeout: 10_000 }, (error, stdout) => {
        if (error) reject(error);
        else if (/ does match /.test(stdout)) resolve(true);
        else if (/ does NOT match /.test(stdout)) resolve(false);
        else reject(new Error(`openssl ${args.join(' ')} printed ${stdout}`));
      });
    });
  }

  /** Both verdicts for every host, the disagreements described. */
  async function disagreements(path: string, hosts: readonly string[]): Promise<string[]> {
    const certificate = new X509Certificate(readFileSync(path));
    const verdicts = await Promise.all(hosts.map(async (host) => ({ host, ours: namesHost(certificate, host), theirs: await opensslNames(path, host) })));
    return verdicts
      .filter(({ ours, theirs }) => ours !== theirs)
      .map(({ host, ours, theirs }) => `${host} against SAN [${certificate.subjectAltName ?? ''}] subject [${certificate.subject.replace(/\n/g, ', ')}]: netintel ${ours}, openssl ${theirs}`);
  }

  const examples: Array<{ name: string; dns: string[]; ips?: string[]; cn?: string; host: string; names: boolean }> = [
    { name: 'a name written with a trailing dot names nothing (node:tls matched it)', dns: ['mx.example.com.'], host: 'mx.example.com', names: false },
    { name: 'a common name with a trailing dot names nothing either', dns: [], cn: 'mx.example.com.', host: 'mx.example.com', names: false },
    { name: 'the host may be written absolute', dns: ['mx.example.com'], host: 'mx.example.com.', names: true },
    { name: 'names compare without regard to case', dns: ['MX.Example.COM'], host: 'mx.example.com', names: true },
    { name: 'a wildcard stands for one whole label', dns: ['*.example.com'], host: 'mx.example.com', names: true },
    { name: 'a wildcard does not stand for two labels', dns: ['*.example.com'], host: 'a.mx.example.com', names: false },
    { name: 'a wildcard is not allowed right under a top-level domain', dns: ['*.com'], host: 'example.com', names: false },
    { name: 'the common name counts when no SAN names a host', dns: [], cn: 'mx.example.com', host: 'mx.example.com', names: true },
    { name: 'the common name does not count beside a DNS SAN', dns: ['other.example.com'], cn: 'mx.example.com', host: 'mx.example.com', names: false },
    { name: 'an address is named by an IP SAN', dns: ['mx.example.com'], ips: ['192.0.2.1'], host: '192.0.2.1', names: true },
    { name: 'an address is not named by a DNS SAN holding its text', dns: ['192.0.2.1'], host: '192.0.2.1', names: false },
    { name: 'an IPv6 address is named whatever form the SAN was written in', dns: [], ips: ['2001:db8:0:0:0:0:0:1'], host: '2001:db8::1', names: true },
  ];
  for (const each of examples) {
    it(each.name, async () => {
      const path = makeCertificate(each.dns, each.ips ?? [], each.cn ?? null);
      expect(namesHost(new X509Certificate(readFileSync(path)), each.host)).toBe(each.names);
      expect(await opensslNames(path, each.host)).toBe(each.names);
    });
  }

  it('agrees on generated certificates and hosts', async () => {
    const found: string[] = [];
    let checked = 0;
    const queue = fc.sample(certificateArb, { numRuns: 60, seed: 6125 });
    const worker = async (): Promise<void> => {
      for (let each = queue.shift(); each !== undefined; each = queue.shift()) {
        const hosts = hostsFor(each);
        checked += hosts.length;
        found.push(...(await disagreements(makeCertificate(each.dnsNames, each.ips, each.commonName), hosts)));
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    expect(checked).toBeGreaterThan(250);
    expect(found).toEqual([]);
  }, 120_000);

  it('property: any text as the host gives a verdict, never an exception (a NUL, which Node will not pass to OpenSSL, names nothing)', () => {
    const certificate = new X509Certificate(readFileSync(makeCertificate(['mx.example.com', '*.example.net'], ['192.0.2.1'], 'mx.example.com')));
    expect(namesHost(certificate, 'mx.example.com\0.evil.test')).toBe(false);
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.constantFrom('mx.example.com', 'a.example.net', '192.0.2.1').map((host) => `${host}\0`)), (host) => {
        expect(typeof namesHost(certificate, host)).toBe('boolean');
      }),
      { numRuns: 2000, seed: 6125 },
    );
  });

  it('judges the certificate a server presents by the same rule (hostname_match)', async () => {
    const path = makeCertificate(['mx.example.com.'], [], 'mx.example.com');
    const server = tls.createServer({ key: readFileSync(key), cert: readFileSync(path) }, (socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const judge = async (host: string) => {
        const socket = tls.connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, ...probeTlsOptions(isIPv4Text(host) ? null : host, []) });
        await new Promise((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
        const judged = judgeCertificate(socket, host, { now: () => new Date() }, [])!;
        socket.destroy();
        return judged;
      };
      expect(await judge('mx.example.com')).toMatchObject({ hostname_match: false, checked_name: 'mx.example.com', san: ['DNS:mx.example.com.'] });
      expect(await opensslNames(path, 'mx.example.com')).toBe(false);
    } finally {
      server.close();
    }
  });
});
