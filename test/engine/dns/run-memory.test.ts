/**
 * What a run remembers about its DNS (src/engine/dns/dns-run-memory.ts): a
 * resolver that fell silent is asked last, with one short probe per
 * question, until it answers again; a DNSSEC chain question that got no
 * answer is not asked again for the next name. Real servers on 127.0.0.1:
 * a "dead" resolver is a bound UDP port that never replies, so the kernel
 * refuses nothing and every query to it waits for its deadline.
 */
import dgram from 'node:dgram';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext, type EngineContext } from '../../../src/engine/context.js';
import { createDnsRunMemory, type DnsRunMemory } from '../../../src/engine/dns/dns-run-memory.js';
import { createDnsTransport, type DnsTransport } from '../../../src/engine/dns/dns-transport.js';
import { validateRrset } from '../../../src/engine/dns/dnssec/validate.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import { startDnsServer, type DnsTestServer } from '../../support/dns-server.js';

/** A UDP port that takes every query and answers none; counts what arrives. */
async function startDeadResolver(): Promise<{ address: string; received: () => number; close: () => Promise<void> }> {
  const socket = dgram.createSocket('udp4');
  let received = 0;
  socket.on('message', () => {
    received += 1;
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    received: () => received,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

let good: DnsTestServer;
let dead: Awaited<ReturnType<typeof startDeadResolver>>;
const open: Array<DnsTransport | EngineContext> = [];

beforeAll(async () => {
  good = await startDnsServer({
    records: [
      { name: 'one.test', type: 'A', data: '192.0.2.1' },
      { name: 'two.test', type: 'A', data: '192.0.2.2' },
      { name: 'three.test', type: 'A', data: '192.0.2.3' },
    ],
    behaviours: { 'silent.test': 'silent' },
  });
  dead = await startDeadResolver();
});
afterAll(async () => {
  await Promise.all([good.close(), dead.close()]);
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()));
});

function transport(resolvers: string[], memory: DnsRunMemory | null, timeoutMs = 400, retries = 0, dnssec?: 'dnssec-cd'): DnsTransport {
  const made = createDnsTransport({ resolvers: resolvers.map((text) => parseResolverAddress(text)), timeoutMs, retries, memory, ...(dnssec ? { dnssec } : {}) });
  open.push(made);
  return made;
}

describe('a resolver that falls silent', () => {
  it('is asked last for the rest of the run, by every transport sharing the memory, once it let a query time out', async () => {
    const silenced: string[] = [];
    const memory = createDnsRunMemory({ onDemoted: (resolver) => silenced.push(resolver) });
    const first = transport([dead.address, good.address], memory);
    const before = dead.received();
    expect((await first.query('one.test', 'A')).resolver).toBe(good.address);
    expect(dead.received() - before).toBe(1);
    // Later questions, and another transport of the same run (as each DNSSEC validation makes), go to the good resolver first.
    const second = transport([dead.address, good.address], memory);
    const answers = await Promise.all([first.query('two.test', 'A'), second.query('three.test', 'A'), second.query('one.test', 'A')]);
    expect(answers.map((answer) => answer.resolver)).toEqual([good.address, good.address, good.address]);
    expect(dead.received() - before).toBe(1);
    expect(silenced).toEqual([dead.address]);
  });

  it('without a memory is asked first every time (each question waits for it)', async () => {
    const plain = transport([dead.address, good.address], null);
    const before = dead.received();
    for (const name of ['one.test', 'two.test', 'three.test']) expect((await plain.query(name, 'A')).resolver).toBe(good.address);
    expect(dead.received() - before).toBe(3);
  });

  it('gets short probes once demoted, as many rounds as the retries say, when it is the only resolver', async () => {
    const memory = createDnsRunMemory({ probeMs: 100 });
    const only = transport([dead.address], memory, 400, 2);
    const before = dead.received();
    type Failure = { code: string; message: string; details: { attempts: Array<{ probe?: true }>; timeout_ms: number } };
    const first = await only.query('one.test', 'A').catch((error: unknown) => error as Failure);
    // The first question: the full deadline, then (now demoted) the retries as probes.
    expect(first).toMatchObject({ code: 'timeout' });
    expect(first.details.attempts.map((attempt) => attempt.probe ?? false)).toEqual([false, true, true]);
    const later = await only.query('two.test', 'A').catch((error: unknown) => error as Failure);
    expect(later.details.attempts.map((attempt) => attempt.probe ?? false)).toEqual([true, true, true]);
    expect(later.details.timeout_ms).toBe(100);
    expect(later.message).toContain('within 100 ms (3 attempts, short probes of a server that had not answered earlier in the run)');
    expect(dead.received() - before).toBe(6);
  });

  it('gives no probe shorter than the deadline itself: with a deadline under the probe, a demoted resolver is only asked last', async () => {
    const memory = createDnsRunMemory({ probeMs: 1000 });
    const only = transport([dead.address], memory, 150, 1);
    await expect(only.query('one.test', 'A')).rejects.toMatchObject({ code: 'timeout', details: { attempts: [{ resolver: dead.address }, { resolver: dead.address }] } });
    const later = await only.query('two.test', 'A').catch((error: unknown) => error as { details: { attempts: Array<{ probe?: true }> } });
    expect(later.details.attempts.some((attempt) => attempt.probe)).toBe(false);
  });

  it('is back in good standing as soon as it answers again', async () => {
    const memory = createDnsRunMemory();
    const resolver = parseResolverAddress(good.address);
    const only = transport([good.address], memory, 300);
    // A question nothing else overlaps: from the client's side the resolver said nothing.
    await expect(only.query('silent.test', 'A')).rejects.toMatchObject({ code: 'timeout' });
    expect(memory.isDemoted(resolver)).toBe(true);
    expect((await only.query('one.test', 'A')).resolver).toBe(good.address);
    expect(memory.isDemoted(resolver)).toBe(false);
  });

  it('is not demoted for one silent name while it keeps answering the others', async () => {
    const silenced: string[] = [];
    const memory = createDnsRunMemory({ onDemoted: (resolver) => silenced.push(resolver) });
    const only = transport([good.address], memory, 300);
    const silent = only.query('silent.test', 'A').catch((error: unknown) => error as { code: string });
    // Answers that come after the silent question was sent show the resolver is alive.
    await Promise.all(['one.test', 'two.test', 'three.test'].map((name) => only.query(name, 'A')));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await Promise.all(['one.test', 'two.test'].map((name) => only.query(name, 'A')));
    expect(await silent).toMatchObject({ code: 'timeout' });
    expect(memory.isDemoted(parseResolverAddress(good.address))).toBe(false);
    expect(silenced).toEqual([]);
  });
});

describe('a DNSSEC chain question that got no answer', () => {
  let rootless: DnsTestServer;
  beforeAll(async () => {
    // Answers every question but the root's DNSKEY RRset (a network that drops large answers looks like this).
    rootless = await startDnsServer({
      records: [
        { name: 'one.test', type: 'A', data: '192.0.2.1' },
        { name: 'two.test', type: 'A', data: '192.0.2.2' },
      ],
      behaviours: { '.': 'silent' },
    });
  });
  afterAll(async () => {
    await rootless.close();
  });

  it('is asked once per run: the next name\'s validation fails at once with the same reason', async () => {
    const ctx = createEngineContext({ resolvers: [parseResolverAddress(rootless.address)], timeoutMs: 300, dnsRetries: 1 });
    open.push(ctx);
    const rootKeys = () => rootless.queries.filter((query) => query.type === 'DNSKEY' && (query.name === '.' || query.name === '')).length;
    const first = await validateRrset(ctx, 'one.test', 'A');
    expect(first.status).toBe('indeterminate');
    const asked = rootKeys();
    expect(asked).toBeGreaterThanOrEqual(1);
    const second = await validateRrset(ctx, 'two.test', 'A');
    expect(second.status).toBe('indeterminate');
    expect(second.reason).toBe(first.reason);
    expect(rootKeys()).toBe(asked);
  });

  it('is asked again by another run (another context)', async () => {
    const run = () => createEngineContext({ resolvers: [parseResolverAddress(rootless.address)], timeoutMs: 300, dnsRetries: 0 });
    const [a, b] = [run(), run()];
    open.push(a, b);
    const before = rootless.queries.length;
    await validateRrset(a, 'one.test', 'A');
    const between = rootless.queries.filter((query, index) => index >= before && query.type === 'DNSKEY').length;
    await validateRrset(b, 'one.test', 'A');
    const after = rootless.queries.filter((query, index) => index >= before && query.type === 'DNSKEY').length;
    expect(between).toBeGreaterThanOrEqual(1);
    expect(after).toBe(2 * between);
  });

  it('is only remembered for DNSSEC transports: a plain DNSKEY question is asked each time', async () => {
    const memory = createDnsRunMemory();
    const plain = transport([rootless.address], memory, 200);
    const before = rootless.queries.length;
    await expect(plain.query('.', 'DNSKEY')).rejects.toMatchObject({ code: 'timeout' });
    await expect(plain.query('.', 'DNSKEY')).rejects.toMatchObject({ code: 'timeout' });
    expect(rootless.queries.slice(before).filter((query) => query.type === 'DNSKEY')).toHaveLength(2);
    const checking = transport([rootless.address], createDnsRunMemory(), 200, 0, 'dnssec-cd');
    const mark = rootless.queries.length;
    await expect(checking.query('.', 'DNSKEY')).rejects.toMatchObject({ code: 'timeout' });
    await expect(checking.query('.', 'DNSKEY')).rejects.toMatchObject({ code: 'timeout' });
    expect(rootless.queries.slice(mark).filter((query) => query.type === 'DNSKEY')).toHaveLength(1);
  });
});
