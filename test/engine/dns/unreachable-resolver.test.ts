/**
 * A resolver the network refuses or cannot route to fails at once as
 * `unreachable`, however many queries go to it together, and never as an
 * uncaught exception.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createDnsTransport, type DnsTransport } from '../../../src/engine/dns/dns-transport.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import { tcpExchange } from '../../../src/engine/dns/tcp-exchange.js';
import { unroutableReason } from '../../../src/engine/dns/unroutable-address.js';
import { closedPort } from '../../support/smtp-servers.js';

const open: DnsTransport[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((transport) => transport.close()));
});

function transportTo(resolver: string, tcp = false): DnsTransport {
  const transport = createDnsTransport({ resolvers: [parseResolverAddress(resolver)], timeoutMs: 3000, retries: 2, tcp });
  open.push(transport);
  return transport;
}

async function failures(transport: DnsTransport, questions: Array<[string, 'A' | 'AAAA' | 'TXT']>) {
  const started = Date.now();
  const settled = await Promise.allSettled(questions.map(([name, type]) => transport.query(name, type)));
  return { ms: Date.now() - started, codes: settled.map((item) => (item.status === 'rejected' ? (item.reason as { code: string }).code : 'answered')) };
}

describe('a refused or unroutable resolver', () => {
  it('fails two queries sent back to back (A and AAAA) at once when the port is closed, as it does one', async () => {
    const port = await closedPort();
    for (const questions of [[['example.com', 'A']], [['example.com', 'A'], ['example.com', 'AAAA']], [['a.test', 'TXT'], ['b.test', 'TXT'], ['c.test', 'A'], ['d.test', 'AAAA']]] as Array<Array<[string, 'A' | 'AAAA' | 'TXT']>>) {
      const result = await failures(transportTo(`127.0.0.1:${port}`), questions);
      expect(result.codes).toEqual(questions.map(() => 'unreachable'));
      expect(result.ms).toBeLessThan(1500);
    }
  });

  it.each(['224.0.0.1', '255.255.255.255', '240.0.0.1', '[1::8.8.8.8]:53', '[ff02::1]:53', '[::192.0.2.1]:53', '[4000::1]:53'])(
    'gives unreachable for %s without waiting for a timeout, over UDP and TCP',
    async (resolver) => {
      for (const tcp of [false, true]) {
        const result = await failures(transportTo(resolver, tcp), [['example.com', 'A'], ['example.com', 'AAAA']]);
        expect(result.codes).toEqual(['unreachable', 'unreachable']);
        expect(result.ms).toBeLessThan(1000);
      }
    },
  );

  it('gives unreachable when connect() fails (a link-local resolver without a zone), where it once threw ERR_SOCKET_BAD_PORT uncaught', async () => {
    for (const resolver of ['[fe80::1]:53', '[fe80::1%no-such-interface]:53']) {
      const result = await failures(transportTo(resolver), [['example.com', 'A'], ['example.com', 'AAAA']]);
      expect(result.codes).toEqual(['unreachable', 'unreachable']);
      expect(result.ms).toBeLessThan(1000);
    }
  });

  it('keeps routable resolvers routable: loopback, private, documentation, mapped, NAT64, global', () => {
    for (const host of ['127.0.0.1', '10.0.0.53', '192.0.2.53', '::1', '::', 'fd00::53', 'fe80::1', '::ffff:192.0.2.1', '64:ff9b::192.0.2.1', '2001:db8::53', '2606:4700::1111', '100::1']) {
      expect(unroutableReason(host), host).toBeNull();
    }
  });

  it('tcpExchange never rejects, even for arguments net.connect refuses', async () => {
    const outcome = await tcpExchange({ host: '127.0.0.1', port: 70000, family: 4, label: 'bad' }, { name: 'example.com', type: 'A' }, true, 500);
    expect(outcome.kind).toBe('unreachable');
  });
});

describe('an engine context whose transport cannot be made', () => {
  it('rejects the lookup with the transport error and still closes cleanly', async () => {
    const { createEngineContext } = await import('../../../src/engine/context.js');
    const ctx = createEngineContext({ resolvers: [], timeoutMs: 100 });
    await expect(ctx.dnsTransport()).rejects.toMatchObject({ code: 'usage' });
    await expect(ctx.close()).resolves.toBeUndefined();
  });
});

describe('hostile resolver addresses', () => {
  it('every query settles to an answer or a NetintelError, for resolvers no one should be able to reach', async () => {
    const { default: fc } = await import('fast-check');
    const { fuzz } = await import('../hostile-inputs.js');
    const { NetintelError } = await import('../../../src/errors.js');
    const hex = fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16));
    const resolver = fc.oneof(
      fc.tuple(hex, hex).map(([a, b]) => `[fe80::${a}:${b}]:53`),
      fc.tuple(hex, fc.constantFrom('%lo', '%eth0', '%1', '%no-such-if')).map(([a, zone]) => `[fe80::${a}${zone}]:53`),
      fc.tuple(fc.constantFrom('ff02', 'ff05', '1', 'abc', '4000', '::'), hex).map(([a, b]) => `[${a === '::' ? `::${b}:1` : `${a}::${b}`}]:53`),
      fc.tuple(fc.integer({ min: 224, max: 255 }), fc.nat(255)).map(([a, b]) => `${a}.${b}.0.1`),
      fc.integer({ min: 1, max: 65535 }).map((port) => `[::]:${port}`),
      fc.constantFrom('0.0.0.0', '[::ffff:0.0.0.0]:53', '[::1.2.3.4]:53', '[64:ff9b::7f00:1]:9'),
    );
    await fc.assert(
      fc.asyncProperty(resolver, async (text) => {
        const transport = createDnsTransport({ resolvers: [parseResolverAddress(text)], timeoutMs: 300, retries: 0 });
        try {
          await transport.query('example.com', 'A');
        } catch (error) {
          if (!(error instanceof NetintelError)) throw error;
        } finally {
          await transport.close();
        }
      }),
      fuzz(60),
    );
  });
});
