import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { KEY_CHANGES_CHANNEL } from './migrations.js';

/** What a server knows of the changes other processes made to keys and accounts. */
export interface ChangeFollower {
  /** A value that moves at every announced change; null while a change could go unheard. */
  mark(): string | null;
  close(): Promise<void>;
}

export interface FollowOptions {
  /** How often a probe is sent through the pool to prove the listening connection delivers (default 1 s). */
  probeEveryMs?: number;
  /** How long a probe may take to come back before the connection counts as lost (default 5 s). */
  patienceMs?: number;
  /** The first wait before listening again after a loss; it doubles up to 30 s (default 1 s). */
  retryMs?: number;
}

const MAX_RETRY_MS = 30_000;
const PROBE = 'probe:';

/**
 * Follows the changes that migration 7's triggers announce (NOTIFY on
 * KEY_CHANGES_CHANNEL), on a connection of its own that LISTENs, so that a
 * server may keep checked keys in memory and still refuse a key revoked
 * anywhere within the notification's trip.
 *
 * The mark is null, and nothing may be kept, until a probe sent through the
 * pool has come back on the listening connection: a pooler in transaction
 * mode accepts LISTEN and never delivers. It is null again from the moment
 * the connection is lost, or a probe is not back within `patienceMs` (a
 * connection cut without a word), until listening is proved again; it then
 * moves, since what changed meanwhile was not heard.
 */
export function followKeyChanges(driver: typeof pg, url: string, pool: pg.Pool, options: FollowOptions = {}): ChangeFollower {
  const probeEveryMs = options.probeEveryMs ?? 1000;
  const patienceMs = options.patienceMs ?? 5000;
  const firstRetryMs = options.retryMs ?? 1000;
  let generation = 0;
  let mark: string | null = null;
  let client: pg.Client | null = null;
  /** Whether `client` has run LISTEN. */
  let listening = false;
  /** The probe on its way, and when it was sent. */
  let probe: { payload: string; sentAt: number } | null = null;
  let retryMs = firstRetryMs;
  let retry: NodeJS.Timeout | undefined;
  let closed = false;

  const move = (): void => {
    generation += 1;
    mark = String(generation);
  };

  const lose = (): void => {
    mark = null;
    probe = null;
    listening = false;
    const lost = client;
    client = null;
    lost?.end().catch(() => {});
    if (closed || retry !== undefined) return;
    retry = setTimeout(() => {
      retry = undefined;
      void listen();
    }, retryMs).unref();
    retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
  };

  const sendProbe = (): void => {
    const payload = `${PROBE}${randomUUID()}`;
    probe = { payload, sentAt: performance.now() };
    pool.query('SELECT pg_notify($1, $2)', [KEY_CHANGES_CHANNEL, payload]).catch(() => {
      if (probe?.payload === payload) lose();
    });
  };

  const heard = (message: pg.Notification): void => {
    if (message.channel !== KEY_CHANGES_CHANNEL) return;
    if (!message.payload?.startsWith(PROBE)) {
      if (mark !== null) move();
      return;
    }
    if (message.payload !== probe?.payload) return;
    probe = null;
    if (mark === null) {
      retryMs = firstRetryMs;
      move();
    }
  };

  const listen = async (): Promise<void> => {
    const next = new driver.Client({ connectionString: url, application_name: 'netintel (key changes)', keepAlive: true, connectionTimeoutMillis: 10_000 });
    client = next;
    // Events of a connection already given up are ignored; its errors must not end the process.
    next.on('error', () => client === next && lose());
    next.on('end', () => client === next && lose());
    next.on('notification', (message) => client === next && heard(message));
    try {
      await next.connect();
      await next.query(`LISTEN ${KEY_CHANGES_CHANNEL}`);
    } catch {
      if (client === next) lose();
      return;
    }
    if (client !== next) return;
    listening = true;
    sendProbe();
  };

  const ticker = setInterval(() => {
    if (!listening) return;
    if (probe === null) sendProbe();
    else if (performance.now() - probe.sentAt >= patienceMs) lose();
  }, probeEveryMs).unref();

  void listen();

  return {
    mark: () => mark,
    async close() {
      closed = true;
      clearInterval(ticker);
      clearTimeout(retry);
      mark = null;
      listening = false;
      const last = client;
      client = null;
      await last?.end().catch(() => {});
    },
  };
}
