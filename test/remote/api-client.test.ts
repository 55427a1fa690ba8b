import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NetintelError } from '../../src/errors.js';
import { createApiClient, type ApiClientOptions } from '../../src/remote/api-client.js';
import type { AnswerCheck } from '../../src/remote/answer-check.js';

/** Takes every answer: these cases are about the exchange, not the records (test/remote/hostile-server.test.ts checks those). */
const ANY_ANSWER: AnswerCheck = {
  ofRoute: (method, path) => ({ schema: '', name: `answer to ${method} ${path}`, maxOctets: 1024 * 1024 }),
  problem: () => null,
};

/** A client whose clock moves only when it sleeps, with a deadline long enough for the waits of these cases. */
function patientClient(options: Omit<ApiClientOptions, 'answers' | 'timeoutMs' | 'now' | 'sleep'> & { timeoutMs?: number; slept?: number[] }) {
  let clock = 0;
  const slept = options.slept ?? [];
  return createApiClient({
    timeoutMs: 600_000,
    ...options,
    answers: ANY_ANSWER,
    now: () => clock,
    sleep: async (ms) => {
      slept.push(ms);
      clock += ms;
    },
  });
}

/** A fetch that answers from a script: 429s with a RetryAfter, then 200. */
function scripted(answers: Array<{ status: number; retryAfter?: number; body?: unknown }>) {
  const seen: Array<{ url: string; headers: Record<string, string> }> = [];
  const fetch = (async (url: string, init: { headers: Record<string, string> }) => {
    seen.push({ url, headers: init.headers });
    const answer = answers[Math.min(seen.length - 1, answers.length - 1)]!;
    const headers = new Headers({ 'content-type': answer.status === 200 ? 'application/json' : 'application/problem+json' });
    if (answer.retryAfter !== undefined) {
      headers.set('x-ratelimit-retryafter', String(answer.retryAfter));
      headers.set('retry-after', String(answer.retryAfter));
    }
    const body =
      answer.body ?? (answer.status === 200 ? { ok: true } : { code: 'rate_limited', detail: 'rate limit exceeded', status: 429, details: { limit: 'burst' } });
    return new Response(JSON.stringify(body), { status: answer.status, headers });
  }) as unknown as typeof globalThis.fetch;
  return { fetch, seen };
}

describe('the API client', () => {
  it('sends the key, waits at least RetryAfter after a 429, with exponentially growing jitter, then succeeds', async () => {
    const { fetch, seen } = scripted([{ status: 429, retryAfter: 2 }, { status: 429, retryAfter: 2 }, { status: 429, retryAfter: 1 }, { status: 200 }]);
    const waits: number[] = [];
    const client = patientClient({ server: 'http://api.test/', apiKey: 'ni_key', fetch, backoffMs: 500, random: () => 0.999, slept: waits });
    const response = await client.get('/api/ipinfo', { ip: '8.8.8.8', format: undefined });
    expect(response.body).toEqual({ ok: true });
    expect(seen).toHaveLength(4);
    expect(seen[0]!.url).toBe('http://api.test/api/ipinfo?ip=8.8.8.8');
    expect(seen[0]!.headers['x-api-key']).toBe('ni_key');
    // RetryAfter plus up to 500·2^attempt ms of jitter.
    expect(waits).toEqual([2000 + 500, 2000 + 999, 1000 + 1998]);
  });

  it('leaves a retry as much time as the refusal took to come: the jitter gives way, then the wait is refused', async () => {
    // Each answer takes 300 ms of the 2000 ms deadline; Retry-After: 1 with the largest jitter would be 1500 ms.
    let clock = 0;
    const sentAt: number[] = [];
    const slept: number[] = [];
    const fetch = (async () => {
      sentAt.push(clock);
      clock += 300;
      const headers = new Headers({ 'content-type': 'application/problem+json', 'retry-after': '1' });
      return new Response(JSON.stringify({ code: 'rate_limited', detail: 'rate limit exceeded', status: 429, details: { limit: 'burst' } }), { status: 429, headers });
    }) as unknown as typeof globalThis.fetch;
    const client = createApiClient({
      server: 'http://api.test',
      apiKey: null,
      fetch,
      timeoutMs: 2000,
      backoffMs: 500,
      random: () => 0.999,
      answers: ANY_ANSWER,
      now: () => clock,
      sleep: async (ms) => {
        slept.push(ms);
        clock += ms;
      },
    });
    const error = await client.get('/api/quota').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NetintelError);
    expect((error as NetintelError).message).toMatch(/asks to wait 1 s, more than the 400 ms left of the 2000 ms deadline/);
    // 1500 ms would have sent the retry at 1800 ms, 200 ms before the deadline, for an answer that takes 300.
    expect(slept).toEqual([1000]);
    expect(sentAt).toEqual([0, 1300]);
  });

  it('spreads the waits of clients refused together (jitter)', async () => {
    const waits = new Set<number>();
    for (let i = 0; i < 20; i++) {
      const { fetch } = scripted([{ status: 429, retryAfter: 1 }, { status: 200 }]);
      const slept: number[] = [];
      const client = patientClient({ server: 'http://api.test', apiKey: null, fetch, slept });
      await client.get('/api/quota');
      for (const wait of slept) waits.add(wait);
    }
    expect(waits.size).toBeGreaterThan(10);
    for (const wait of waits) expect(wait).toBeGreaterThanOrEqual(1000);
  });

  it('gives up after maxRetries, and at once when the wait is longer than maxWaitMs (the day is spent)', async () => {
    const { fetch, seen } = scripted([{ status: 429, retryAfter: 1 }]);
    const client = patientClient({ server: 'http://api.test', apiKey: null, fetch, maxRetries: 3 });
    const error = await client.get('/api/ipinfo').catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(NetintelError);
    expect(error).toMatchObject({ code: 'rate_limited', details: { limit: 'burst' } });
    expect(seen).toHaveLength(4);

    const daily = scripted([{ status: 429, retryAfter: 50_000 }]);
    const slept: number[] = [];
    const patient = patientClient({ server: 'http://api.test', apiKey: null, fetch: daily.fetch, slept });
    await expect(patient.get('/api/ipinfo')).rejects.toMatchObject({ code: 'rate_limited' });
    expect(daily.seen).toHaveLength(1);
    expect(slept).toEqual([]);
  });

  it('turns problem+json into the server\'s NetintelError and other failures into upstream/usage', async () => {
    const { fetch } = scripted([{ status: 400, body: { code: 'invalid_input', detail: '"x" is not valid', details: { input: 'x' } } }]);
    const client = patientClient({ server: 'http://api.test', apiKey: null, fetch });
    await expect(client.get('/api/ipinfo')).rejects.toMatchObject({ code: 'invalid_input', message: '"x" is not valid', details: { input: 'x' } });
    const broken = scripted([{ status: 502, body: 'gateway' }]);
    await expect(patientClient({ server: 'http://api.test', apiKey: null, fetch: broken.fetch }).get('/x')).rejects.toMatchObject({ code: 'upstream' });
    expect(() => createApiClient({ server: 'ftp://api.test', apiKey: null, timeoutMs: 1000, answers: ANY_ANSWER })).toThrow(/http/);
    // A status no call expects is the server's failure, not a bad flag.
    for (const status of [300, 399]) {
      const odd = scripted([{ status, body: '' }]);
      await expect(patientClient({ server: 'http://api.test', apiKey: null, fetch: odd.fetch }).get('/x')).rejects.toMatchObject({ code: 'upstream', message: `the server at http://api.test answered HTTP ${status}` });
    }
  });

  it('says a Retry-After given as an HTTP-date as the time it names, not as seconds', async () => {
    const now = Date.UTC(2030, 0, 1, 10, 0, 0);
    const fetch = (async () =>
      new Response(JSON.stringify({ code: 'rate_limited', detail: 'daily limit reached', status: 429 }), {
        status: 429,
        headers: { 'content-type': 'application/problem+json', 'retry-after': 'Tue, 01 Jan 2030 11:00:00 GMT' },
      })) as unknown as typeof globalThis.fetch;
    const client = createApiClient({ server: 'http://api.test', apiKey: null, timeoutMs: 2000, fetch, answers: ANY_ANSWER, now: () => now });
    await expect(client.get('/api/ipinfo')).rejects.toMatchObject({ code: 'rate_limited', message: expect.stringContaining('asks to wait until Tue, 01 Jan 2030 11:00:00 GMT (3600 s), more than the 120 s netintel waits') });
  });

  it('takes any --server text: a client, or a usage error that repeats no password, never another exception', () => {
    fc.assert(
      fc.property(fc.oneof(fc.webUrl({ withQueryParameters: true, withFragments: true }), fc.string(), fc.constantFrom('http://u:p@h', 'http://[::1]:8080/x/', 'https://h/?', 'HTTP://H/#')), (server) => {
        try {
          expect(createApiClient({ server, apiKey: null, timeoutMs: 1000, answers: ANY_ANSWER }).server).toMatch(/^https?:\/\//i);
        } catch (error) {
          expect(error).toBeInstanceOf(NetintelError);
          expect((error as NetintelError).code).toBe('usage');
          const password = /^[a-z]+:\/\/[^/@]*:([^/@]+)@/i.exec(server)?.[1];
          if (password !== undefined && password.length > 3) expect((error as NetintelError).message).not.toContain(`:${password}@`);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses a --server with a password or a query, without repeating the password', () => {
    const make = (server: string) => () => createApiClient({ server, apiKey: null, timeoutMs: 1000, answers: ANY_ANSWER });
    expect(make('http://user:secretpw@api.test')).toThrow('--server must not carry a user name or password (http://api.test): give the key with --api-key');
    try {
      make('http://user:secretpw@api.test/v1')();
    } catch (error) {
      expect(JSON.stringify(error) + String(error)).not.toContain('secretpw');
    }
    for (const server of ['http://api.test/?q=', 'http://api.test/?', 'http://api.test/#']) {
      expect(make(server), server).toThrow(/--server must be the server's address without a query or fragment, such as http:\/\/api\.test$/);
    }
  });

  it('follows a 307 of a POST with the same body, and refuses a 302 that would drop it', async () => {
    const seen: Array<{ url: string; method: string; body: unknown }> = [];
    const redirecting = (status: number) =>
      (async (url: string, init: { method: string; body?: string }) => {
        seen.push({ url, method: init.method, body: init.body });
        if (seen.length === 1) return new Response(null, { status, headers: { location: '/v2/api/bulk' } });
        return new Response('{"ok":true}', { status: 200, headers: { 'content-type': 'application/json' } });
      }) as unknown as typeof globalThis.fetch;
    await patientClient({ server: 'http://api.test', apiKey: 'k', fetch: redirecting(307) }).post('/api/bulk', { ips: ['8.8.8.8'] });
    expect(seen).toEqual([
      { url: 'http://api.test/api/bulk', method: 'POST', body: '{"ips":["8.8.8.8"]}' },
      { url: 'http://api.test/v2/api/bulk', method: 'POST', body: '{"ips":["8.8.8.8"]}' },
    ]);
    seen.length = 0;
    await expect(patientClient({ server: 'http://api.test', apiKey: 'k', fetch: redirecting(302) }).post('/api/bulk', { ips: [] })).rejects.toMatchObject({
      code: 'upstream',
      message: 'the server at http://api.test answered POST /api/bulk with a 302 redirect, which would drop the request\'s body',
    });
    expect(seen).toHaveLength(1);
  });

  it('says timeout when the server does not answer in time', async () => {
    const hang = (async (_url: string, init: { signal: AbortSignal }) =>
      new Promise((_, reject) => init.signal.addEventListener('abort', () => reject(init.signal.reason)))) as unknown as typeof globalThis.fetch;
    const client = createApiClient({ server: 'http://api.test', apiKey: null, timeoutMs: 50, fetch: hang, answers: ANY_ANSWER });
    await expect(client.get('/api/ipinfo')).rejects.toMatchObject({ code: 'timeout' });
  });
});
