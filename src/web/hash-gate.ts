/**
 * The way into scrypt for the account forms. A password hash takes about a
 * tenth of a second of one libuv thread (passwords.ts); the pool has four,
 * shared with file reads and name lookups, so a wave of sign-in attempts
 * would otherwise queue seconds of work in front of every other request.
 *
 * At most `running` hashes run at once on this server; the rest wait, and
 * the next one to run is taken from the clients in turn, so a client with
 * many attempts waiting delays another client by at most one hash per turn.
 * A client may have at most `waitingPerClient` hashes waiting, and all
 * clients together `waitingTotal`: a request beyond either is refused at
 * once, without hashing.
 *
 * Not a library: p-limit and p-queue queue in arrival order (one client's
 * burst delays everyone behind it) and have no per-key bound.
 */
export interface HashGateLimits {
  running: number;
  waitingPerClient: number;
  waitingTotal: number;
}

export const HASH_GATE_LIMITS: HashGateLimits = { running: 2, waitingPerClient: 10, waitingTotal: 256 };

/** What `run` gives when the work was refused: too much is waiting. */
export const GATE_FULL = Symbol('hash gate full');

export class HashGate {
  private running = 0;
  private waitingTotal = 0;
  /** Waiting work per client, in the order the clients are served. */
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(private readonly limits: HashGateLimits = HASH_GATE_LIMITS) {}

  /** Runs `work` when its turn comes, or gives GATE_FULL at once (without running it) when too much is waiting. */
  async run<T>(client: string, work: () => Promise<T>): Promise<T | typeof GATE_FULL> {
    if (this.running >= this.limits.running || this.waiting.size > 0) {
      const queue = this.waiting.get(client) ?? [];
      if (queue.length >= this.limits.waitingPerClient || this.waitingTotal >= this.limits.waitingTotal) return GATE_FULL;
      await new Promise<void>((resolve) => {
        queue.push(resolve);
        this.waiting.set(client, queue);
        this.waitingTotal++;
      });
    } else {
      this.running++;
    }
    try {
      return await work();
    } finally {
      this.next();
    }
  }

  /** Hands the freed slot to the first waiting client, which then goes to the back of the turn. */
  private next(): void {
    const first = this.waiting.entries().next();
    if (first.done) {
      this.running--;
      return;
    }
    const [client, queue] = first.value;
    const resolve = queue.shift()!;
    this.waiting.delete(client);
    if (queue.length > 0) this.waiting.set(client, queue);
    this.waitingTotal--;
    resolve();
  }
}
