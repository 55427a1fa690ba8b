/**
 * Every engine entry point, given hostile names, settles to a value or to a
 * NetintelError: no other exception, no synchronous throw out of an async
 * function, no unhandled rejection or uncaught exception while it runs.
 * Two worlds: a local DNS server (the lookups get answers and go deep:
 * SPF trees, DMARC report URIs, MX hosts, DNSBL zones) and an address no
 * packet can reach (every lookup fails at once).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lookupAsn } from '../../src/engine/asn/lookup-asn.js';
import { checkBlacklist } from '../../src/engine/blacklist/check-blacklist.js';
import { createEngineContext, type EngineContext } from '../../src/engine/context.js';
import { resolveHostAddresses } from '../../src/engine/dns/host-addresses.js';
import { resolveDns } from '../../src/engine/dns/resolve-dns.js';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { lookupIp } from '../../src/engine/ip/lookup-ip.js';
import { checkDmarc } from '../../src/engine/mail/check-dmarc.js';
import { checkEmail, runEmailTests } from '../../src/engine/mail/check-email.js';
import { checkMtaSts } from '../../src/engine/mail/check-mta-sts.js';
import { checkSpf } from '../../src/engine/mail/check-spf.js';
import { checkTlsRpt } from '../../src/engine/mail/check-tls-rpt.js';
import { resolveMx } from '../../src/engine/mail/resolve-mx.js';
import { probeSmtp } from '../../src/engine/smtp/probe-smtp.js';
import { NetintelError } from '../../src/errors.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { closedPort } from '../support/smtp-servers.js';
import { EXAMPLE_ZONE } from './dns/example-zone.js';
import { fuzz, hostileDomain, hostileIp } from './hostile-inputs.js';

const HOSTILE_SPF = 'v=spf1 include:. a:xn--.com mx:ex\u200bample.com a:1e3.0.0.1 exists:%{ir}.%{l}.x.example.test include:%{d}.. include:loop.example.test ptr:.. ip4:1.2.3.4/33 ip6:::ffff:1.2.3.4/129 redirect=.. -all';

const ZONE = [
  ...EXAMPLE_ZONE,
  { name: 'spf.example.test', type: 'TXT' as const, data: HOSTILE_SPF },
  { name: 'spf.example.test', type: 'MX' as const, data: { preference: 10, exchange: '.' } },
  { name: 'spf.example.test', type: 'MX' as const, data: { preference: 20, exchange: 'xn--zz-.example.test' } },
  { name: 'loop.example.test', type: 'TXT' as const, data: 'v=spf1 include:spf.example.test include:loop.example.test ?all' },
  { name: '_dmarc.spf.example.test', type: 'TXT' as const, data: 'v=DMARC1; p=reject; rua=mailto:a@.,mailto:b@xn--.com,mailto:c@1e3.0.0.1; ruf=mailto:\u200b@x.test' },
  { name: '_mta-sts.spf.example.test', type: 'TXT' as const, data: 'v=STSv1; id=..' },
  { name: '_smtp._tls.spf.example.test', type: 'TXT' as const, data: 'v=TLSRPTv1; rua=mailto:@.' },
  { name: 'mta-sts.spf.example.test', type: 'A' as const, data: '127.0.0.1' },
];

const names = fc.oneof(
  { weight: 3, arbitrary: hostileDomain },
  { weight: 1, arbitrary: fc.constantFrom('example.test', 'spf.example.test', 'loop.example.test', 'EXAMPLE.TEST.', '.', 'xn--zz-.example.test') },
);

let server: DnsTestServer;
let answering: EngineContext;
let unreachable: EngineContext;
let port: number;
const stray: unknown[] = [];
const onStray = (error: unknown) => stray.push(error);

beforeAll(async () => {
  server = await startDnsServer({ records: ZONE });
  port = await closedPort();
  answering = createEngineContext({ resolvers: [parseResolverAddress(server.address)], timeoutMs: 400, dnsRetries: 0 });
  unreachable = createEngineContext({ resolvers: [parseResolverAddress('[1::8.8.8.8]:53')], timeoutMs: 400, dnsRetries: 0 });
  process.on('unhandledRejection', onStray);
  process.on('uncaughtException', onStray);
});

afterAll(async () => {
  process.off('unhandledRejection', onStray);
  process.off('uncaughtException', onStray);
  await answering.close();
  await unreachable.close();
  await server.close();
});

/** Runs `call` and checks it settles to a value or a NetintelError, and that nothing escaped meanwhile. */
async function settles(call: () => Promise<unknown> | unknown): Promise<void> {
  let outcome: unknown;
  try {
    outcome = await call();
  } catch (error) {
    if (!(error instanceof NetintelError)) throw new Error(`rejected with ${(error as Error)?.constructor?.name}: ${String(error)}`);
    return;
  }
  expect(outcome).toBeDefined();
  // Give stray rejections of the call's promises a turn to surface.
  await new Promise((resolve) => setImmediate(resolve));
  expect(stray).toEqual([]);
}

type EntryPoint = [label: string, call: (ctx: EngineContext, input: string) => Promise<unknown> | unknown, runs: number];

const ENTRY_POINTS: EntryPoint[] = [
  ['resolveDns', async (ctx, input) => resolveDns(await ctx.dnsTransport(), { domain: input, types: ['A', 'MX', 'TXT', 'PTR'] }), 150],
  ['resolveHostAddresses', (ctx, input) => resolveHostAddresses(ctx, input), 150],
  ['resolveMx', (ctx, input) => resolveMx(ctx, input), 150],
  ['checkSpf', (ctx, input) => checkSpf(ctx, input), 150],
  ['checkSpf with an address', (ctx, input) => checkSpf(ctx, input, { ip: '192.0.2.1', sender: `postmaster@${input}`, helo: input }), 100],
  ['checkDmarc', (ctx, input) => checkDmarc(ctx, input), 150],
  ['checkTlsRpt', (ctx, input) => checkTlsRpt(ctx, input), 150],
  ['checkMtaSts', (ctx, input) => checkMtaSts(ctx, input, { fetch: { port, allowReserved: true } }), 100],
  ['checkEmail', (ctx, input) => checkEmail(ctx, input, { skipSmtp: true, mtaSts: { port, allowReserved: true } }), 100],
  ['checkEmail spf', (ctx, input) => checkEmail(ctx, input, { type: 'spf' }), 100],
  ['runEmailTests', (ctx, input) => runEmailTests(ctx, [input, 'spf.example.test', input], { skipSmtp: true, mtaSts: { port, allowReserved: true } }), 40],
  ['checkBlacklist', (ctx, input) => checkBlacklist(ctx, input), 40],
  ['probeSmtp', (ctx, input) => probeSmtp(ctx, { host: input, port, stageTimeoutMs: 200, greetingTimeoutMs: 200 }), 100],
  ['lookupIp', (ctx, input) => lookupIp(ctx, input), 150],
  ['lookupAsn', (ctx, input) => lookupAsn(ctx, input), 150],
];

describe.each([
  ['a local DNS server', () => answering],
  ['an unroutable resolver', () => unreachable],
] as const)('engine entry points with %s', (_world, context) => {
  it.each(ENTRY_POINTS)('%s settles to a value or a NetintelError for hostile names', async (_label, call, runs) => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(names, hostileIp), (input) => settles(() => call(context(), input))),
      fuzz(runs),
    );
  });
});
