/**
 * The UDP channel's own bookkeeping: one timer for every waiting query
 * (each still ends at its own deadline), replies routed by id, mismatched
 * replies counted, and close().
 */
import dgram from 'node:dgram';
import dnsPacket from 'dns-packet';
import { afterEach, describe, expect, it } from 'vitest';
import type { ExchangeOutcome } from '../../../src/engine/dns/exchange-outcome.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import { createUdpChannel, type UdpChannel } from '../../../src/engine/dns/udp-channel.js';
import { startDnsServer, type DnsTestServer } from '../../support/dns-server.js';
import { EXAMPLE_ZONE } from './example-zone.js';

const open: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()));
});

async function server(options: Parameters<typeof startDnsServer>[0] = {}): Promise<DnsTestServer> {
  const started = await startDnsServer({ records: EXAMPLE_ZONE, ...options });
  open.push(started);
  return started;
}

function channelTo(dns: DnsTestServer, timeoutMs: number): UdpChannel {
  const channel = createUdpChannel(parseResolverAddress(dns.address), timeoutMs);
  open.push(channel);
  return channel;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('createUdpChannel', () => {
  it('ends each waiting query at its own deadline, queries sent later ending later', async () => {
    const dns = await server({ defaultBehaviour: 'silent' });
    const channel = channelTo(dns, 200);
    const started = Date.now();
    const ended: Array<{ label: string; outcome: ExchangeOutcome; afterMs: number }> = [];
    const ask = (label: string) =>
      new Promise<void>((resolve) =>
        channel.send({ name: 'example.test', type: 'A' }, true, (outcome) => {
          ended.push({ label, outcome, afterMs: Date.now() - started });
          resolve();
        }),
      );
    const first = [ask('a'), ask('b')];
    await sleep(100);
    expect(channel.inFlight).toBe(2);
    const second = ask('c');
    await Promise.all([...first, second]);
    expect(ended.map((e) => e.label)).toEqual(['a', 'b', 'c']);
    expect(ended.map((e) => e.outcome)).toEqual([
      { kind: 'timeout', ignoredReplies: 0 },
      { kind: 'timeout', ignoredReplies: 0 },
      { kind: 'timeout', ignoredReplies: 0 },
    ]);
    expect(ended[0]!.afterMs).toBeGreaterThanOrEqual(195);
    expect(ended[1]!.afterMs).toBeLessThan(ended[2]!.afterMs);
    expect(ended[2]!.afterMs).toBeGreaterThanOrEqual(295);
    expect(channel.inFlight).toBe(0);
  });

  it('routes many concurrent replies to their queries and counts a mismatched reply', async () => {
    const dns = await server({ behaviours: { 'example.test': 'wrong-question-first' }, delayMs: 5 });
    const channel = channelTo(dns, 2000);
    const names = Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? 'www.example.test' : 'nope.example.test'));
    const outcomes = await Promise.all(names.map((name) => channel.exchange({ name, type: 'A' }, true)));
    expect(outcomes.map((o) => (o.kind === 'reply' ? o.rcode : o.kind))).toEqual(names.map((n) => (n === 'nope.example.test' ? 'NXDOMAIN' : 'NOERROR')));
    const decoyed = await channel.exchange({ name: 'example.test', type: 'A' }, true);
    expect(decoyed.kind).toBe('reply');
    expect(decoyed.kind === 'reply' && decoyed.answers.map((a) => a.data)).toEqual(['192.0.2.10', '192.0.2.11']);
    expect(channel.inFlight).toBe(0);
  });

  it('counts the replies it ignored in the timeout outcome', async () => {
    // A server that answers every query twice, both times about another name.
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
    open.push({ close: () => new Promise<void>((resolve) => socket.close(() => resolve())) });
    socket.on('message', (message, remote) => {
      const query = dnsPacket.decode(message);
      const reply = dnsPacket.encode({ type: 'response', id: query.id, questions: [{ name: 'other.test', type: 'A', class: 'IN' }] });
      socket.send(reply, remote.port, remote.address);
      socket.send(reply, remote.port, remote.address);
    });
    const channel = createUdpChannel(parseResolverAddress(`127.0.0.1:${socket.address().port}`), 150);
    open.push(channel);
    expect(await channel.exchange({ name: 'example.test', type: 'A' }, true)).toEqual({ kind: 'timeout', ignoredReplies: 2 });
  });

  /** A resolver that notes the name of every query it receives and answers it with no records. */
  async function recordingResolver(): Promise<{ address: string; received: string[] }> {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
    open.push({ close: () => new Promise<void>((resolve) => socket.close(() => resolve())) });
    // It runs in the test's own event loop, so a burst waits in its buffer until the turn ends.
    socket.setRecvBufferSize(4 * 1024 * 1024);
    const received: string[] = [];
    socket.on('message', (message, remote) => {
      const query = dnsPacket.decode(message);
      received.push(query.questions![0]!.name);
      socket.send(dnsPacket.encode({ type: 'response', id: query.id, flags: dnsPacket.RECURSION_DESIRED, questions: query.questions }), remote.port, remote.address);
    });
    return { address: `127.0.0.1:${socket.address().port}`, received };
  }

  it('sends each of 300 queries asked within one turn of the event loop once, in the order asked', async () => {
    const resolver = await recordingResolver();
    const channel = createUdpChannel(parseResolverAddress(resolver.address), 2000);
    open.push(channel);
    // The first opens the socket; the next 300 are asked in one turn once it is open.
    expect((await channel.exchange({ name: 'first.test', type: 'A' }, true)).kind).toBe('reply');
    const names = Array.from({ length: 300 }, (_, i) => `n${i}.test`);
    const outcomes = names.map((name) => channel.exchange({ name, type: 'A' }, true));
    expect(resolver.received).toEqual(['first.test']);
    expect((await Promise.all(outcomes)).map((outcome) => outcome.kind)).toEqual(names.map(() => 'reply'));
    expect(resolver.received).toEqual(['first.test', ...names]);
  });

  it('sends the queries of a turn at its end: one whose channel closed within that turn never leaves', async () => {
    const resolver = await recordingResolver();
    const channel = createUdpChannel(parseResolverAddress(resolver.address), 2000);
    open.push(channel);
    expect((await channel.exchange({ name: 'first.test', type: 'A' }, true)).kind).toBe('reply');
    const waiting = channel.exchange({ name: 'late.test', type: 'A' }, true);
    const closing = channel.close();
    expect(await waiting).toEqual({ kind: 'unreachable', code: 'ECLOSED' });
    await closing;
    await sleep(50);
    expect(resolver.received).toEqual(['first.test']);
  });

  it('ends waiting queries as unreachable (ECLOSED) on close, and later sends too', async () => {
    const dns = await server({ defaultBehaviour: 'silent' });
    const channel = createUdpChannel(parseResolverAddress(dns.address), 5000);
    const waiting = channel.exchange({ name: 'example.test', type: 'A' }, true);
    await sleep(20);
    await channel.close();
    expect(await waiting).toEqual({ kind: 'unreachable', code: 'ECLOSED' });
    expect(await channel.exchange({ name: 'example.test', type: 'A' }, true)).toEqual({ kind: 'unreachable', code: 'ECLOSED' });
  });
});
