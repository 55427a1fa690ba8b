import { NetintelError } from '../errors.js';
import { utcDay, type KeyStore, type KeyUsageEntry } from '../store/key-store.js';

/** Counts the items each key is charged and writes them to the key database in batches. */
export interface UsageRecorder {
  /** Adds a request's charged items to its key's count of the current UTC day. */
  count(keyId: string, items: number): void;
  /**
   * Writes what has been counted in one `recordUsage`; after a failed write
   * the counts stay for the next one.
   *
   * @throws the store's error when the write fails.
   */
  flush(): Promise<void>;
  /** Stops the timer and writes what is left; rejects as `flush`. */
  close(): Promise<void>;
}

export interface UsageRecorderOptions {
  /** Time between writes, in ms (default 2000). */
  flushIntervalMs?: number;
  /** The clock that gives each count its UTC day and its key's last use, ms since the epoch. */
  now?: () => number;
  /** Hears of writes made by the timer that failed, and of counts dropped. */
  onError?: (error: unknown) => void;
  /** Counts (key and day) held at most while writes fail; beyond it the oldest go (default 100 000). */
  maxPending?: number;
}

const DAY_MS = 86_400_000;

interface Pending {
  keyId: string;
  day: string;
  count: number;
  lastUsedAt: number;
}

/**
 * The counts not yet written, per UTC day, then per key: insertion order is
 * age order, the first entries are the oldest. Held to `max` counts; beyond
 * it the oldest are dropped (and counted in `dropped`).
 */
class PendingUsage {
  private days = new Map<string, Map<string, Pending>>();
  size = 0;
  dropped = 0;

  constructor(private readonly max: number) {}

  add(day: string, keyId: string, items: number, at: number): void {
    let counted = this.days.get(day);
    if (counted === undefined) {
      counted = new Map();
      this.days.set(day, counted);
    }
    const entry = counted.get(keyId);
    if (entry) {
      entry.count += items;
      entry.lastUsedAt = Math.max(entry.lastUsedAt, at);
      return;
    }
    counted.set(keyId, { keyId, day, count: items, lastUsedAt: at });
    if (++this.size > this.max) this.trim();
  }

  /** Takes every count, leaving none. */
  take(): Map<string, Map<string, Pending>> {
    const batch = this.days;
    this.days = new Map();
    this.size = 0;
    return batch;
  }

  /** Puts back a batch whose write failed: it is older than what was counted meanwhile, so it goes first, to be dropped first. */
  putBack(batch: Map<string, Map<string, Pending>>): void {
    for (const [day, counted] of this.days) {
      const kept = batch.get(day) ?? new Map<string, Pending>();
      batch.set(day, kept);
      for (const [keyId, entry] of counted) {
        const earlier = kept.get(keyId);
        if (earlier) {
          earlier.count += entry.count;
          earlier.lastUsedAt = Math.max(earlier.lastUsedAt, entry.lastUsedAt);
        } else kept.set(keyId, entry);
      }
    }
    this.days = batch;
    this.size = 0;
    for (const counted of batch.values()) this.size += counted.size;
    this.trim();
  }

  /** Drops the oldest counts beyond the bound. */
  private trim(): void {
    for (const [day, counted] of this.days) {
      for (const keyId of counted.keys()) {
        if (this.size <= this.max) break;
        counted.delete(keyId);
        this.size--;
        this.dropped++;
      }
      if (counted.size === 0) this.days.delete(day);
      if (this.size <= this.max) return;
    }
  }
}

/**
 * Per-key usage kept in memory per (key, UTC day) and written to the key
 * store once an interval, so that a request costs two map lookups and an
 * addition (nothing is allocated once its key has been counted that day)
 * rather than a database write, and several servers sharing one database each add
 * their own counts. The timer does not keep the process alive.
 */
export function createUsageRecorder(keys: KeyStore, options: UsageRecorderOptions = {}): UsageRecorder {
  const now = options.now ?? Date.now;
  const onError = options.onError ?? (() => {});
  const maxPending = options.maxPending ?? 100_000;
  const intervalMs = options.flushIntervalMs ?? 2000;
  if (!Number.isSafeInteger(intervalMs) || intervalMs <= 0) throw new NetintelError('usage', `flushIntervalMs must be a whole number above 0, not ${intervalMs}`);

  const pending = new PendingUsage(maxPending);
  let writing: Promise<void> | null = null;
  let closed = false;
  // The UTC day of the last count and where it starts and ends: a count made within it costs no date arithmetic.
  let day = '';
  let dayStart = Infinity;
  let dayEnd = -Infinity;

  const reportDropped = (): void => {
    if (pending.dropped === 0) return;
    const count = pending.dropped;
    pending.dropped = 0;
    onError(
      new NetintelError('data_unavailable', `dropped ${count} unwritten usage counts (key and day): the key database has not taken writes for too long`, {
        details: { dropped: count, max_pending: maxPending },
      }),
    );
  };

  const write = async (): Promise<void> => {
    if (pending.size === 0) return;
    const batch = pending.take();
    const entries: KeyUsageEntry[] = [];
    for (const counted of batch.values()) for (const entry of counted.values()) entries.push({ ...entry, lastUsedAt: new Date(entry.lastUsedAt) });
    try {
      await keys.recordUsage(entries);
    } catch (error) {
      pending.putBack(batch);
      throw error;
    } finally {
      reportDropped();
    }
  };

  const flush = (): Promise<void> => {
    // One write at a time: a flush asked for during one runs after it.
    const next = (writing ?? Promise.resolve()).then(write);
    const settled: Promise<void> = next
      .then(
        () => {},
        () => {},
      )
      .then(() => {
        if (writing === settled) writing = null;
      });
    writing = settled;
    return next;
  };

  // A tick during a slow write waits for the next: writes do not queue up behind a database that hangs.
  const timer = setInterval(() => {
    if (writing === null) flush().catch(onError);
  }, intervalMs);
  timer.unref();

  return {
    count(keyId: string, items: number): void {
      if (closed || !Number.isSafeInteger(items) || items <= 0) return;
      const at = now();
      if (at < dayStart || at >= dayEnd) {
        day = utcDay(at);
        dayStart = Date.parse(day);
        dayEnd = dayStart + DAY_MS;
      }
      pending.add(day, keyId, items, at);
    },
    flush,
    async close(): Promise<void> {
      closed = true;
      clearInterval(timer);
      await flush();
    },
  };
}
