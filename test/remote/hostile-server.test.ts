/**
 * Remote mode against servers that misbehave on purpose: each case runs the
 * built CLI (`npm run build` first) against a server on a loopback address
 * and checks the exit code, the message, how long the run took against the
 * deadline it was given, how much it printed, and its peak memory where the
 * danger was memory. Bounds are generous: they tell seconds from minutes
 * and megabytes from gigabytes, on a loaded two-core machine.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REMOTE_LIMITS } from '../../src/remote/remote-limits.js';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { hostileHttpPeer, hostileTcpPeer, runMeasured, writeForever, type HostilePeer } from './hostile-peer.js';

/** Far above a remote run's ~100 MiB, far below the gigabytes an unbounded read reached. */
const MEMORY_BOUND_MIB = 300;
/** A run that fails at once still starts Node and loads the CLI. */
const PROMPT_MS = 8_000;

const peers: HostilePeer[] = [];
async function peer(...args: Parameters<typeof hostileHttpPeer>): Promise<HostilePeer> {
  const started = await hostileHttpPeer(...args);
  peers.push(started);
  return started;
}
afterEach(async () => {
  await Promise.all(peers.splice(0).map((item) => item.close()));
});

/** A JSON answer. */
function json(response: import('node:http').ServerResponse, body: unknown, status = 200, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(text);
}

function quotaRecord(batch: number): Record<string, unknown> {
  return {
    kind: 'quota',
    plan: 'custom',
    title: 'Custom',
    key_id: 'k1',
    client: '127.0.0.1',
    features: ['premium'],
    daily: { limit: 1000, remaining: 1000, reset_at: '2030-01-02T00:00:00.000Z' },
    burst: { capacity: 10, remaining: 10, per_minute: 10 },
    batch,
    bulk_max: null,
  };
}

const built = existsSync(join(REPO_ROOT, 'dist', 'bundle', 'main.cjs'));

describe.skipIf(!built)('remote mode against a hostile server', () => {
  /** A real IP record and ASN record, as the local engine gives them (and a real server would). */
  let ipRecord: Record<string, unknown>;
  let asnRecord: Record<string, unknown>;
  beforeAll(async () => {
    ipRecord = JSON.parse((await runCli(['ip', '8.8.8.8', '-f', 'json'])).stdout) as Record<string, unknown>;
    asnRecord = JSON.parse((await runCli(['asn', 'AS15169', '-f', 'json'])).stdout) as Record<string, unknown>;
  });

  describe('redirects', () => {
    it('refuses a redirect to another origin, names both origins, and sends the key nowhere else', async () => {
      const thief = await peer((_request, response) => json(response, ipRecord), '127.0.0.2');
      const otherPort = await peer((_request, response) => json(response, ipRecord));
      for (const location of [`${thief.url}/steal`, `${otherPort.url}/api/ipinfo?ip=8.8.8.8`, 'https://127.0.0.1/api/ipinfo?ip=8.8.8.8']) {
        const server = await peer((_request, response) => {
          response.writeHead(307, { location });
          response.end();
        });
        const run = await runMeasured(['ip', '8.8.8.8', '--server', server.url, '--api-key', 'SECRET']);
        const target = new URL(location).origin;
        expect(run.code, run.stderr).toBe(5);
        expect(run.stderr).toContain(`the server at ${server.url} redirected /api/ipinfo?ip=8.8.8.8 to another origin, ${target}`);
        expect(run.stderr).not.toContain('SECRET');
        expect(run.stdoutOctets).toBe(0);
        expect(run.elapsedMs).toBeLessThan(PROMPT_MS);
        expect(server.requests).toHaveLength(1);
      }
      expect(thief.requests).toEqual([]);
      expect(otherPort.requests).toEqual([]);
    });

    it('follows redirects within the origin, with the key, at most 3 times', async () => {
      const moved = await peer((request, response) => {
        if (request.url!.startsWith('/v2/')) return json(response, ipRecord);
        response.writeHead(308, { location: `/v2${request.url!}` });
        response.end();
      });
      const run = await runMeasured(['ip', '8.8.8.8', '--server', moved.url, '--api-key', 'SECRET', '-f', 'json']);
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual(ipRecord);
      expect(moved.requests.map((request) => [request.url, request.headers['x-api-key']])).toEqual([
        ['/api/ipinfo?ip=8.8.8.8', 'SECRET'],
        ['/v2/api/ipinfo?ip=8.8.8.8', 'SECRET'],
      ]);

      let hops = 0;
      const loop = await peer((_request, response) => {
        response.writeHead(302, { location: `/api/ipinfo?ip=8.8.8.8&hop=${++hops}` });
        response.end();
      });
      const looped = await runMeasured(['ip', '8.8.8.8', '--server', loop.url, '--api-key', 'SECRET']);
      expect(looped.code).toBe(5);
      expect(looped.stderr).toContain(`redirected /api/ipinfo?ip=8.8.8.8 more than ${REMOTE_LIMITS.redirects} times`);
      expect(loop.requests).toHaveLength(REMOTE_LIMITS.redirects + 1);
      expect(looped.elapsedMs).toBeLessThan(PROMPT_MS);
    });
  });

  describe('answer size and deadline', () => {
    it('stops an endless JSON answer at the 4 MiB cap of one record, in seconds and bounded memory', async () => {
      const server = await peer((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        writeForever(response, Buffer.alloc(64 * 1024, 0x20), '{"ip":"');
      });
      const run = await runMeasured(['ip', '8.8.8.8', '--server', server.url]);
      expect(run.code, run.stderr).toBe(5);
      expect(run.stderr).toContain(`the server at ${server.url} sent more than 4 MiB answering /api/ipinfo?ip=8.8.8.8, the cap on one ip record`);
      expect(run.elapsedMs).toBeLessThan(PROMPT_MS);
      expect(run.peakRssMiB).toBeGreaterThan(10);
      expect(run.peakRssMiB).toBeLessThan(MEMORY_BOUND_MIB);
      expect(run.stdoutOctets).toBe(0);
    });

    it('refuses a 1.5 GB answer by its Content-Length, before reading it', async () => {
      const size = 1.5 * 2 ** 30;
      const server = await peer((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(size) });
        writeForever(response, Buffer.alloc(64 * 1024, 0x61));
      });
      const run = await runMeasured(['ip', '8.8.8.8', '--server', server.url, '-f', 'json']);
      expect(run.code, run.stderr).toBe(5);
      expect(run.stderr).toContain('sent more than 4 MiB');
      expect(run.stderr).not.toMatch(/cannot reach|string longer/);
      expect(run.elapsedMs).toBeLessThan(PROMPT_MS);
      expect(run.peakRssMiB).toBeLessThan(MEMORY_BOUND_MIB);
      // -f json: the error as one record on stdout, nothing more.
      expect(JSON.parse(run.stdout)).toMatchObject({ error: { code: 'upstream', details: { limit_octets: REMOTE_LIMITS.recordOctets } } });
      expect(run.stdoutOctets).toBeLessThan(2048);
    });

    it('counts the cap after decoding: a 1 GiB gzip bomb stops at 4 MiB', async () => {
      // 16 gzip members of 64 MiB of spaces each: about 1 MiB on the wire, 1 GiB decoded.
      const member = gzipSync(Buffer.alloc(64 * 2 ** 20, 0x20), { level: 9 });
      const server = await peer((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        for (let i = 0; i < 16; i++) response.write(member);
        response.end();
      });
      const run = await runMeasured(['ip', '8.8.8.8', '--server', server.url]);
      expect(run.code, run.stderr).toBe(5);
      expect(run.stderr).toContain('sent more than 4 MiB');
      expect(run.elapsedMs).toBeLessThan(PROMPT_MS);
      expect(run.peakRssMiB).toBeLessThan(MEMORY_BOUND_MIB);
    });

    it('gives bulk answers the larger cap: a 10 MiB asn bulk answer is read, an endless one stops at 32 MiB', async () => {
      // Three records whose prefix lists make the answer about 10 MiB: over a record's cap, under a batch's.
      const prefixes = Array.from({ length: 180_000 }, (_, i) => `10.${(i >> 8) & 255}.${i & 255}.0/24`);
      const big = { ...asnRecord, prefixes: { ipv4: prefixes, ipv6: [] } };
      const queries = ['AS1', 'AS2', 'AS3'];
      const answer = JSON.stringify({
        results: queries.map((query) => ({ query, record: { ...big, query, asn: Number(query.slice(2)) } })),
        summary: { total: 3, succeeded: 3, failed: 0, errors: {} },
      });
      expect(answer.length).toBeGreaterThan(REMOTE_LIMITS.recordOctets);
      expect(answer.length).toBeLessThan(REMOTE_LIMITS.bulkOctets);
      const server = await peer((request, response) => {
        if (request.url === '/api/quota') return json(response, quotaRecord(50));
        json(response, answer);
      });
      const run = await runMeasured(['asn', ...queries, '--server', server.url, '--api-key', 'k', '-f', 'ndjson']);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdoutOctets).toBeGreaterThan(3 * 180_000 * 10);
      expect(run.peakRssMiB).toBeLessThan(MEMORY_BOUND_MIB * 2);

      const endless = await peer((request, response) => {
        if (request.url === '/api/quota') return json(response, quotaRecord(50));
        response.writeHead(200, { 'content-type': 'application/json' });
        writeForever(response, Buffer.alloc(64 * 1024, 0x20), '{"results":[');
      });
      const capped = await runMeasured(['asn', ...queries, '--server', endless.url, '--api-key', 'k', '-f', 'ndjson']);
      expect(capped.code, capped.stderr).toBe(5);
      const rows = capped.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { error: { code: string; message: string } });
      expect(rows).toHaveLength(3);
      for (const row of rows) expect(row.error.message).toContain('sent more than 32 MiB answering /api/asn-lookup?bulk=AS1%2CAS2%2CAS3, the cap on one asn bulk answer');
      expect(capped.elapsedMs).toBeLessThan(PROMPT_MS * 2);
      expect(capped.peakRssMiB).toBeLessThan(MEMORY_BOUND_MIB);
    });

    it('lets -t 3000 win: a silent server ends the run in about 3 s, not 35', async () => {
      const server = await peer(() => {});
      const run = await runMeasured(['ip', '8.8.8.8', '--server', server.url, '-t', '3000']);
      expect(run.code, run.stderr).toBe(4);
      expect(run.stderr).toContain(`the server at ${server.url} did not answer /api/ipinfo?ip=8.8.8.8 within 3000 ms (stopped before the headers of the answer were complete)`);
      expect(run.elapsedMs).toBeGreaterThanOrEqual(2900);
      expect(run.elapsedMs).toBeLessThan(3000 + PROMPT_MS);
    });

    it('asks a server that answered none of the last calls nothing more: 100 targets end in about one deadline, not 13, one row each', async () => {
      const server = await peer(() => {});
      const targets = Array.from({ length: 100 }, (_, i) => `192.0.2.${i + 1}`);
      const run = await runMeasured(['ip', ...targets, '--server', server.url, '-t', '1000', '-f', 'ndjson']);
      expect(run.code, run.stderr).toBe(4);
      const rows = run.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { query: string; error: { code: string; message: string } });
      expect(rows.map((row) => row.query)).toEqual(targets);
      expect(rows.every((row) => row.error.code === 'timeout')).toBe(true);
      expect(rows.at(-1)!.error.message).toMatch(new RegExp(`^not asked: the server at ${server.url.replace(/[.]/g, '\\.')} did not answer \\d+ calls in a row \\(the last: `));
      // Asked one by one, 8 at a time, they took 13 deadlines.
      expect(server.requests.length).toBeLessThan(20);
      expect(run.elapsedMs).toBeLessThan(3 * 1000 + PROMPT_MS);
    });

    it('keeps asking a server that answered, however many targets in a row it is too slow for', async () => {
      const server = await peer((request, response) => {
        if (request.url === '/api/ipinfo?ip=8.8.8.8') json(response, ipRecord);
      });
      const targets = ['8.8.8.8', ...Array.from({ length: 6 }, (_, i) => `192.0.2.${i + 1}`), '8.8.8.8'];
      const run = await runMeasured(['ip', ...targets, '--server', server.url, '-t', '500', '--concurrency', '1', '-f', 'ndjson'], { killAfterMs: 60_000 });
      const rows = run.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { query: string; ip?: string; error?: { message: string } });
      expect(rows.map((row) => row.query ?? row.ip)).toEqual(targets);
      expect(rows.at(-1)).toMatchObject({ ip: '8.8.8.8' });
      expect(rows.slice(1, -1).every((row) => row.error !== undefined && !row.error.message.startsWith('not asked'))).toBe(true);
      expect(server.requests).toHaveLength(targets.length);
    });

    it('takes the deadline from NETINTEL_TIMEOUT too, and holds it against headers dripped a byte at a time', async () => {
      const drip = await hostileTcpPeer((socket) => {
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n');
        const timer = setInterval(() => socket.write('x'), 100);
        socket.on('close', () => clearInterval(timer));
      });
      peers.push(drip);
      const run = await runMeasured(['ip', '8.8.8.8', '--server', drip.url], { env: { NETINTEL_TIMEOUT: '2000' } });
      expect(run.code, run.stderr).toBe(4);
      expect(run.stderr).toContain('within 2000 ms (stopped before the headers of the answer were complete)');
      expect(run.elapsedMs).toBeLessThan(2000 + PROMPT_MS);
    });

    it('holds the deadline against a body dripped a byte at a time', async () => {
      const server = await peer((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100000' });
        const timer = setInterval(() => response.write(' '), 100);
        response.on('close', () => clearInterval(timer));
      });
      const run = await runMeasured(['ip', '8.8.8.8', '--server', server.url, '-t', '2000']);
      expect(run.code, run.stderr).toBe(4);
      expect(run.stderr).toMatch(/within 2000 ms \(stopped after \d+ octets of the body\)/);
      expect(run.elapsedMs).toBeLessThan(2000 + PROMPT_MS);
    });

    it('says the connection closed when it is reset in the middle of the body', async () => {
      const server = await peer((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        response.write('{"ip":"8.8');
        setTimeout(() => response.socket?.destroy(), 50);
      });
      const run = await runMeasured(['ip', '8.8.8.8', '--server', server.url]);
      expect(run.code, run.stderr).toBe(5);
      expect(run.stderr).toContain(`the netintel server at ${server.url} closed the connection after 10 octets of the answer to /api/ipinfo?ip=8.8.8.8`);
      expect(run.elapsedMs).toBeLessThan(PROMPT_MS);
    });
  });

  describe('the shape of answers', () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    const cases: Array<[string, string | (() => unknown), RegExp]> = [
      ['an empty array', '[]', /Instance type "array" is invalid/],
      ['null', 'null', /Instance type "null" is invalid/],
      ['a record with only a kind', '{"kind":"ip"}', /required property "ip"/],
      ['members of the wrong types', '{"kind":"ip","location":"x","network":7}', /required property "ip"/],
      ['an array nested 200,000 deep', deep, /nested deeper than 64 levels/],
    ];
    for (const [what, body, reason] of cases) {
      it(`refuses ${what} as not a valid ip record (exit 5), without a crash`, async () => {
        const server = await peer((_request, response) => json(response, typeof body === 'string' ? body : body()));
        const run = await runMeasured(['ip', '8.8.8.8', '--server', server.url]);
        expect(run.code, run.stderr).toBe(5);
        expect(run.stderr).toMatch(/^netintel: the server's answer is not a valid ip record: /);
        expect(run.stderr).toMatch(reason);
        expect(run.stderr).not.toMatch(/internal error|undefined/);
        expect(run.stdoutOctets).toBe(0);
        expect(run.elapsedMs).toBeLessThan(PROMPT_MS);
        expect(run.peakRssMiB).toBeLessThan(MEMORY_BOUND_MIB);
      });
    }

    it('refuses an ip record without its location group, which only a bulk answer may leave out', async () => {
      const { location: _location, ...placeless } = ipRecord;
      const server = await peer((_request, response) => json(response, placeless));
      const run = await runMeasured(['ip', '8.8.8.8', '--server', server.url]);
      expect(run.code, run.stderr).toBe(5);
      expect(run.stderr).toBe('netintel: the server\'s answer is not a valid ip record: it has no location group\n');
    });

    it('says groups left out without the X-Netintel-Withheld header, rather than print the record as whole', async () => {
      const { network: _network, security: _security, ...basic } = ipRecord;
      const server = await peer((_request, response) => json(response, basic));
      const run = await runMeasured(['ip', '8.8.8.8', '--server', server.url, '--api-key', 'k', '-f', 'csv', '--fields', 'ip,security.is_vpn']);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toBe(`netintel: ${server.url} left out network,security: it did not say why (no X-Netintel-Withheld header), so the record is not whole\n`);
    });

    it('refuses a record whose groups have the wrong types, and prints no "ASundefined"', async () => {
      const server = await peer((_request, response) => json(response, { ...ipRecord, location: 'x', network: 7 }));
      const run = await runMeasured(['ip', '8.8.8.8', '--server', server.url]);
      expect(run.code, run.stderr).toBe(5);
      expect(run.stderr).toContain('the server\'s answer is not a valid ip record: at /location: Instance type "string" is invalid. Expected "object"');
      expect(run.stdout).not.toContain('undefined');
    });

    it('refuses a bulk answer that does not answer the queries sent, and a quota with an empty batch', async () => {
      const short = await peer((request, response) => {
        if (request.url === '/api/quota') return json(response, quotaRecord(50));
        json(response, { results: [{ query: 'AS1', record: { ...asnRecord, query: 'AS1' } }], summary: { total: 1, succeeded: 1, failed: 0, errors: {} } });
      });
      const run = await runMeasured(['asn', 'AS1', 'AS2', '--server', short.url, '-f', 'ndjson']);
      expect(run.code, run.stderr).toBe(5);
      expect(run.stdout).toContain('the server\'s answer is not a valid asn bulk answer: 1 items for the 2 queries sent');

      const empty = await peer((request, response) => json(response, quotaRecord(0)));
      const looped = await runMeasured(['asn', 'AS1', 'AS2', '--server', empty.url]);
      expect(looped.code, looped.stderr).toBe(5);
      expect(looped.stderr).toContain('the server\'s answer is not a valid quota record: batch sizes must be 1 to 1000 (batch 0, bulk_max null)');
      expect(looped.elapsedMs).toBeLessThan(PROMPT_MS);
    });
  });

  describe('429', () => {
    const limited = (retryAfter: string, body: unknown = { type: '/docs#problem-rate_limited', title: 'Over the plan limit', status: 429, detail: 'burst limit reached', code: 'rate_limited' }) =>
      peer((_request, response) => {
        const headers = { 'retry-after': retryAfter, 'x-ratelimit-retryafter': retryAfter };
        if (typeof body === 'string') {
          response.writeHead(429, { ...headers, 'content-type': 'text/html' });
          response.end(body);
        } else json(response, body, 429, { ...headers, 'content-type': 'application/problem+json' });
      });

    it('fails at once with exit 8 when Retry-After (110 s) is beyond the deadline, naming the wait', async () => {
      const server = await limited('110');
      const run = await runMeasured(['ip', '8.8.8.8', '--server', server.url, '-t', '3000']);
      expect(run.code, run.stderr).toBe(8);
      expect(run.stderr).toMatch(/burst limit reached; rate limited by http:\/\/127\.0\.0\.1:\d+ for \/api\/ipinfo\?ip=8\.8\.8\.8: the server asks to wait 110 s, more than the \d+ ms left of the 3000 ms deadline/);
      expect(server.requests).toHaveLength(1);
      expect(run.elapsedMs).toBeLessThan(PROMPT_MS);
    });

    it('exits 8, not 2, for Retry-After: 1e9 with an HTML page, at once', async () => {
      const server = await limited('1e9', '<html><body>Too many requests</body></html>');
      const run = await runMeasured(['ip', '8.8.8.8', '--server', server.url]);
      expect(run.code, run.stderr).toBe(8);
      expect(run.stderr).toContain(`rate limited by ${server.url} for /api/ipinfo?ip=8.8.8.8: the server asks to wait 1e9 s, more than the 120 s netintel waits`);
      expect(run.elapsedMs).toBeLessThan(PROMPT_MS);
    });

    it('retries within the deadline and stops at it: Retry-After: 1 again and again with -t 2500', async () => {
      const server = await limited('1');
      const run = await runMeasured(['ip', '8.8.8.8', '--server', server.url, '-t', '2500']);
      expect(run.code, run.stderr).toBe(8);
      expect(run.stderr).toMatch(/rate limited by .*; retry 1 in 1\.\d s/);
      expect(run.stderr).toMatch(/the server asks to wait 1 s, more than the \d+ ms left of the 2500 ms deadline/);
      expect(server.requests.length).toBeGreaterThanOrEqual(2);
      expect(run.elapsedMs).toBeLessThan(2500 + PROMPT_MS);
    });

    for (const absurd of ['soon', '-5', 'NaN']) {
      it(`backs off on its own within the deadline for Retry-After: ${absurd}, then exits 8`, async () => {
        const server = await limited(absurd);
        const run = await runMeasured(['ip', '8.8.8.8', '--server', server.url, '-t', '3000']);
        expect(run.code, run.stderr).toBe(8);
        expect(run.stderr).toContain(`the server sent Retry-After: ${absurd}, which is not a wait, and the next backoff of`);
        expect(run.stderr).toMatch(/ms is more than the \d+ ms left of the 3000 ms deadline/);
        expect(server.requests.length).toBeGreaterThanOrEqual(2);
        expect(run.elapsedMs).toBeLessThan(3000 + PROMPT_MS);
      });
    }
  });

  describe('what already held, and holds', () => {
    it('refuses a JSON body sent as text/html, and HTML sent as application/json', async () => {
      for (const [type, body] of [['text/html', JSON.stringify({ kind: 'ip' })], ['application/json', '<html>hello</html>']]) {
        const server = await peer((_request, response) => {
          response.writeHead(200, { 'content-type': type! });
          response.end(body);
        });
        const run = await runMeasured(['ip', '8.8.8.8', '--server', server.url]);
        expect(run.code, run.stderr).toBe(5);
        expect(run.stderr).toContain(`the server at ${server.url} answered /api/ipinfo?ip=8.8.8.8 with something other than JSON`);
        expect(run.elapsedMs).toBeLessThan(PROMPT_MS);
      }
    });

    it('says which status an HTML error page came with, reading at most 64 KiB of it', async () => {
      const server = await peer((_request, response) => {
        response.writeHead(502, { 'content-type': 'text/html' });
        writeForever(response, Buffer.alloc(64 * 1024, 0x20), '<html><body>Bad gateway');
      });
      const run = await runMeasured(['ip', '8.8.8.8', '--server', server.url]);
      expect(run.code, run.stderr).toBe(5);
      expect(run.stderr).toBe(`netintel: the server at ${server.url} answered HTTP 502\n`);
      expect(run.elapsedMs).toBeLessThan(PROMPT_MS);
      expect(run.peakRssMiB).toBeLessThan(MEMORY_BOUND_MIB);
    });

    it('keeps the code and words of a 5xx problem document, but never a CLI-only code', async () => {
      const problem = (code: string) => ({ type: `/docs#problem-${code}`, title: 't', status: 503, detail: 'the city database is missing', code });
      const server = await peer((_request, response) => json(response, problem('data_unavailable'), 503, { 'content-type': 'application/problem+json' }));
      const run = await runMeasured(['ip', '8.8.8.8', '--server', server.url]);
      expect(run.code, run.stderr).toBe(6);
      expect(run.stderr).toBe('netintel: the city database is missing\n');

      const liar = await peer((_request, response) => json(response, problem('findings'), 503, { 'content-type': 'application/problem+json' }));
      const lied = await runMeasured(['ip', '8.8.8.8', '--server', liar.url]);
      expect(lied.code, lied.stderr).toBe(5);
      expect(lied.stderr).toBe(`netintel: the server at ${liar.url} answered HTTP 503\n`);
    });
  });
});
