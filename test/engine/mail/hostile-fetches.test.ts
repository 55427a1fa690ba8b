/**
 * The MTA-STS policy fetch and the BIMI logo and Mark Certificate fetches
 * against a hostile HTTPS peer on 127.0.0.1 (test/support/hostile-https.ts):
 * drips, endless and oversized bodies, a gzip bomb, redirects to a private
 * address, in a loop and without end, a wrong Content-Type, a reset in the
 * body, and a plain TCP server where TLS is expected. Each case checks the
 * verdict, the message, and that the check ends within a generous bound of
 * its 1 s deadline (the drips are one byte per 100 ms: an idle timer alone
 * would never fire).
 *
 * The context carries the server's connect guard with 127.0.0.1 let through,
 * so the peer is reachable and a redirect to 169.254.169.254 is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicTargetGuard, type ConnectGuard } from '../../../src/engine/connect-guard.js';
import { createEngineContext, type EngineContext } from '../../../src/engine/context.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import type { Finding } from '../../../src/engine/findings.js';
import { checkBimi, MAX_SVG_OCTETS, type BimiResult } from '../../../src/engine/mail/check-bimi.js';
import { checkMtaSts, type MtaStsResult } from '../../../src/engine/mail/check-mta-sts.js';
import { startDnsServer, type DnsTestServer } from '../../support/dns-server.js';
import { HOSTILE_LOGO_HOST, hostileHostNames, hostileZone, startHostilePeer, type HostileBehaviour, type HostilePeer } from '../../support/hostile-https.js';
import { createCertificateAuthority } from '../../support/smtp-servers.js';

const DEADLINE_MS = 1000;
/** A correctness bound, not a speed target: five times the deadline. */
const BOUND_MS = 5 * DEADLINE_MS;

const POLICY = 'version: STSv1\nmode: enforce\nmx: mx.example.test\nmax_age: 604800\n';
const SVG = [
  '<svg xmlns="http://www.w3.org/2000/svg" version="1.2" baseProfile="tiny-ps" viewBox="0 0 64 64">',
  '<title>Example Brand</title><circle cx="32" cy="32" r="20" fill="#c00"/></svg>',
].join('');

let peer: HostilePeer;
let dns: DnsTestServer;
let ctx: EngineContext;
const guarded: string[] = [];

beforeAll(async () => {
  peer = await startHostilePeer({
    hostNames: hostileHostNames(),
    dripMs: 100,
    documents: {
      policy: { type: 'text/plain; charset=utf-8', body: POLICY, cap: 64 * 1024 },
      logo: { type: 'image/svg+xml', body: SVG, cap: MAX_SVG_OCTETS },
      certificate: { type: 'application/pem-certificate-chain', body: createCertificateAuthority('Example Brand mark').cert, cap: 256 * 1024 },
    },
  });
  dns = await startDnsServer({ records: hostileZone() });
  const publicTargets = createPublicTargetGuard();
  const guard: ConnectGuard = (address, target) => {
    guarded.push(`${target.what} ${target.name} ${address}`);
    if (address !== '127.0.0.1') publicTargets(address, target);
  };
  ctx = createEngineContext({ resolvers: [parseResolverAddress(dns.address)], timeoutMs: DEADLINE_MS, dnsRetries: 0, connectGuard: guard });
});

afterAll(async () => {
  await ctx.close();
  await peer.close();
  await dns.close();
});

const byId = (findings: readonly Finding[], id: string) => findings.find((item) => item.id === id);

async function bounded<T>(run: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const result = await run();
  expect(Date.now() - started).toBeLessThan(BOUND_MS);
  return result;
}

const policyOf = (behaviour: HostileBehaviour | 'plain-tcp'): Promise<MtaStsResult> =>
  bounded(() =>
    checkMtaSts(ctx, `${behaviour === 'plain-tcp' ? 'good' : behaviour}.test`, { fetch: { port: behaviour === 'plain-tcp' ? peer.plainPort : peer.port, ca: peer.ca } }),
  );

/** The policy error, after checking that it is reported as the unavailable-policy finding. */
function policy_error(result: MtaStsResult) {
  expect(result.policy).toBeNull();
  expect(byId(result.findings, 'mta_sts_policy_unavailable')).toMatchObject({ severity: 'error', evidence: { error: result.policy_error } });
  return result.policy_error!;
}

describe('the MTA-STS policy fetch against a hostile policy host', () => {
  it('still reads a good policy', async () => {
    const result = await policyOf('good');
    expect(result).toMatchObject({ policy_error: null, policy: { mode: 'enforce' } });
  });

  it('stops headers dripped a byte at a time at the deadline', async () => {
    const error = policy_error(await policyOf('drip-headers'));
    expect(error.code).toBe('timeout');
    expect(error.message).toBe(`no complete answer from https://mta-sts.drip-headers.test/.well-known/mta-sts.txt within ${DEADLINE_MS} ms (stopped before the headers were complete)`);
  });

  it('stops a body dripped a byte at a time at the deadline', async () => {
    const error = policy_error(await policyOf('drip-body'));
    expect(error.code).toBe('timeout');
    expect(error.message).toMatch(/^no complete answer from https:\/\/mta-sts\.drip-body\.test\/\.well-known\/mta-sts\.txt within 1000 ms \(stopped after \d+ octets of the body\)$/);
  });

  it('stops reading an endless body at 64 KiB', async () => {
    const error = policy_error(await policyOf('endless-body'));
    expect(error).toEqual({ code: 'upstream', message: 'https://mta-sts.endless-body.test/.well-known/mta-sts.txt is larger than the 64 KiB limit' });
  });

  it('refuses a policy one octet over 64 KiB', async () => {
    expect(policy_error(await policyOf('over-cap')).message).toMatch(/is larger than the 64 KiB limit$/);
  });

  it('stops decompressing a gzip bomb at 64 KiB', async () => {
    expect(policy_error(await policyOf('gzip-bomb'))).toMatchObject({ code: 'upstream', message: expect.stringMatching(/is larger than the 64 KiB limit$/) });
  });

  it('follows no redirect, not even one to a private address (RFC 8461 §3.3)', async () => {
    const before = guarded.length;
    const error = policy_error(await policyOf('to-private'));
    expect(error.code).toBe('upstream');
    expect(error.message).toBe(
      'https://mta-sts.to-private.test/.well-known/mta-sts.txt answered HTTP 302 (a redirect to https://private.hostile.test/mta-sts.txt); redirects are not followed (RFC 8461 §3.3)',
    );
    expect(guarded.slice(before)).toEqual(['MTA-STS policy host mta-sts.to-private.test 127.0.0.1']);
  });

  it('asks once when the policy host redirects in a loop or without end', async () => {
    for (const behaviour of ['redirect-loop', 'too-many-redirects'] as const) {
      const before = peer.requests.length;
      expect(policy_error(await policyOf(behaviour)).message).toMatch(/answered HTTP 302 .*redirects are not followed \(RFC 8461 §3\.3\)$/);
      expect(peer.requests.length - before).toBe(1);
    }
  });

  it('reads a policy served with the wrong Content-Type and warns', async () => {
    const result = await policyOf('wrong-type');
    expect(result).toMatchObject({ policy_error: null, content_type: 'text/html; charset=utf-8', policy: { mode: 'enforce' } });
    expect(byId(result.findings, 'mta_sts_content_type')).toMatchObject({ severity: 'warning' });
  });

  it('reports a connection reset in the middle of the body as unreachable', async () => {
    const error = policy_error(await policyOf('reset-mid-body'));
    expect(error.code).toBe('unreachable');
    expect(error.message).toMatch(/^mta-sts\.reset-mid-body\.test \(127\.0\.0\.1\) (reset|closed) the connection after \d+ octets of the body/);
  });

  it('reports TLS to a server that answers in plain text as a TLS failure', async () => {
    const error = policy_error(await policyOf('plain-tcp'));
    expect(error).toEqual({ code: 'tls', message: 'TLS with mta-sts.good.test (127.0.0.1) failed: the server does not speak TLS on this port (it answered in plain text)' });
  });
});

const bimiOf = (behaviour: HostileBehaviour | 'plain-tcp'): Promise<BimiResult> =>
  bounded(() =>
    checkBimi(ctx, `${behaviour === 'plain-tcp' ? 'good' : behaviour}.test`, { fetch: { port: behaviour === 'plain-tcp' ? peer.plainPort : peer.port, ca: peer.ca } }),
  );
const logoUrl = (behaviour: string) => `https://${HOSTILE_LOGO_HOST}/${behaviour}/logo.svg`;
const certificateUrl = (behaviour: string) => `https://${HOSTILE_LOGO_HOST}/${behaviour}/vmc.pem`;

/** Both fetch errors, after checking that each is its unavailable finding and the verdict is fail. */
function bimiErrors(result: BimiResult) {
  expect(result.status).toBe('fail');
  expect(byId(result.findings, 'bimi_svg_unavailable')).toMatchObject({ severity: 'error', evidence: { error: result.logo!.error } });
  expect(byId(result.findings, 'bimi_certificate_unavailable')).toMatchObject({ severity: 'error', evidence: { error: result.certificate!.error } });
  return { logo: result.logo!.error!, certificate: result.certificate!.error! };
}

describe('the BIMI logo and certificate fetches against a hostile host', () => {
  it('still reads a good logo and certificate', async () => {
    const result = await bimiOf('good');
    expect(result.logo).toMatchObject({ error: null, truncated: false, redirects: [], svg: { title: 'Example Brand' } });
    expect(result.certificate).toMatchObject({ error: null, certificate: { subject: 'O=netintel tests, CN=Example Brand mark' } });
  });

  it('stops headers dripped a byte at a time at the deadline', async () => {
    const errors = bimiErrors(await bimiOf('drip-headers'));
    expect(errors.logo).toEqual({ code: 'timeout', message: `no complete answer from ${logoUrl('drip-headers')} within 1000 ms (stopped before the headers were complete)` });
    expect(errors.certificate).toEqual({ code: 'timeout', message: `no complete answer from ${certificateUrl('drip-headers')} within 1000 ms (stopped before the headers were complete)` });
  });

  it('stops bodies dripped a byte at a time at the deadline', async () => {
    const errors = bimiErrors(await bimiOf('drip-body'));
    expect(errors.logo.code).toBe('timeout');
    expect(errors.logo.message).toMatch(/^no complete answer from https:\/\/logo\.hostile\.test\/drip-body\/logo\.svg within 1000 ms \(stopped after \d+ octets of the body\)$/);
    expect(errors.certificate.message).toMatch(/vmc\.pem within 1000 ms \(stopped after \d+ octets of the body\)$/);
  });

  it('stops reading endless bodies at the caps: 32 KiB for the logo, 256 KiB for the certificate', async () => {
    const result = await bimiOf('endless-body');
    expect(result.logo).toMatchObject({ error: null, truncated: true, octets: MAX_SVG_OCTETS, svg: null });
    expect(byId(result.findings, 'bimi_svg_too_large')!.message).toBe('The BIMI logo is larger than the 32 KiB limit, the most receivers are advised to accept');
    expect(result.certificate).toMatchObject({ error: null, octets: 256 * 1024, certificate: null });
    expect(byId(result.findings, 'bimi_certificate_invalid')!.message).toBe(`The file at ${certificateUrl('endless-body')} is larger than the 256 KiB limit`);
    expect(result.status).toBe('fail');
  });

  it('refuses a logo and a certificate one octet over their caps', async () => {
    const result = await bimiOf('over-cap');
    expect(result.logo).toMatchObject({ truncated: true, octets: MAX_SVG_OCTETS });
    expect(result.findings.filter((item) => item.severity === 'error').map((item) => item.id)).toEqual(['bimi_svg_too_large', 'bimi_certificate_invalid']);
  });

  it('stops decompressing a Content-Encoding gzip bomb at the caps', async () => {
    const result = await bimiOf('gzip-bomb');
    expect(result.logo).toMatchObject({ truncated: true, octets: MAX_SVG_OCTETS, compressed: false });
    expect(byId(result.findings, 'bimi_svg_too_large')!.message).toMatch(/larger than the 32 KiB limit/);
    expect(byId(result.findings, 'bimi_certificate_invalid')!.message).toMatch(/larger than the 256 KiB limit$/);
  });

  it('names the 128 KiB limit for an SVGZ logo that decompresses beyond it', async () => {
    const result = await bimiOf('svgz-bomb');
    expect(result.logo).toMatchObject({ compressed: true, svg: null, error: null });
    const tooLarge = byId(result.findings, 'bimi_svg_too_large')!;
    expect(tooLarge).toMatchObject({ severity: 'error', evidence: { limit: 128 * 1024, compressed: true } });
    expect(tooLarge.message).toBe('The BIMI logo is gzip (SVGZ) that decompresses to more than the 128 KiB limit');
    expect(result.findings.map((item) => item.message).join('\n')).not.toMatch(/Buffer|131072/);
  });

  it('refuses a redirect to a private address before connecting, and records the redirect', async () => {
    const before = guarded.length;
    const result = await bimiOf('to-private');
    const errors = bimiErrors(result);
    expect(errors.logo.code).toBe('forbidden');
    expect(errors.logo.message).toMatch(/^BIMI logo host private\.hostile\.test resolves to 169\.254\.169\.254, which is link-local/);
    expect(errors.certificate.message).toMatch(/^BIMI certificate host private\.hostile\.test resolves to 169\.254\.169\.254/);
    expect(result.logo!.redirects).toEqual(['https://private.hostile.test/logo.svg']);
    expect(guarded.slice(before).filter((line) => line.includes('169.254.169.254')).sort()).toEqual([
      'BIMI certificate host private.hostile.test 169.254.169.254',
      'BIMI logo host private.hostile.test 169.254.169.254',
    ]);
  });

  it('stops a redirect loop, with the redirects followed recorded', async () => {
    const result = await bimiOf('redirect-loop');
    const errors = bimiErrors(result);
    expect(errors.logo).toEqual({ code: 'upstream', message: `redirect loop: ${logoUrl('redirect-loop/b')} sends back to ${logoUrl('redirect-loop/a')}` });
    expect(errors.certificate.message).toMatch(/^redirect loop: /);
    expect(result.logo!.redirects).toEqual([logoUrl('redirect-loop/a'), logoUrl('redirect-loop/b')]);
  });

  it('stops after 3 redirects, with the three recorded', async () => {
    const result = await bimiOf('too-many-redirects');
    const errors = bimiErrors(result);
    expect(errors.logo).toEqual({ code: 'upstream', message: `more than 3 redirects from ${logoUrl('too-many-redirects')}` });
    expect(result.logo!.redirects).toEqual([1, 2, 3].map((hop) => logoUrl(`too-many-redirects/hop${hop}`)));
  });

  it('holds one deadline over all redirects, however quick each hop is', async () => {
    const result = await bimiOf('slow-redirects');
    const errors = bimiErrors(result);
    // Each hop answers in 400 ms, within the 1 s deadline; the third hop meets it (the second on a slow machine).
    expect(errors.logo.code).toBe('timeout');
    const redirects = result.logo!.redirects;
    expect(redirects.length).toBeGreaterThanOrEqual(1);
    expect(redirects).toEqual(redirects.map((_, index) => logoUrl(`slow-redirects/hop${index + 1}`)));
    expect(errors.logo.message).toBe(`no complete answer from ${redirects.at(-1)} within 1000 ms (stopped before the headers were complete)`);
  });

  it('reads a logo with the wrong Content-Type and warns; the certificate type is not judged', async () => {
    const result = await bimiOf('wrong-type');
    expect(byId(result.findings, 'bimi_svg_content_type')).toMatchObject({ severity: 'warning', evidence: { content_type: 'text/html; charset=utf-8' } });
    expect(byId(result.findings, 'bimi_svg_valid')).toBeDefined();
    expect(result.certificate).toMatchObject({ error: null, certificate: { certificates: 1 } });
  });

  it('reports a connection reset in the middle of the body as unreachable', async () => {
    const errors = bimiErrors(await bimiOf('reset-mid-body'));
    expect(errors.logo.code).toBe('unreachable');
    expect(errors.logo.message).toMatch(/^logo\.hostile\.test \(127\.0\.0\.1\) (reset|closed) the connection after 100 octets of the body/);
    expect(errors.certificate.code).toBe('unreachable');
  });

  it('reports TLS to a server that answers in plain text as a TLS failure', async () => {
    const errors = bimiErrors(await bimiOf('plain-tcp'));
    expect(errors.logo).toEqual({ code: 'tls', message: 'TLS with logo.hostile.test (127.0.0.1) failed: the server does not speak TLS on this port (it answered in plain text)' });
    expect(errors.certificate.code).toBe('tls');
  });
});

describe('after the hostile fetches', () => {
  it('leaves no connection open', async () => {
    for (let waited = 0; peer.openConnections() > 0 && waited < BOUND_MS; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(peer.openConnections()).toBe(0);
  });
});
