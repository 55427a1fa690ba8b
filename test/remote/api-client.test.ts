import { describe, expect, it } from 'vitest';
import { NetintelError } from '../../src/errors.js';
import { createApiClient } from '../../src/remote/api-client.js';

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
    const client = createApiClient({
      server: 'http://api.test/',
      apiKey: 'ni_key',
      timeoutMs: 1000,
      fetch,
      backoffMs: 500,
      random: () => 0.999,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    const response = await client.get('/api/ipinfo', { ip: '8.8.8.8', format: undefined });
    expect(response.body).toEqual({ ok: true });
    expect(seen).toHaveLength(4);
    expect(seen[0]!.url).toBe('http://api.test/api/ipinfo?ip=8.8.8.8');
    expect(seen[0]!.headers['x-api-key']).toBe('ni_key');
    // RetryAfter plus up to 500·2^attempt ms of jitter.
    expect(waits).toEqual([2000 + 500, 2000 + 999, 1000 + 1998]);
  });

  it('spreads the waits of clients refused together (jitter)', async () => {
    const waits = new Set<number>();
    for (let i = 0; i < 20; i++) {
      const { fetch } = scripted([{ status: 429, retryAfter: 1 }, { status: 200 }]);
      const client = createApiClient({ server: 'http://api.test', apiKey: null, timeoutMs: 1000, fetch, sleep: async (ms) => void waits.add(ms) });
      await client.get('/api/quota');
    }
    expect(waits.size).toBeGreaterThan(10);
    for (const wait of waits) expect(wait).toBeGreaterThanOrEqual(1000);
  });

  it('gives up after maxRetries, and at once when the wait is longer than maxWaitMs (the day is spent)', async () => {
    const { fetch, seen } = scripted([{ status: 429, retryAfter: 1 }]);
    const client = createApiClient({ server: 'http://api.test', apiKey: null, timeoutMs: 1000, fetch, maxRetries: 3, sleep: async () => {} });
    const error = await client.get('/api/ipinfo').catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(NetintelError);
    expect(error).toMatchObject({ code: 'rate_limited', details: { limit: 'burst' } });
    expect(seen).toHaveLength(4);

    const daily = scripted([{ status: 429, retryAfter: 50_000 }]);
    const slept: number[] = [];
    const patient = createApiClient({ server: 'http://api.test', apiKey: null, timeoutMs: 1000, fetch: daily.fetch, sleep: async (ms) => void slept.push(ms) });
    await expect(patient.get('/api/ipinfo')).rejects.toMatchObject({ code: 'rate_limited' });
    expect(daily.seen).toHaveLength(1);
    expect(slept).toEqual([]);
  });

  it('turns problem+json into the server\'s NetintelError and other failures into upstream/usage', async () => {
    const { fetch } = scripted([{ status: 400, body: { code: 'invalid_input', detail: '"x" is not valid', details: { input: 'x' } } }]);
    const client = createApiClient({ server: 'http://api.test', apiKey: null, timeoutMs: 1000, fetch });
    await expect(client.get('/api/ipinfo')).rejects.toMatchObject({ code: 'invalid_input', message: '"x" is not valid', details: { input: 'x' } });
    const broken = scripted([{ status: 502, body: 'gateway' }]);
    await expect(createApiClient({ server: 'http://api.test', apiKey: null, timeoutMs: 1000, fetch: broken.fetch }).get('/x')).rejects.toMatchObject({ code: 'upstream' });
    expect(() => createApiClient({ server: 'ftp://api.test', apiKey: null, timeoutMs: 1000 })).toThrow(/http/);
  });

  it('says timeout when the server does not answer in time', async () => {
    const hang = (async (_url: string, init: { signal: AbortSignal }) =>
      new Promise((_, reject) => init.signal.addEventListener('abort', () => reject(init.signal.reason)))) as unknown as typeof globalThis.fetch;
    const client = createApiClient({ server: 'http://api.test', apiKey: null, timeoutMs: 50, fetch: hang });
    await expect(client.get('/api/ipinfo')).rejects.toMatchObject({ code: 'timeout' });
  });
});
