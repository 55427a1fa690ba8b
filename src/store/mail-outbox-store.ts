import { placeholders, type Database } from './database.js';

/** What a queued message is: the account pages make its text (and link) when it is sent (web/mail-messages.ts). */
export type MailKind = 'verify-email' | 'already-registered' | 'reset-password';

/** A message of the outbox, as the sender gets it. */
export interface QueuedMail {
  /** Random, 32 hex digits: the message's Message-ID and file name are made from it, so a message sent twice is the same message. */
  id: string;
  kind: MailKind;
  /** The account it is for; null for a reset asked for an address (whether it has an account is looked up when sending). */
  accountId: string | null;
  recipient: string;
  createdAt: string;
  /** Attempts so far, this one included. */
  attempts: number;
}

/**
 * The sender's side of the mail outbox (`queueMail` of the account store
 * writes to it, in the transaction of what the message belongs to). A row is
 * claimed for a lease before it is sent, so that of several servers exactly
 * one sends it, and a server that dies while sending leaves it to another
 * once the lease is over.
 */
export interface MailOutboxStore {
  /** Claims up to `limit` messages due now for `leaseMs`, oldest first; each claim counts as an attempt. */
  claimDue(limit: number, leaseMs: number): Promise<QueuedMail[]>;
  /** Marks a message sent, or settled without sending (`note` says why: the account is gone, say). */
  markSent(id: string, note?: string): Promise<void>;
  /** Records a failed attempt: tried again at `retryAt`, or never (null: given up). */
  markFailed(id: string, error: string, retryAt: Date | null): Promise<void>;
  /** Messages not yet sent and not given up. */
  pending(): Promise<number>;
}

interface OutboxRow {
  id: string;
  kind: MailKind;
  account_id: string | null;
  recipient: string;
  created_at: string;
  attempts: number | string;
}

export function createMailOutboxStore(db: Database, options: { now?: () => Date } = {}): MailOutboxStore {
  const now = options.now ?? (() => new Date());
  return {
    claimDue(limit, leaseMs) {
      return db.transaction(async (tx) => {
        const at = now();
        const due = await tx.all<{ id: string }>(
          `SELECT id FROM mail_outbox
            WHERE sent_at IS NULL AND gave_up_at IS NULL AND next_attempt_at <= $1 AND (claimed_until IS NULL OR claimed_until <= $1)
            ORDER BY next_attempt_at, id LIMIT ${Math.max(1, Math.floor(limit))}${db.skipLocked}`,
          [at],
        );
        if (due.length === 0) return [];
        const ids = due.map((row) => row.id);
        const claimed = await tx.all<OutboxRow>(
          `UPDATE mail_outbox SET claimed_until = $1, attempts = attempts + 1 WHERE id IN (${placeholders(ids.length, 2)}) RETURNING id, kind, account_id, recipient, created_at, attempts`,
          [new Date(at.getTime() + leaseMs), ...ids],
        );
        return claimed
          .sort((a, b) => ids.indexOf(a.id) - ids.indexOf(b.id))
          .map((row) => ({ id: row.id, kind: row.kind, accountId: row.account_id, recipient: row.recipient, createdAt: row.created_at, attempts: Number(row.attempts) }));
      });
    },
    async markSent(id, note) {
      await db.run('UPDATE mail_outbox SET sent_at = $1, claimed_until = NULL, last_error = $2 WHERE id = $3', [now(), note ?? null, id]);
    },
    async markFailed(id, error, retryAt) {
      await (retryAt === null
        ? db.run('UPDATE mail_outbox SET gave_up_at = $1, claimed_until = NULL, last_error = $2 WHERE id = $3', [now(), error, id])
        : db.run('UPDATE mail_outbox SET next_attempt_at = $1, claimed_until = NULL, last_error = $2 WHERE id = $3', [retryAt, error, id]));
    },
    async pending() {
      const row = await db.one<{ pending: number | string }>('SELECT count(*) AS pending FROM mail_outbox WHERE sent_at IS NULL AND gave_up_at IS NULL');
      return Number(row?.pending ?? 0);
    },
  };
}
