/**
 * Certificate trust against OpenSSL's verifier: chains made by `openssl`
 * (issuers that are no CA, path lengths, key usages, extended key usages,
 * lapsed dates) are served from 127.0.0.1, judged by judgeCertificate (what
 * `netintel tls`, `smtp` and `email` report), and verified by `openssl verify
 * -no_check_time -purpose sslserver` on the same certificates. netintel's
 * `trusted` means "the chain leads to a trust anchor, whatever the dates"
 * (docs/commands/tls.md), which is what that command answers.
 *
 * The dates are where the two can part: node:tls reports one error per
 * chain, the last OpenSSL met, and OpenSSL checks the dates after the CA
 * flags, path lengths and purposes. So an expired certificate hides every
 * other fault of its chain, and netintel must find those itself.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgeCertificate, probeTlsOptions } from '../../src/engine/tls/tls-certificate.js';

const OPENSSL = spawnSync('openssl', ['version'], { encoding: 'utf8' }).status === 0;
if (!OPENSSL) console.warn('SKIPPING test/interop/tls-trust-openssl.test.ts: openssl (Debian package openssl) not found');

const HOST = 'www.trust.test';

interface Made {
  pem: string;
  key: string;
}

/** What each certificate of the pool is: its issuer (none: self-signed), extensions (openssl x509v3_config lines), and whether it has lapsed. */
interface Spec {
  issuer: string | null;
  extensions: string[];
  expired?: boolean;
}

const CA = ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,cRLSign'];
const LEAF = [`subjectAltName=DNS:${HOST}`, 'basicConstraints=critical,CA:FALSE', 'keyUsage=critical,digitalSignature', 'extendedKeyUsage=serverAuth'];

/** Each fault that OpenSSL checks before the dates, in an issuer or in the server certificate, with a good one of each. */
const POOL: Record<string, Spec> = {
  root: { issuer: null, extensions: CA },
  rootPathZero: { issuer: null, extensions: ['basicConstraints=critical,CA:TRUE,pathlen:0', 'keyUsage=critical,keyCertSign'] },
  rootWithoutConstraints: { issuer: null, extensions: ['keyUsage=critical,keyCertSign'] },
  rootForClients: { issuer: null, extensions: [...CA, 'extendedKeyUsage=clientAuth'] },
  unknownRoot: { issuer: null, extensions: CA },
  inter: { issuer: 'root', extensions: CA },
  interExpired: { issuer: 'root', extensions: CA, expired: true },
  interNotCa: { issuer: 'root', extensions: ['basicConstraints=critical,CA:FALSE', 'keyUsage=critical,keyCertSign'] },
  interWithoutConstraints: { issuer: 'root', extensions: ['keyUsage=critical,keyCertSign'] },
  interNoCertSign: { issuer: 'root', extensions: ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,digitalSignature'] },
  interForClients: { issuer: 'root', extensions: [...CA, 'extendedKeyUsage=clientAuth'] },
  interForServers: { issuer: 'root', extensions: [...CA, 'extendedKeyUsage=serverAuth'] },
  interPathZero: { issuer: 'root', extensions: ['basicConstraints=critical,CA:TRUE,pathlen:0', 'keyUsage=critical,keyCertSign'] },
  interUnderPathZero: { issuer: 'interPathZero', extensions: CA },
  interUnderRootPathZero: { issuer: 'rootPathZero', extensions: CA },
  interUnderUnconstrainedRoot: { issuer: 'rootWithoutConstraints', extensions: CA },
  interUnderClientRoot: { issuer: 'rootForClients', extensions: CA },
  interUnknown: { issuer: 'unknownRoot', extensions: CA },
};

/** The server certificates: one of each kind under each issuer, current and lapsed. */
const LEAF_KINDS: Record<string, string[]> = {
  good: LEAF,
  forClients: [`subjectAltName=DNS:${HOST}`, 'keyUsage=critical,digitalSignature', 'extendedKeyUsage=clientAuth'],
  anyPurpose: [`subjectAltName=DNS:${HOST}`, 'keyUsage=critical,digitalSignature', 'extendedKeyUsage=anyExtendedKeyUsage'],
  noExtendedUsage: [`subjectAltName=DNS:${HOST}`, 'keyUsage=critical,digitalSignature'],
  certSignOnly: [`subjectAltName=DNS:${HOST}`, 'keyUsage=critical,keyCertSign', 'extendedKeyUsage=serverAuth'],
};

const LEAF_ISSUERS = ['root', 'inter', 'interExpired', 'interNotCa', 'interWithoutConstraints', 'interNoCertSign', 'interForClients', 'interForServers', 'interPathZero', 'interUnderPathZero', 'interUnderRootPathZero', 'interUnderUnconstrainedRoot', 'interUnderClientRoot', 'interUnknown'];

const TRUSTED_ROOTS = ['root', 'rootPathZero', 'rootWithoutConstraints', 'rootForClients'];

/** Makes a certificate with openssl: a P-256 key, the extensions, one day past (lapsed) or a year ahead. */
function makeCertificate(dir: string, name: string, spec: Spec, made: Map<string, Made>): Made {
  const key = join(dir, `${name}.key`);
  const pem = join(dir, `${name}.pem`);
  const extfile = join(dir, `${name}.ext`);
  writeFileSync(extfile, `${spec.extensions.join('\n')}\nsubjectKeyIdentifier=hash\n${spec.issuer ? 'authorityKeyIdentifier=keyid\n' : ''}`);
  execFileSync('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', key]);
  const csr = join(dir, `${name}.csr`);
  execFileSync('openssl', ['req', '-new', '-key', key, '-subj', `/CN=${name === 'leaf' ? HOST : name}/O=${name}`, '-out', csr]);
  const days = spec.expired ? '-1' : '365';
  const signer = spec.issuer === null ? ['-signkey', key] : ['-CA', join(dir, `${spec.issuer}.pem`), '-CAkey', join(dir, `${spec.issuer}.key`), '-set_serial', String(made.size + 1000)];
  execFileSync('openssl', ['x509', '-req', '-in', csr, ...signer, '-days', days, '-extfile', extfile, '-out', pem], { stdio: 'ignore' });
  const result = { pem: readFileSync(pem, 'utf8'), key: readFileSync(key, 'utf8') };
  made.set(name, result);
  return result;
}

/** The issuers of a certificate up to its root, nearest first. */
function issuersOf(name: string, specs: Record<string, Spec>): string[] {
  const list: string[] = [];
  for (let at = specs[name]!.issuer; at !== null; at = specs[at]!.issuer) list.push(at);
  return list;
}

describe.skipIf(!OPENSSL)('certificate trust agrees with OpenSSL', () => {
  const dir = OPENSSL ? mkdtempSync(join(tmpdir(), 'netintel-trust-')) : '';
  const made = new Map<string, Made>();
  const specs: Record<string, Spec> = { ...POOL };
  const servers = new Map<string, tls.Server>();
  let trusted: string[];

  beforeAll(() => {
    for (const [name, spec] of Object.entries(POOL)) makeCertificate(dir, name, spec, made);
    for (const issuer of LEAF_ISSUERS) {
      for (const [kind, extensions] of Object.entries(LEAF_KINDS)) {
        for (const expired of [false, true]) {
          const name = `${kind}${expired ? 'Expired' : ''}Under_${issuer}`;
          specs[name] = { issuer, extensions, expired };
          makeCertificate(dir, name, specs[name], made);
        }
      }
    }
    trusted = TRUSTED_ROOTS.map((name) => made.get(name)!.pem);
    writeFileSync(join(dir, 'trusted.pem'), trusted.join(''));
  }, 120_000);
  afterAll(() => {
    for (const server of servers.values()) server.close();
  });

  /** A server presenting the leaf and the issuers named (roots left out, as servers send them). */
  async function serve(leaf: string, sent: readonly string[]): Promise<number> {
    const key = `${leaf} ${sent.join(' ')}`;
    let server = servers.get(key);
    if (!server) {
      server = tls.createServer({ key: made.get(leaf)!.key, cert: [leaf, ...sent].map((name) => made.get(name)!.pem).join('') }, (socket) => socket.end());
      await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
      servers.set(key, server);
    }
    return (server.address() as AddressInfo).port;
  }

  /** netintel's judgement of the chain, as the probes make it. */
  async function ours(port: number): Promise<{ trusted: boolean; verifyError: string | null }> {
    const socket = tls.connect({ host: '127.0.0.1', port, ...probeTlsOptions(HOST, trusted) });
    await new Promise((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
    const judged = judgeCertificate(socket, HOST, { now: () => new Date() }, trusted)!;
    socket.destroy();
    return { trusted: judged.trusted, verifyError: judged.verify_error };
  }

  /** OpenSSL's verdict on the same certificates, the dates left out: does the chain lead to a trust anchor, for a TLS server? */
  function theirs(leaf: string, sent: readonly string[]): Promise<{ ok: boolean; output: string }> {
    const untrusted = join(dir, `sent-${leaf}-${sent.join('-') || 'none'}.pem`);
    writeFileSync(untrusted, sent.map((name) => made.get(name)!.pem).join(''));
    const args = ['verify', '-no_check_time', '-purpose', 'sslserver', '-CAfile', join(dir, 'trusted.pem'), ...(sent.length > 0 ? ['-untrusted', untrusted] : []), join(dir, `${leaf}.pem`)];
    return new Promise((resolve) => {
      execFile('openssl', args, { timeout: 10_000 }, (error, stdout, stderr) => resolve({ ok: error === null && /: OK$/m.test(stdout), output: `${stdout}${stderr}`.replace(/\s+/g, ' ').trim() }));
    });
  }

  async function compare(leaf: string, sent: readonly string[]) {
    const port = await serve(leaf, sent);
    const [judged, openssl] = await Promise.all([ours(port), theirs(leaf, sent)]);
    return { netintel: judged.trusted, openssl: openssl.ok, detail: `${leaf} sent [${sent.join(', ')}]: netintel ${judged.trusted} (${judged.verifyError}), openssl: ${openssl.output}` };
  }

  // The faults an expired server certificate used to hide, each with OpenSSL's verdict.
  const cases: Array<{ name: string; leaf: string; trusted: boolean }> = [
    { name: 'an expired certificate of a sound chain is trusted (expired, not untrusted)', leaf: 'goodExpiredUnder_inter', trusted: true },
    { name: 'an expired certificate under an issuer that is no CA', leaf: 'goodExpiredUnder_interNotCa', trusted: false },
    { name: 'an expired certificate under an issuer without basic constraints', leaf: 'goodExpiredUnder_interWithoutConstraints', trusted: false },
    { name: 'an expired certificate under a CA below its path length', leaf: 'goodExpiredUnder_interUnderPathZero', trusted: false },
    { name: 'an expired certificate under a CA for clients only', leaf: 'goodExpiredUnder_interForClients', trusted: false },
    { name: 'an expired certificate for clients only', leaf: 'forClientsExpiredUnder_inter', trusted: false },
    { name: 'an expired certificate whose key may only sign certificates', leaf: 'certSignOnlyExpiredUnder_inter', trusted: false },
    { name: 'a certificate under an expired intermediate whose own path is sound', leaf: 'goodUnder_interExpired', trusted: true },
  ];
  for (const each of cases) {
    it(each.name, async () => {
      const result = await compare(each.leaf, issuersOf(each.leaf, specs).filter((name) => !TRUSTED_ROOTS.includes(name)));
      expect({ netintel: result.netintel, openssl: result.openssl }, result.detail).toEqual({ netintel: each.trusted, openssl: each.trusted });
    });
  }

  it('agrees on every server certificate of the pool, with its chain sent whole or cut short', async () => {
    const leaves = Object.keys(specs).filter((name) => name.includes('Under_'));
    const samples: Array<{ leaf: string; sent: string[] }> = [];
    for (const leaf of leaves) {
      const issuers = issuersOf(leaf, specs).filter((name) => !TRUSTED_ROOTS.includes(name));
      samples.push({ leaf, sent: issuers });
      if (issuers.length > 0) samples.push({ leaf, sent: issuers.slice(1) });
    }
    // And chains sent with their root, or in another order (RFC 8446 §4.4.2), from a seeded sample.
    for (const pick of fc.sample(fc.record({ leaf: fc.constantFrom(...leaves), withRoot: fc.boolean(), reversed: fc.boolean() }), { numRuns: 40, seed: 5280 })) {
      const chain = issuersOf(pick.leaf, specs).filter((name) => pick.withRoot || !TRUSTED_ROOTS.includes(name));
      samples.push({ leaf: pick.leaf, sent: pick.reversed ? chain.reverse() : chain });
    }
    const disagreements: string[] = [];
    const queue = [...samples];
    const worker = async (): Promise<void> => {
      for (let sample = queue.shift(); sample !== undefined; sample = queue.shift()) {
        const result = await compare(sample.leaf, sample.sent);
        if (result.netintel !== result.openssl) disagreements.push(result.detail);
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    expect(disagreements).toEqual([]);
    expect(samples.length).toBeGreaterThan(300);
  }, 180_000);
});
