/**
 * The limits' Redis client against a peer that answers the script with
 * anything RESP can carry: every request is decided from a reply of the
 * script's shape, or fails as a Redis that did not answer (502
 * `unreachable`), never as a bug in netintel (500) or a made-up decision.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetintelError } from '../../src/errors.js';
import { createRedisLimitStore } from '../../src/server/limits/redis-limit-store.js';
import type { LimitStore } from '../../src/server/limits/limit-store.js';
import { startTestServer } from './harness.js';
import { startScriptedRedis, type RespValue, type ScriptedRedis } from './redis-server.js';

const policy = { daily: 100, perMinute: 60, burst: 10 };
const line = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz ABC:0123456789-_'.split('')), maxLength: 20 });
const anyResp: fc.Arbitrary<RespValue> = fc.letrec<{ value: RespValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.integer({ min: -(2 ** 31), max: 2 ** 31 }),
    fc.maxSafeInteger(),
    fc.string({ maxLength: 20 }),
    fc.constant(null),
    line.map((simple) => ({ simple })),
    line.map((text) => ({ error: `ERR ${text}` })),
    fc.array(tie('value'), { maxLength: 7 }),
  ),
})).value;
/** Replies near the script's shape: per call six small integers, sometimes out of range or inconsistent. */
const nearlyScripts = fc.array(fc.array(fc.integer({ min: -1, max: 3 }), { minLength: 5, maxLength: 7 }), { minLength: 0, maxLength: 2 });

describe('the limits in Redis, against a peer that answers the script with anything', () => {
  let peer: ScriptedRedis;
  let scriptAnswer: RespValue = null;
  let store: LimitStore;

  beforeAll(async () => {
    peer = await startScriptedRedis(([name]) => {
      switch (name!.toUpperCase()) {
        case 'INFO':
          return '# Server\r\nredis_version:7.0.0\r\nloading:0\r\n';
        case 'PING':
          return { simple: 'PONG' };
        case 'EVALSHA':
        case 'EVAL':
          return scriptAnswer;
        default:
          return { simple: 'OK' };
      }
    });
    store = await createRedisLimitStore(peer.url);
  });
  afterAll(async () => {
    await store?.close();
    await peer?.stop();
  });

  it('decides from a reply of the script\'s shape, and fails any other reply as 502 unreachable', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(anyResp, nearlyScripts), fc.integer({ min: 1, max: 3 }), async (reply, chargeCount) => {
        scriptAnswer = reply;
        const charges = Array.from({ length: chargeCount }, (_, index) => ({ subject: `s${index}`, policy, cost: 1 }));
        const outcome = await store.consumeAll(charges, Date.UTC(2030, 0, 1)).then(
          (state) => ({ state }),
          (error: unknown) => ({ error }),
        );
        if ('error' in outcome) {
          expect(outcome.error).toBeInstanceOf(NetintelError);
          expect(outcome.error).toMatchObject({ code: 'unreachable' });
          return;
        }
        // Accepted: the one reply for the one call, consistent with itself.
        const [allowed, limited, dailyRemaining, burstRemaining, retryAfterMs, refused] = (reply as number[][])[0]!;
        const { state } = outcome;
        expect(reply).toHaveLength(1);
        expect(state.allowed).toBe(allowed === 1);
        expect(state.limitedBy).toBe(state.allowed ? null : limited === 2 ? 'daily' : 'burst');
        expect(state.refusedIndex).toBe(state.allowed ? null : refused! - 1);
        if (!state.allowed) expect(state.refusedIndex).toBeLessThan(chargeCount);
        expect([state.dailyRemaining, state.burstRemaining, state.retryAfterMs]).toEqual([dailyRemaining, burstRemaining, retryAfterMs]);
        expect(Math.min(state.dailyRemaining, state.burstRemaining, state.retryAfterMs)).toBeGreaterThanOrEqual(0);
      }),
      {
        numRuns: 300,
        examples: [
          // No reply for the call, and a refusal by a third charge of a call of one.
          [[], 1],
          [[[0, 1, 0, 0, 1000, 3]], 1],
          [[[1, 0, 99, 9, 0, 0]], 1],
        ],
      },
    );
  });

  it('answers a request 502 unreachable, not 500, when the reply cannot be read', async () => {
    const server = await startTestServer({ limits: await createRedisLimitStore(peer.url) });
    try {
      scriptAnswer = [[0, 1, 0, 0, 1000, 7]];
      const response = await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8' });
      expect(response.statusCode).toBe(502);
      expect(JSON.parse(response.body)).toMatchObject({ code: 'unreachable', detail: expect.stringContaining('(Redis) answered what netintel cannot read') });
    } finally {
      await server.close();
    }
  });
});
