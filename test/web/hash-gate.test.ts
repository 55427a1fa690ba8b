/**
 * The hash gate (src/web/hash-gate.ts): how many password hashes run at
 * once, how many may wait per client and in all, and whose turn is next.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GATE_FULL, HashGate } from '../../src/web/hash-gate.js';

/** Work that finishes when the test says so, recording when it started. */
function controlled(log: string[], name: string) {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return {
    work: async () => {
      log.push(name);
      await done;
      return name;
    },
    finish,
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('the hash gate', () => {
  it('runs at most `running` at once, whatever arrives, and every accepted one runs exactly once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 3 }), async (clients, running) => {
        const gate = new HashGate({ running, waitingPerClient: 5, waitingTotal: 20 });
        let now = 0;
        let most = 0;
        const results = await Promise.all(
          clients.map((client, index) =>
            gate.run(`c${client}`, async () => {
              now++;
              most = Math.max(most, now);
              await settle();
              now--;
              return index;
            }),
          ),
        );
        expect(most).toBeLessThanOrEqual(running);
        const ran = results.filter((result) => result !== GATE_FULL);
        expect(new Set(ran).size).toBe(ran.length);
        expect(results.filter((result) => result === GATE_FULL).length + ran.length).toBe(clients.length);
      }),
      { numRuns: 100 },
    );
  });

  it('refuses at once, without running it, what is beyond a client\'s waiting bound or the total one', async () => {
    const log: string[] = [];
    const gate = new HashGate({ running: 1, waitingPerClient: 2, waitingTotal: 3 });
    const busy = controlled(log, 'busy');
    const first = gate.run('other', busy.work);
    const waiting = [gate.run('a', async () => 'a1'), gate.run('a', async () => 'a2')];
    expect(await gate.run('a', async () => 'a3')).toBe(GATE_FULL);
    waiting.push(gate.run('b', async () => 'b1'));
    expect(await gate.run('c', async () => 'c1')).toBe(GATE_FULL);
    busy.finish();
    expect(await first).toBe('busy');
    expect(await Promise.all(waiting)).toEqual(['a1', 'a2', 'b1']);
  });

  it('takes the waiting clients in turn, so one client\'s many attempts do not hold another back', async () => {
    const log: string[] = [];
    const gate = new HashGate({ running: 1, waitingPerClient: 10, waitingTotal: 100 });
    const busy = controlled(log, 'busy');
    const all = [gate.run('x', busy.work)];
    for (let index = 1; index <= 5; index++) all.push(gate.run('attacker', async () => void log.push(`attacker${index}`) as unknown as string));
    all.push(gate.run('owner', async () => void log.push('owner') as unknown as string));
    busy.finish();
    await Promise.all(all);
    // The owner, who came after five of the attacker's, runs second.
    expect(log.slice(0, 3)).toEqual(['busy', 'attacker1', 'owner']);
  });
});
