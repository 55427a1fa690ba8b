/**
 * "N requests at once, then kill -9 at a random point, then restart and
 * check invariants", for any feature that writes: start the process with
 * `start`, send `requests` requests with at most `concurrency` in flight,
 * SIGKILL the process at a moment drawn from `seed` within `killWindowMs`,
 * and hand back what the process confirmed before it died (the requests
 * whose answer came) and what it did not. The test then restarts the
 * process and checks that everything confirmed is there, and that nothing
 * is there twice.
 *
 * The seed is printed with a failure, so a run can be replayed.
 */
import { seededRandom } from './seeded-random.js';
import type { Served } from './served.js';

export interface CrashOutcome<T> {
  /** The answers that came back before the kill, by request index. */
  confirmed: Map<number, T>;
  /** Requests whose answer did not come (cut by the kill, or never sent). */
  unconfirmed: number[];
  /** When the process was killed, in ms after the first request. */
  killedAfterMs: number;
  seed: number;
}

export interface CrashRun<T> {
  /** Starts the process under test; resolves once it listens. */
  start: () => Promise<Served>;
  /** Sends request `index`; resolves with what the process confirmed, rejects when it did not answer. */
  request: (served: Served, index: number) => Promise<T>;
  requests: number;
  concurrency: number;
  /** The kill comes at a random moment of this window, in ms after the first request. */
  killWindowMs: readonly [number, number];
  seed: number;
}

export async function burstThenKill<T>(run: CrashRun<T>): Promise<{ served: Served; outcome: CrashOutcome<T> }> {
  const served = await run.start();
  const random = seededRandom(run.seed);
  const [earliest, latest] = run.killWindowMs;
  const killAfterMs = Math.floor(earliest + random() * (latest - earliest));
  const confirmed = new Map<number, T>();
  const started = performance.now();
  let killed = false;
  const kill = setTimeout(() => {
    killed = true;
    served.child.kill('SIGKILL');
  }, killAfterMs);

  let next = 0;
  const worker = async (): Promise<void> => {
    while (!killed && next < run.requests) {
      const index = next++;
      try {
        confirmed.set(index, await run.request(served, index));
      } catch {
        // Not confirmed: the kill cut it.
      }
    }
  };
  await Promise.all(Array.from({ length: run.concurrency }, worker));
  // Every request was answered before the kill came: kill now, the restart must still find everything.
  clearTimeout(kill);
  if (!killed) served.child.kill('SIGKILL');
  await served.exit;
  const unconfirmed = Array.from({ length: run.requests }, (_, index) => index).filter((index) => !confirmed.has(index));
  return { served, outcome: { confirmed, unconfirmed, killedAfterMs: Math.round(Math.min(performance.now() - started, killAfterMs)), seed: run.seed } };
}

/** Polls `check` until it returns true or `timeoutMs` passes; says what was last seen when it does not. */
export async function eventually(check: () => Promise<boolean> | boolean, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
