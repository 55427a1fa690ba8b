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

interface Pending {
  keyId: string;
  day: string;
  count: number;
  lastUsedAt: number;
}

/**
 * Per-key usage kept in memory per (key, UTC day) and written to the key
 * store once an interval, so that a request costs a map update rather than
 * a database write, and several servers sharing one database each add
 * their own counts. The timer does not keep the process alive.
 */
export function createUsageRecorder(keys: KeyStore, options: UsageRecorderOptions = {}): UsageRecorder {
  const now = options.now ?? Date.now;
  const onError = options.onError ?? (() => {});
  const maxPending = options.maxPending ?? 100_000;
  const intervalMs = options.flushIntervalMs ?? 2000;
  if (!Number.isSafeInteger(intervalMs) || intervalMs <= 0) throw new NetintelError('usage', `flushIntervalMs must be a whole number above 0, not ${intervalMs}`);

  // Insertion order is age order: the first entries are the oldest.
  let pending = new Map<string, Pending>();
  let dropped = 0;
  let writing: Promise<void> | null = null;
  let closed = false;

  /** Drops the oldest counts beyond the bound. */
  const trim = (): void => {
    for (const slot of pending.keys()) {
      if (pending.size <= maxPending) break;
      pending.delete(slot);
      dropped++;
    }
  };

  const reportDropped = (): void => {
    if (dropped === 0) return;
    const count = dropped;
    dropped = 0;
    onError(
      new NetintelError('data_unavailable', `dropped ${count} unwritten usage counts (key and day): the key database has not taken writes for too long`, {
        details: { dropped: count, max_pending: maxPending },
      }),
    );
  };

  const write = async (): Promise<void> => {
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    const entries: KeyUsageEntry[] = [...batch.values()].map((entry) => ({ ...entry, lastUsedAt: new Date(entry.lastUsedAt) }));
    try {
      await keys.recordUsage(entries);
    } catch (error) {
      // The failed batch is older than what was counted meanwhile: it goes first, to be dropped first.
      for (const [slot, entry] of pending) {
        const kept = batch.get(slot);
        if (kept) {
          kept.count += entry.count;
          kept.lastUsedAt = Math.max(kept.lastUsedAt, entry.lastUsedAt);
        } else batch.set(slot, entry);
      }
      pending = batch;
      trim();
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
      const day = utcDay(at);
      const slot = `${day}\u0000${keyId}`;
      const entry = pending.get(slot);
      if (entry) {
        entry.count += items;
        entry.lastUsedAt = Math.max(entry.lastUsedAt, at);
        return;
      }
      pending.set(slot, { keyId, day, count: items, lastUsedAt: at });
      if (pending.size > maxPending) trim();
    },
    flush,
    async close(): Promise<void> {
      closed = true;
      clearInterval(timer);
      await flush();
    },
  };
}
