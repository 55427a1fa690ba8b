import { describe, expect, it } from 'vitest';
import { canaryQueryName, createCanaryCache, runCanaries } from '../../../src/engine/blacklist/canaries.js';
import { customZone, findRegisteredZone, loadDnsblRegistry } from '../../../src/engine/blacklist/dnsbl-registry.js';
import { NetintelError } from '../../../src/errors.js';

const ipList = customZone('bl.example.net', 'ip', false);
const domainList = customZone('rhs.example.net', 'domain', false);
const uribl = findRegisteredZone(loadDnsblRegistry(null), 'multi.uribl.com')!;

type Answer = { status: 'answer' | 'nodata' | 'nxdomain'; records: string[] };
const listed = (code = '127.0.0.2'): Answer => ({ status: 'answer', records: [code] });
const nxdomain: Answer = { status: 'nxdomain', records: [] };

/** A fake resolver (192.0.2.53:53): answers from a table of query names, counting the questions. */
function answers(table: Record<string, Answer | Error>) {
  const asked: string[] = [];
  const ask = async (name: string) => {
    asked.push(name);
    const answer = table[name] ?? nxdomain;
    if (answer instanceof Error) throw answer;
    return { ...answer, resolver: '192.0.2.53:53' };
  };
  return { ask, asked };
}

describe('RFC 5782 test points', () => {
  it('keeps a pass for the run only when one resolver gave it, and tests again once told the pass did not vouch for an answer', async () => {
    let asked = 0;
    const via = (resolverOf: (name: string) => string) => async (name: string) => {
      asked++;
      return { ...(name.startsWith('2.0.0.127.') ? listed() : nxdomain), resolver: resolverOf(name) };
    };
    const split = createCanaryCache();
    const shared = via((name) => (name.startsWith('2.') ? '192.0.2.53:53' : '8.8.8.8:53'));
    expect((await split.check(ipList, shared)).resolver).toBeNull();
    await split.check(ipList, shared);
    expect(asked).toBe(4);

    asked = 0;
    const cache = createCanaryCache();
    const one = via(() => '192.0.2.53:53');
    const first = cache.check(ipList, one);
    expect((await first).resolver).toBe('192.0.2.53:53');
    expect(await cache.check(ipList, one)).toEqual(await first);
    expect(asked).toBe(2);
    cache.forget(ipList, first);
    await cache.check(ipList, via(() => '8.8.8.8:53'));
    expect(asked).toBe(4);
    expect((await cache.check(ipList, one)).resolver).toBe('8.8.8.8:53');
  });

  it('names the resolver that answered both test points, and none when two resolvers shared them', async () => {
    const from = (resolverOf: (name: string) => string) => async (name: string) => ({ ...(name.startsWith('2.0.0.127.') ? listed() : nxdomain), resolver: resolverOf(name) });
    expect(await runCanaries(ipList, from(() => '192.0.2.53:53'))).toEqual({ status: 'passed', detail: null, resolver: '192.0.2.53:53' });
    const shared = await runCanaries(ipList, from((name) => (name.startsWith('2.') ? '192.0.2.53:53' : '8.8.8.8:53')));
    expect(shared).toEqual({ status: 'passed', detail: null, resolver: null });
  });

  it('asks 127.0.0.2 and 127.0.0.1 of IP lists, TEST and INVALID (or the registry\'s names) of domain lists', () => {
    expect(canaryQueryName(ipList, ipList.canaries.listed)).toBe('2.0.0.127.bl.example.net');
    expect(canaryQueryName(ipList, ipList.canaries.notListed)).toBe('1.0.0.127.bl.example.net');
    expect(canaryQueryName(domainList, domainList.canaries.listed)).toBe('test.rhs.example.net');
    expect(canaryQueryName(uribl, uribl.canaries.listed)).toBe('test.uribl.com.multi.uribl.com');
  });

  it('passes a zone that lists 127.0.0.2 and not 127.0.0.1', async () => {
    const { ask } = answers({ '2.0.0.127.bl.example.net': listed() });
    expect(await runCanaries(ipList, ask)).toEqual({ status: 'passed', detail: null, resolver: '192.0.2.53:53' });
  });

  it('fails a zone that does not list 127.0.0.2, and one that lists 127.0.0.1', async () => {
    expect((await runCanaries(ipList, answers({}).ask)).status).toBe('failed');
    const world = answers({ '2.0.0.127.bl.example.net': listed(), '1.0.0.127.bl.example.net': listed() });
    const report = await runCanaries(ipList, world.ask);
    expect(report.status).toBe('failed');
    expect(report.detail).toMatch(/test point 127\.0\.0\.1 is listed/);
  });

  it('reports refused when a test point answers a refusal code, timeout and error when it cannot be asked', async () => {
    const refused = answers({ 'test.uribl.com.multi.uribl.com': listed('127.0.0.1') });
    expect((await runCanaries(uribl, refused.ask)).status).toBe('refused');
    const silent = answers({ '2.0.0.127.bl.example.net': new NetintelError('timeout', 'no answer') });
    expect((await runCanaries(ipList, silent.ask)).status).toBe('timeout');
    const broken = answers({ '2.0.0.127.bl.example.net': new NetintelError('upstream', 'SERVFAIL') });
    expect((await runCanaries(ipList, broken.ask)).status).toBe('error');
  });

  it('keeps a definite self-test for the run and asks again after a timeout', async () => {
    const cache = createCanaryCache();
    const good = answers({ '2.0.0.127.bl.example.net': listed() });
    await Promise.all([cache.check(ipList, good.ask), cache.check(ipList, good.ask)]);
    await cache.check(ipList, good.ask);
    expect(good.asked).toHaveLength(2);

    const flaky = answers({ 'test.rhs.example.net': new NetintelError('timeout', 'no answer') });
    expect((await cache.check(domainList, flaky.ask)).status).toBe('timeout');
    await new Promise((resolve) => setImmediate(resolve));
    const recovered = answers({ 'test.rhs.example.net': listed('127.0.1.2') });
    expect((await cache.check(domainList, recovered.ask)).status).toBe('passed');
    expect(recovered.asked).toHaveLength(2);
  });
});
