/**
 * checkBimi() against a real DNS server and a real HTTPS server on
 * 127.0.0.1. The logo host's certificate is issued at test time by a test
 * CA that the check is told to trust; the Mark Certificates (with and
 * without the logotype extension, expired) are built here with node:crypto.
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicTargetGuard } from '../../../src/engine/connect-guard.js';
import { createEngineContext, type EngineContext } from '../../../src/engine/context.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import type { Finding } from '../../../src/engine/findings.js';
import { LOGOTYPE_OID } from '../../../src/engine/mail/bimi-certificate.js';
import { checkBimi, MAX_SVG_OCTETS, type CheckBimiOptions } from '../../../src/engine/mail/check-bimi.js';
import { NetintelError } from '../../../src/errors.js';
import { startDnsServer, type DnsServerOptions, type DnsTestServer, type ZoneRecord } from '../../support/dns-server.js';
import { createCertificateAuthority, issueCertificate } from '../../support/smtp-servers.js';

const VALID_SVG = [
  '<?xml version="1.0" encoding="UTF-8"?>',
  '<svg xmlns="http://www.w3.org/2000/svg" version="1.2" baseProfile="tiny-ps" viewBox="0 0 64 64">',
  '  <title>Example Brand</title>',
  '  <circle cx="32" cy="32" r="20" fill="#c00"/>',
  '</svg>',
].join('\n');

// ---------------------------------------------------------------------------
// A Mark Certificate: DER (X.690) of an X.509 v3 certificate with chosen extensions.

function der(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  const length = body.length < 0x80 ? Buffer.from([body.length]) : Buffer.from([0x82, body.length >> 8, body.length & 0xff]);
  return Buffer.concat([Buffer.from([tag]), length, body]);
}
const seq = (...items: Buffer[]) => der(0x30, ...items);
function oid(text: string): Buffer {
  const [a, b, ...rest] = text.split('.').map(Number);
  const bytes = [a! * 40 + b!];
  for (const part of rest) {
    const chunk = [part & 0x7f];
    for (let value = part >> 7; value > 0; value >>= 7) chunk.unshift((value & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return der(0x06, Buffer.from(bytes));
}
const utcTime = (date: Date) => der(0x17, Buffer.from(date.toISOString().replace(/[-:T]/g, '').slice(2, 14) + 'Z'));
const commonName = (cn: string) => seq(der(0x31, seq(oid('2.5.4.3'), der(0x0c, Buffer.from(cn)))));

function markCertificate(options: { logotype: boolean; notAfter: Date }): string {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const algorithm = seq(oid('1.2.840.10045.4.3.2'));
  const extensions = [seq(oid('2.5.29.19'), der(0x04, seq()))];
  // RFC 3709 logotype; its content is not read by the check, only its presence.
  if (options.logotype) extensions.push(seq(oid(LOGOTYPE_OID), der(0x04, seq())));
  const tbs = seq(
    der(0xa0, der(0x02, Buffer.from([2]))),
    der(0x02, Buffer.from([0x01, 0x23])),
    algorithm,
    commonName('Test Mark Authority'),
    seq(utcTime(new Date(Date.now() - 86_400_000 * 30)), utcTime(options.notAfter)),
    commonName('Example Brand'),
    publicKey.export({ type: 'spki', format: 'der' }),
    der(0xa3, seq(...extensions)),
  );
  const certificate = seq(tbs, algorithm, der(0x03, Buffer.from([0]), sign('sha256', tbs, privateKey)));
  return `-----BEGIN CERTIFICATE-----\n${certificate.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`;
}

// ---------------------------------------------------------------------------
// The zone and the logo server.

const txt = (name: string, text: string): ZoneRecord => ({ name, type: 'TXT', data: text });
const a = (name: string): ZoneRecord => ({ name, type: 'A', data: '127.0.0.1' });
const LOGO = 'https://logo.bimi.test';
const bimi = (domain: string, l: string, extra = '') => txt(`default._bimi.${domain}`, `v=BIMI1; l=${l}${extra}`);

const ZONE: ZoneRecord[] = [
  a('logo.bimi.test'),
  a('other.bimi.test'),
  // Prerequisites met, logo and certificate good.
  txt('_dmarc.brand.test', 'v=DMARC1; p=reject; rua=mailto:d@brand.test'),
  bimi('brand.test', `${LOGO}/valid.svg`, `; a=${LOGO}/vmc.pem`),
  txt('brand2._bimi.brand.test', `v=BIMI1; l=${LOGO}/script.svg`),
  txt('gz._bimi.brand.test', `v=BIMI1; l=${LOGO}/logo.svgz; a=${LOGO}/plain.pem`),
  txt('expired._bimi.brand.test', `v=BIMI1; l=${LOGO}/valid.svg; a=${LOGO}/expired.pem`),
  txt('http._bimi.brand.test', 'v=BIMI1; l=http://logo.bimi.test/valid.svg'),
  txt('two._bimi.brand.test', `v=BIMI1; l=${LOGO}/valid.svg`),
  txt('two._bimi.brand.test', `v=BIMI1; l=${LOGO}/notitle.svg`),
  txt('near._bimi.brand.test', `l=${LOGO}/valid.svg; v=BIMI1`),
  // Bad logos, each under a selector of brand.test.
  txt('notitle._bimi.brand.test', `v=BIMI1; l=${LOGO}/notitle.svg`),
  txt('big._bimi.brand.test', `v=BIMI1; l=${LOGO}/big.svg`),
  txt('type._bimi.brand.test', `v=BIMI1; l=${LOGO}/wrongtype.svg`),
  txt('loop._bimi.brand.test', `v=BIMI1; l=${LOGO}/loop-a.svg`),
  txt('moved._bimi.brand.test', `v=BIMI1; l=${LOGO}/moved.svg`),
  txt('twice._bimi.brand.test', `v=BIMI1; l=${LOGO}/twice-1.svg`),
  txt('lost._bimi.brand.test', `v=BIMI1; l=${LOGO}/lost-1.svg`),
  txt('gone._bimi.brand.test', `v=BIMI1; l=${LOGO}/gone.svg`),
  txt('plainhttp._bimi.brand.test', `v=BIMI1; l=${LOGO}/to-http.svg`),
  txt('noname._bimi.brand.test', 'v=BIMI1; l=https://nowhere.bimi.test/x.svg'),
  // A subdomain without records of its own: the organisational domain's apply.
  a('mail.brand.test'),
  // A subdomain with its own records.
  txt('_dmarc.own.brand.test', 'v=DMARC1; p=quarantine'),
  bimi('own.brand.test', `${LOGO}/valid.svg`),
  // Declined.
  txt('_dmarc.declined.test', 'v=DMARC1; p=reject'),
  txt('default._bimi.declined.test', 'v=BIMI1; l=; a=;'),
  // DMARC prerequisites not met.
  txt('_dmarc.monitor.test', 'v=DMARC1; p=none'),
  bimi('monitor.test', `${LOGO}/valid.svg`),
  txt('_dmarc.partial.test', 'v=DMARC1; p=quarantine; pct=50; sp=none'),
  bimi('partial.test', `${LOGO}/valid.svg`),
  txt('_dmarc.trying.test', 'v=DMARC1; p=reject; t=y'),
  bimi('trying.test', `${LOGO}/valid.svg`),
  txt('_dmarc.sub.weak.test', 'v=DMARC1; p=reject'),
  txt('_dmarc.weak.test', 'v=DMARC1; p=none; sp=reject'),
  bimi('sub.weak.test', `${LOGO}/valid.svg`),
  txt('_dmarc.spsub.test', 'v=DMARC1; p=none; sp=reject'),
  bimi('mail.spsub.test', `${LOGO}/valid.svg`),
  bimi('nodmarc.test', `${LOGO}/valid.svg`),
  // Its DMARC record cannot be read: the DNS server answers SERVFAIL for it (behaviours below).
  bimi('dmarcdown.test', `${LOGO}/valid.svg`),
  // Its logo and certificate host cannot be looked up: SERVFAIL again.
  txt('_dmarc.hostdown.test', 'v=DMARC1; p=reject'),
  bimi('hostdown.test', 'https://down.bimi.test/valid.svg', '; a=https://down.bimi.test/vmc.pem'),
];

let dns: DnsTestServer;
let web: https.Server;
let port: number;
let ctx: EngineContext;
let requests: string[] = [];
let fetchOptions: CheckBimiOptions['fetch'];

beforeAll(async () => {
  const ca = createCertificateAuthority('BIMI test CA');
  const hostCertificate = issueCertificate({ commonName: 'logo.bimi.test', dnsNames: ['logo.bimi.test', 'other.bimi.test'], issuer: ca });
  const vmc = markCertificate({ logotype: true, notAfter: new Date(Date.now() + 86_400_000 * 365) });
  const expired = markCertificate({ logotype: true, notAfter: new Date(Date.now() - 86_400_000) });
  const plain = markCertificate({ logotype: false, notAfter: new Date(Date.now() + 86_400_000 * 365) });
  const svg = 'image/svg+xml';
  const routes: Record<string, { status?: number; type?: string; body?: string | Buffer; location?: string }> = {
    '/valid.svg': { type: svg, body: VALID_SVG },
    '/logo.svgz': { type: svg, body: gzipSync(VALID_SVG) },
    '/script.svg': { type: svg, body: VALID_SVG.replace('<circle', '<script>alert(document.cookie)</script><circle') },
    '/notitle.svg': { type: svg, body: VALID_SVG.replace('<title>Example Brand</title>', '') },
    '/big.svg': { type: svg, body: VALID_SVG.replace('</svg>', `<desc>${'x'.repeat(MAX_SVG_OCTETS)}</desc></svg>`) },
    '/wrongtype.svg': { type: 'text/html; charset=utf-8', body: VALID_SVG },
    '/loop-a.svg': { status: 302, location: '/loop-b.svg' },
    '/loop-b.svg': { status: 302, location: `${LOGO}/loop-a.svg` },
    '/moved.svg': { status: 301, location: 'https://other.bimi.test/valid.svg' },
    '/twice-1.svg': { status: 302, location: '/twice-2.svg' },
    '/twice-2.svg': { status: 307, location: 'https://other.bimi.test/valid.svg' },
    '/lost-1.svg': { status: 302, location: '/lost-2.svg' },
    '/lost-2.svg': { status: 308, location: '/gone.svg' },
    '/to-http.svg': { status: 302, location: 'http://logo.bimi.test/valid.svg' },
    '/vmc.pem': { type: 'application/pem-certificate-chain', body: vmc + ca.cert },
    '/expired.pem': { type: 'application/pem-certificate-chain', body: expired },
    '/plain.pem': { type: 'application/pem-certificate-chain', body: plain },
  };
  dns = await startDnsServer({ records: ZONE, behaviours: { '_dmarc.dmarcdown.test': 'servfail', 'down.bimi.test': 'servfail' } } satisfies DnsServerOptions);
  web = https.createServer({ key: hostCertificate.key, cert: hostCertificate.cert }, (request, response) => {
    requests.push(`${request.headers.host}${request.url}`);
    const route = routes[request.url ?? ''];
    if (!route) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(route.status ?? 200, { ...(route.type ? { 'content-type': route.type } : {}), ...(route.location ? { location: route.location } : {}) }).end(route.body ?? '');
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', () => resolve()));
  port = (web.address() as AddressInfo).port;
  fetchOptions = { port, ca: ca.cert };
  ctx = createEngineContext({ resolvers: [parseResolverAddress(dns.address)], timeoutMs: 2000, dnsRetries: 0 });
});

afterAll(async () => {
  await ctx.close();
  await new Promise<void>((resolve) => web.close(() => resolve()));
  await dns.close();
});

const check = (domain: string, selector?: string, context: EngineContext = ctx) => checkBimi(context, domain, { fetch: fetchOptions, ...(selector ? { selector } : {}) });
const ids = (findings: readonly Finding[]) => findings.map((item) => item.id);
const byId = (findings: readonly Finding[], id: string) => findings.find((item) => item.id === id);
const errors = (findings: readonly Finding[]) => findings.filter((item) => item.severity === 'error').map((item) => item.id);

describe('checkBimi: the record, the logo and the certificate', () => {
  it('passes a domain with DMARC reject, a valid SVG Tiny PS logo and a Mark Certificate with the logotype extension', async () => {
    const result = await check('brand.test');
    expect(result).toMatchObject({
      kind: 'bimi',
      domain: 'brand.test',
      selector: 'default',
      status: 'pass',
      organisational_domain: 'brand.test',
      location: 'default._bimi.brand.test',
      inherited: false,
      tags: { v: 'BIMI1', l: `${LOGO}/valid.svg`, a: `${LOGO}/vmc.pem` },
      dmarc: { met: true, policy: 'reject', percent: 100, location: '_dmarc.brand.test' },
      logo: { url: `${LOGO}/valid.svg`, final_url: `${LOGO}/valid.svg`, content_type: 'image/svg+xml', octets: VALID_SVG.length, truncated: false, svg: { title: 'Example Brand', base_profile: 'tiny-ps' } },
      certificate: { url: `${LOGO}/vmc.pem`, certificate: { certificates: 2, subject: 'CN=Example Brand', issuer: 'CN=Test Mark Authority', logotype: true } },
    });
    expect(errors(result.findings)).toEqual([]);
    expect(ids(result.findings)).toEqual(expect.arrayContaining(['bimi_dmarc_enforced', 'bimi_record_found', 'bimi_svg_valid', 'bimi_certificate_found']));
    expect(byId(result.findings, 'bimi_certificate_found')!.message).toContain('not validated');
    expect(byId(result.findings, 'bimi_record_found')!.rfc).toBe('BIMI draft-10 §4.3');
  });

  it('reads a selector other than default, and finds script in its logo', async () => {
    const result = await check('brand.test', 'brand2');
    expect(result).toMatchObject({ selector: 'brand2', location: 'brand2._bimi.brand.test', status: 'fail' });
    expect(errors(result.findings)).toEqual(['bimi_svg_script']);
    expect(ids(result.findings)).toContain('bimi_no_certificate');
  });

  it('decompresses an SVGZ logo, and warns about a certificate without the logotype extension', async () => {
    const result = await check('brand.test', 'gz');
    expect(result.logo).toMatchObject({ compressed: true, svg: { title: 'Example Brand' } });
    expect(byId(result.findings, 'bimi_certificate_no_logotype')).toMatchObject({ severity: 'warning' });
    expect(result.status).toBe('pass');
  });

  it('reports an expired Mark Certificate', async () => {
    const result = await check('brand.test', 'expired');
    expect(errors(result.findings)).toEqual(['bimi_certificate_expired']);
  });

  it('finds a logo without title, one over the size cap (read no further), and one with the wrong content type', async () => {
    expect(errors((await check('brand.test', 'notitle')).findings)).toEqual(['bimi_svg_no_title']);
    const big = await check('brand.test', 'big');
    expect(big.logo).toMatchObject({ truncated: true, octets: MAX_SVG_OCTETS, svg: null });
    expect(errors(big.findings)).toEqual(['bimi_svg_too_large']);
    const wrongType = await check('brand.test', 'type');
    expect(byId(wrongType.findings, 'bimi_svg_content_type')).toMatchObject({ severity: 'warning', evidence: { content_type: 'text/html; charset=utf-8' } });
    expect(wrongType.status).toBe('pass');
  });

  it('follows a redirect to another HTTPS host, and stops a redirect loop, a redirect to http and a 404', async () => {
    const moved = await check('brand.test', 'moved');
    expect(moved.logo).toMatchObject({ final_url: 'https://other.bimi.test/valid.svg', redirects: ['https://other.bimi.test/valid.svg'] });
    expect(moved.status).toBe('pass');
    const before = requests.length;
    const loop = await check('brand.test', 'loop');
    expect(loop.logo!.error).toMatchObject({ code: 'upstream' });
    expect(loop.logo!.error!.message).toMatch(/redirect loop/);
    expect(requests.length - before).toBe(2);
    expect(errors(loop.findings)).toEqual(['bimi_svg_unavailable']);
    expect((await check('brand.test', 'plainhttp')).logo!.error!.message).toMatch(/not HTTPS/);
    expect((await check('brand.test', 'gone')).logo!.error!.message).toMatch(/HTTP 404/);
  });

  it('records both redirects of a logo moved twice, whether the last hop answers or fails', async () => {
    const twice = await check('brand.test', 'twice');
    expect(twice.logo).toMatchObject({
      final_url: 'https://other.bimi.test/valid.svg',
      redirects: [`${LOGO}/twice-2.svg`, 'https://other.bimi.test/valid.svg'],
      error: null,
    });
    expect(JSON.parse(JSON.stringify(twice)).logo.redirects).toHaveLength(2);
    const lost = await check('brand.test', 'lost');
    expect(lost.logo).toMatchObject({ final_url: null, redirects: [`${LOGO}/lost-2.svg`, `${LOGO}/gone.svg`], error: { code: 'upstream' } });
    expect(lost.logo!.error!.message).toBe(`${LOGO}/gone.svg answered HTTP 404`);
  });

  it('refuses an http l= without fetching it, and reports a host that does not resolve', async () => {
    const before = requests.length;
    const result = await check('brand.test', 'http');
    expect(errors(result.findings)).toEqual(['bimi_location_invalid']);
    expect(result.logo).toBeNull();
    expect(requests.length).toBe(before);
    expect((await check('brand.test', 'noname')).logo!.error).toMatchObject({ code: 'not_found' });
  });

  it('does not trust a logo host whose certificate the CA list does not prove', async () => {
    const result = await checkBimi(ctx, 'brand.test', { fetch: { port } });
    expect(result.logo!.error).toMatchObject({ code: 'tls' });
    expect(result.certificate!.error).toMatchObject({ code: 'tls' });
  });

  it('reports several records, and a record that does not start with v=BIMI1', async () => {
    const two = await check('brand.test', 'two');
    expect(two).toMatchObject({ status: 'fail', record: null, records: [expect.any(String), expect.any(String)] });
    expect(errors(two.findings)).toEqual(['bimi_multiple_records']);
    const near = await check('brand.test', 'near');
    expect(near.status).toBe('none');
    expect(ids(near.findings)).toEqual(expect.arrayContaining(['bimi_version_not_first', 'bimi_no_record']));
  });

  it('reads a declination without fetching anything', async () => {
    const before = requests.length;
    const result = await check('declined.test');
    expect(result).toMatchObject({ status: 'declined', record: 'v=BIMI1; l=; a=;', logo: null, certificate: null });
    expect(byId(result.findings, 'bimi_declined')).toMatchObject({ severity: 'info', rfc: 'BIMI draft-10 §4.3.1' });
    expect(requests.length).toBe(before);
  });

  it('says none when there is no record, asking the domain and then its organisational domain', async () => {
    const result = await check('brand.test', 'absent');
    expect(result.status).toBe('none');
    expect(byId(result.findings, 'bimi_no_record')!.evidence).toEqual({ asked: ['absent._bimi.brand.test'] });
  });
});

describe('checkBimi: the organisational domain and the DMARC prerequisites', () => {
  it('falls back to the organisational domain (the DMARC policy domain above) for the record', async () => {
    const result = await check('mail.brand.test');
    expect(result).toMatchObject({ organisational_domain: 'brand.test', location: 'default._bimi.brand.test', inherited: true, status: 'pass', dmarc: { met: true, location: '_dmarc.brand.test' } });
    expect(ids(result.findings)).toContain('bimi_record_inherited');
  });

  it('uses a subdomain\'s own record, and checks the organisational domain\'s DMARC too', async () => {
    const own = await check('own.brand.test');
    expect(own).toMatchObject({ organisational_domain: 'brand.test', location: 'default._bimi.own.brand.test', inherited: false, dmarc: { met: true, policy: 'quarantine', organisational_policy: 'reject' } });
    const weak = await check('sub.weak.test');
    expect(weak).toMatchObject({ organisational_domain: 'weak.test', dmarc: { met: false, policy: 'reject', organisational_policy: 'none' }, status: 'fail' });
    expect(errors(weak.findings)).toEqual(['bimi_dmarc_not_enforced']);
    expect(byId(weak.findings, 'bimi_dmarc_not_enforced')!.message).toContain('organisational domain weak.test');
  });

  it('fails p=none, pct below 100 and sp=none, and a missing DMARC record', async () => {
    const monitor = await check('monitor.test');
    expect(monitor).toMatchObject({ status: 'fail', dmarc: { met: false, policy: 'none' } });
    expect(errors(monitor.findings)).toEqual(['bimi_dmarc_not_enforced']);
    const partial = await check('partial.test');
    expect(errors(partial.findings).sort()).toEqual(['bimi_dmarc_pct', 'bimi_dmarc_subdomain_none']);
    expect(byId(partial.findings, 'bimi_dmarc_pct')!.rfc).toBe('BIMI draft-10 §1, §7.1');
    // RFC 9989's testing mode: receivers apply quarantine for the reject asked, and the policy is not yet enforced.
    const trying = await check('trying.test');
    expect(trying).toMatchObject({ status: 'fail', dmarc: { met: false, policy: 'quarantine' } });
    expect(errors(trying.findings)).toEqual(['bimi_dmarc_testing']);
    const missing = await check('nodmarc.test');
    expect(missing).toMatchObject({ dmarc: { met: false, location: null } });
    expect(errors(missing.findings)).toEqual(['bimi_dmarc_missing']);
  });

  it('says unknown, not fail, when the DMARC prerequisites could not be looked up', async () => {
    const result = await check('dmarcdown.test');
    expect(result).toMatchObject({ status: 'unknown', dmarc: { met: null, error: { code: 'upstream' } } });
    expect(errors(result.findings)).toEqual([]);
    expect(byId(result.findings, 'bimi_dmarc_unavailable')).toMatchObject({ severity: 'unknown', message: expect.stringContaining('SERVFAIL') });
  });

  it('is unknown, not fail, when the host of the logo and certificate cannot be looked up: nothing was fetched, nothing judged', async () => {
    const result = await check('hostdown.test');
    expect(result).toMatchObject({ status: 'unknown', dmarc: { met: true }, logo: { error: { code: 'upstream' } }, certificate: { error: { code: 'upstream' } } });
    expect(errors(result.findings)).toEqual([]);
    expect(byId(result.findings, 'bimi_svg_unavailable')).toMatchObject({ severity: 'unknown', evidence: { error: { code: 'upstream' } } });
    expect(byId(result.findings, 'bimi_certificate_unavailable')).toMatchObject({ severity: 'unknown' });
  });

  it('fails an inherited sp=reject whose organisational domain is p=none', async () => {
    const result = await check('mail.spsub.test');
    expect(result).toMatchObject({ organisational_domain: 'spsub.test', dmarc: { met: false, policy: 'reject', organisational_policy: 'none' } });
    expect(errors(result.findings)).toEqual(['bimi_dmarc_not_enforced']);
  });
});

describe('checkBimi with the public-target connect guard (as the HTTP API runs it)', () => {
  it('refuses the logo and certificate hosts on loopback without connecting', async () => {
    const before = requests.length;
    const result = await check('brand.test', undefined, { ...ctx, connectGuard: createPublicTargetGuard() });
    expect(result.logo!.error).toMatchObject({ code: 'forbidden' });
    expect(result.logo!.error!.message).toMatch(/BIMI logo host logo\.bimi\.test resolves to 127\.0\.0\.1, which is loopback/);
    expect(result.certificate!.error).toMatchObject({ code: 'forbidden' });
    expect(errors(result.findings).sort()).toEqual(['bimi_certificate_unavailable', 'bimi_svg_unavailable']);
    expect(requests.length).toBe(before);
  });
});

describe('checkBimi input', () => {
  it('refuses a bad selector or domain with invalid_input before asking anything', async () => {
    const asked = dns.queries.length;
    await expect(check('brand.test', 'bad selector')).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(check('.')).rejects.toBeInstanceOf(NetintelError);
    expect(dns.queries.length).toBe(asked);
  });
});
