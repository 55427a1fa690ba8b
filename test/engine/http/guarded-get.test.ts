/**
 * guardedGet(), the engine's one outward HTTPS GET, against the hostile
 * HTTPS peer of test/support/hostile-https.ts on 127.0.0.1 and a real DNS
 * server: the whole-fetch deadline, the caps before and after content
 * decoding, the redirect rules, the connect guard on every hop, the
 * context's abort signal. The checks that use it (MTA-STS, BIMI) are tested
 * against the same peer in test/engine/mail/hostile-fetches.test.ts.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectGuard, ConnectTarget } from '../../../src/engine/connect-guard.js';
import { createEngineContext, type EngineContext } from '../../../src/engine/context.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import { byteSizeText } from '../../../src/byte-size.js';
import { guardedGet, HTTPS_FETCH_KINDS, redirectsOf, type GuardedGetRequest, type HttpsFetchKind } from '../../../src/engine/http/guarded-get.js';
import { NetintelError } from '../../../src/errors.js';
import { startDnsServer, type DnsTestServer } from '../../support/dns-server.js';
import { HOSTILE_LOGO_HOST, hostileHostNames, hostileZone, startHostilePeer, type HostilePeer } from '../../support/hostile-https.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DEADLINE_MS = 1000;
const BOUND_MS = 5 * DEADLINE_MS;
const DOCUMENT = `<svg xmlns="http://www.w3.org/2000/svg"><title>${'a document of a few hundred octets '.repeat(10)}</title></svg>`;
const KIND: HttpsFetchKind = { what: 'test document host', accept: 'image/svg+xml', maxOctets: 1024, maxRedirects: 3, redirectRule: null };

let peer: HostilePeer;
let dns: DnsTestServer;
let ctx: EngineContext;

beforeAll(async () => {
  peer = await startHostilePeer({
    hostNames: hostileHostNames(),
    dripMs: 100,
    slowHopMs: 300,
    documents: {
      policy: { type: 'text/plain', body: 'version: STSv1\n', cap: 64 * 1024 },
      logo: { type: 'image/svg+xml', body: DOCUMENT, cap: KIND.maxOctets },
      certificate: { type: 'application/pem-certificate-chain', body: '-----BEGIN CERTIFICATE-----\n', cap: 256 * 1024 },
    },
  });
  dns = await startDnsServer({ records: hostileZone() });
  ctx = createEngineContext({ resolvers: [parseResolverAddress(dns.address)], timeoutMs: DEADLINE_MS, dnsRetries: 0 });
});

afterAll(async () => {
  await ctx.close();
  await peer.close();
  await dns.close();
});

const url = (path: string) => `https://${HOSTILE_LOGO_HOST}/${path}`;

async function get(path: string, request: Partial<GuardedGetRequest> = {}, context: EngineContext = ctx) {
  const started = Date.now();
  try {
    return await guardedGet(context, { ...KIND, url: url(path), connect: { port: peer.port, ca: peer.ca }, ...request });
  } finally {
    expect(Date.now() - started).toBeLessThan(BOUND_MS);
  }
}

async function failure(path: string, request: Partial<GuardedGetRequest> = {}, context: EngineContext = ctx): Promise<NetintelError> {
  const error = await get(path, request, context).then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(NetintelError);
  return error as NetintelError;
}

function recordingGuard(refuse: (address: string) => boolean): { guard: ConnectGuard; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    guard: (address: string, target: ConnectTarget) => {
      calls.push(`${target.what} ${target.name} ${address}:${target.port}`);
      if (refuse(address)) throw new NetintelError('forbidden', `${address} refused`, { details: { rule: 'private-target' } });
    },
  };
}

describe('guardedGet', () => {
  it('returns the document with its type, no redirects and the body whole', async () => {
    const document = await get('good/logo.svg');
    expect(document).toEqual({
      url: url('good/logo.svg'),
      final_url: url('good/logo.svg'),
      redirects: [],
      status: 200,
      retryAfter: null,
      contentType: 'image/svg+xml',
      contentEncoding: null,
      body: Buffer.from(DOCUMENT),
      truncated: false,
    });
  });

  it('decodes a gzip, deflate or br body and says which coding it came in', async () => {
    for (const coding of ['gzip', 'deflate', 'br']) {
      const document = await get(`encoded/logo.svg?${coding}`);
      expect(document).toMatchObject({ contentEncoding: coding, truncated: false });
      expect(document.body.toString()).toBe(DOCUMENT);
    }
  });

  it('refuses a content coding it cannot decode instead of passing the coded bytes on', async () => {
    const error = await failure('encoded/logo.svg?compress');
    expect(error.code).toBe('upstream');
    expect(error.message).toBe(`${url('encoded/logo.svg?compress')} is sent with Content-Encoding "compress", which netintel does not decode (gzip, deflate and br only, one at a time)`);
  });

  it('cuts the body at the cap, counted after decoding, so a gzip bomb stays small', async () => {
    const plain = await get('over-cap/logo.svg');
    expect(plain).toMatchObject({ truncated: true });
    expect(plain.body.length).toBe(KIND.maxOctets);
    // 16 MiB of spaces in 16 KiB of gzip: stopped at the cap, on the wire or decoded, whichever comes first.
    const bomb = await get('gzip-bomb/logo.svg');
    expect(bomb).toMatchObject({ truncated: true, contentEncoding: 'gzip' });
    expect(bomb.body.length).toBeLessThanOrEqual(KIND.maxOctets);
    const bigger = await get('gzip-bomb/logo.svg', { maxOctets: 64 * 1024 });
    expect(bigger).toMatchObject({ truncated: true, body: Buffer.alloc(64 * 1024, ' ') });
    const endless = await get('endless-body/logo.svg', { maxOctets: 200_000 });
    expect(endless.body.length).toBe(200_000);
  });

  it('ends a dripping peer at the deadline of the whole fetch, naming where it stopped', async () => {
    const headers = await failure('drip-headers/logo.svg');
    expect(headers.code).toBe('timeout');
    expect(headers.message).toBe(`no complete answer from ${url('drip-headers/logo.svg')} within ${DEADLINE_MS} ms (stopped before the headers were complete)`);
    const body = await failure('drip-body/logo.svg', { deadlineMs: 500 });
    expect(body.message).toMatch(/within 500 ms \(stopped after \d+ octets of the body\)$/);
    expect(body.details).toMatchObject({ timeout_ms: 500, redirects: [] });
  });

  it('counts redirects against the same deadline as the first hop', async () => {
    // Each hop answers in 300 ms, well within the 1 s deadline; the third or fourth hop meets it.
    const error = await failure('slow-redirects/logo.svg', { maxRedirects: 10 });
    expect(error.code).toBe('timeout');
    const redirects = redirectsOf(error);
    expect(redirects.length).toBeGreaterThanOrEqual(2);
    expect(redirects).toEqual(redirects.map((_, index) => url(`slow-redirects/hop${index + 1}/logo.svg`)));
    expect(error.message).toMatch(new RegExp(`^no complete answer from ${redirects.at(-1)!.replace(/[.?/]/g, '\\$&')} within 1000 ms`));
  });

  it('follows at most maxRedirects, and records them on the error', async () => {
    const error = await failure('too-many-redirects/logo.svg', { maxRedirects: 2 });
    expect(error.message).toBe(`more than 2 redirects from ${url('too-many-redirects/logo.svg')}`);
    expect(redirectsOf(error)).toEqual([url('too-many-redirects/hop1/logo.svg'), url('too-many-redirects/hop2/logo.svg')]);
    expect(error.details).toMatchObject({ location: url('too-many-redirects/hop3/logo.svg') });
  });

  it('follows no redirect when maxRedirects is 0, quoting the rule', async () => {
    const before = peer.requests.length;
    const error = await failure('redirect-loop/logo.svg', { maxRedirects: 0, redirectRule: 'RFC 8461 §3.3' });
    expect(error.message).toBe(`${url('redirect-loop/logo.svg')} answered HTTP 302 (a redirect to ${url('redirect-loop/a/logo.svg')}); redirects are not followed (RFC 8461 §3.3)`);
    expect(peer.requests.length - before).toBe(1);
  });

  it('judges the address of every hop with the connect guard, the first hop and each redirect', async () => {
    const { guard, calls } = recordingGuard(() => false);
    await failure('too-many-redirects/logo.svg', {}, { ...ctx, connectGuard: guard });
    expect(calls).toEqual(Array.from({ length: 4 }, () => `test document host ${HOSTILE_LOGO_HOST} 127.0.0.1:${peer.port}`));
  });

  it('sends nothing to a host the guard refuses, on the first hop or after a redirect', async () => {
    const before = peer.requests.length;
    const refusedFirst = recordingGuard(() => true);
    expect(await failure('good/logo.svg', {}, { ...ctx, connectGuard: refusedFirst.guard })).toMatchObject({ code: 'forbidden', message: '127.0.0.1 refused' });
    expect(peer.requests.length).toBe(before);
    const refusedLater = recordingGuard((address) => address !== '127.0.0.1');
    const error = await failure('to-private/logo.svg', {}, { ...ctx, connectGuard: refusedLater.guard });
    expect(error).toMatchObject({ code: 'forbidden', message: '169.254.169.254 refused' });
    expect(redirectsOf(error)).toEqual(['https://private.hostile.test/logo.svg']);
    expect(refusedLater.calls.at(-1)).toBe(`test document host private.hostile.test 169.254.169.254:${peer.port}`);
  });

  it('connects to an IP literal as given, judged by the guard and checked against the certificate', async () => {
    const { guard, calls } = recordingGuard(() => false);
    const document = await guardedGet({ ...ctx, connectGuard: guard }, { ...KIND, url: `https://127.0.0.1:${peer.port}/good/logo.svg`, connect: { ca: peer.ca } });
    expect(document.body.toString()).toBe(DOCUMENT);
    expect(calls).toEqual([`test document host 127.0.0.1 127.0.0.1:${peer.port}`]);
  });

  it('stops when the context is aborted (a server shutting down)', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const error = await failure('drip-body/logo.svg', { deadlineMs: 60_000 }, { ...ctx, signal: controller.signal });
    expect(error).toMatchObject({ code: 'unreachable', message: `the fetch of ${url('drip-body/logo.svg')} was stopped before it ended (the work was cancelled)` });
  });

  it('refuses a URL that is not https', async () => {
    await expect(guardedGet(ctx, { ...KIND, url: 'http://example.test/logo.svg' })).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('leaves no connection open after the fetches above', async () => {
    for (let waited = 0; peer.openConnections() > 0 && waited < BOUND_MS; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(peer.openConnections()).toBe(0);
  });
});

describe('one guarded GET for the engine', () => {
  /** The engine's other HTTP clients, which are not GETs of a document a domain points to. */
  const OTHER_CLIENTS = new Map([
    ['src/engine/dns/doh-exchange.ts', 'DNS over HTTPS is DNS: a POST of a DNS message to the resolver the operator chose'],
    ['src/engine/data/fetch-source.ts', 'dataset downloads: conditional, streamed to disk, MiB-sized, through the proxy of the environment'],
  ]);

  it('has no other module of the engine open HTTP connections', () => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (name.endsWith('.ts')) files.push(path);
      }
    };
    walk(join(ROOT, 'src', 'engine'));
    const clients = files
      .filter((file) => /(?:from\s+|import\()\s*'(?:node:https?|undici)'/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file))
      .filter((file) => !file.startsWith('src/engine/http/') && !OTHER_CLIENTS.has(file));
    expect(clients).toEqual([]);
  });

  it('documents each fetch kind in docs/limits.md with its cap and redirects', () => {
    const text = readFileSync(join(ROOT, 'docs', 'limits.md'), 'utf8');
    const section = text.slice(text.indexOf('## HTTPS fetches'));
    expect(section.length).toBeLessThan(text.length);
    const labels: Record<keyof typeof HTTPS_FETCH_KINDS, string> = { mtaStsPolicy: 'MTA-STS policy', bimiLogo: 'BIMI logo', bimiCertificate: 'BIMI Mark Certificate', rdap: 'RDAP answer' };
    for (const [key, kind] of Object.entries(HTTPS_FETCH_KINDS) as Array<[keyof typeof HTTPS_FETCH_KINDS, HttpsFetchKind]>) {
      const row = section.split('\n').find((line) => line.startsWith(`| ${labels[key]} `));
      expect(row, labels[key]).toBeDefined();
      const cells = row!.split('|').map((cell) => cell.trim());
      expect(cells[3]).toBe(byteSizeText(kind.maxOctets));
      expect(cells[5]).toMatch(kind.maxRedirects === 0 ? /^none/ : new RegExp(`^${kind.maxRedirects}\\b`));
    }
  });
});
