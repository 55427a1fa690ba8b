import type { MailOutboxStore, QueuedMail } from '../store/mail-outbox-store.js';
import type { MailDelivery, Mailer, MailMessage } from './mailer.js';

/**
 * Sends what the account pages queued in the outbox table (in the
 * transaction of what each message belongs to), so that a crash at any
 * moment loses no message: a row is sent until it is marked sent. Each row
 * is claimed for a lease first, so of several servers one sends it. The
 * message is made when it is sent (`compose`, which also makes its link),
 * with a Message-ID and outbox file name from the row's id: a message sent
 * again after a crash between sending and marking is the same message (the
 * outbox file is rewritten; a mail system sees a Message-ID it knows), and
 * only its newest link works.
 */
export interface MailSender {
  /** Looks for due messages now (after a commit that queued one) instead of at the next poll. */
  wake(): void;
  /** Sends everything due now; resolves when the outbox has nothing due. */
  drain(): Promise<void>;
  /** Stops polling and waits for the messages being sent. */
  close(): Promise<void>;
}

export interface MailSenderOptions {
  /** Makes the message of a row, with its link; null when there is nothing to send any more (the account is gone, or verified already). */
  compose: (mail: QueuedMail) => Promise<MailMessage | null>;
  /** How often the outbox is looked at without a wake-up, in ms (default 2000): rows another server queued, retries. */
  pollMs?: number;
  /** How long a claimed row is this sender's, in ms: longer than one send may take (the mailer's timeout and some). */
  leaseMs: number;
  /** A message not sent within this long of being queued is given up, in ms (default 24 h: its link has expired by then). */
  giveUpAfterMs?: number;
  now?: () => number;
  onSent?: (mail: QueuedMail, delivery: MailDelivery) => void;
  onFailed?: (mail: QueuedMail, error: unknown, retryAt: Date | null) => void;
  /** Hears of a look at the outbox that failed (the database did not answer); the next poll tries again. */
  onError?: (error: unknown) => void;
}

/** Rows claimed at once. */
const BATCH = 10;
const FIRST_RETRY_MS = 10_000;
const LONGEST_RETRY_MS = 3_600_000;

export function createMailSender(outbox: MailOutboxStore, mailer: Mailer, options: MailSenderOptions): MailSender {
  const now = options.now ?? Date.now;
  const giveUpAfterMs = options.giveUpAfterMs ?? 24 * 3_600_000;
  let running: Promise<void> | null = null;
  let again = false;
  let closed = false;

  const sendOne = async (mail: QueuedMail): Promise<void> => {
    try {
      const message = await options.compose(mail);
      if (message === null) {
        await outbox.markSent(mail.id, 'nothing to send');
        return;
      }
      const delivery = await mailer.send({ ...message, id: mail.id, date: new Date(mail.createdAt) });
      await outbox.markSent(mail.id);
      options.onSent?.(mail, delivery);
    } catch (error) {
      const age = now() - Date.parse(mail.createdAt);
      const wait = Math.min(FIRST_RETRY_MS * 2 ** (mail.attempts - 1), LONGEST_RETRY_MS);
      const retryAt = age + wait > giveUpAfterMs ? null : new Date(now() + wait);
      await outbox.markFailed(mail.id, error instanceof Error ? error.message : String(error), retryAt);
      options.onFailed?.(mail, error, retryAt);
    }
  };

  const drainOnce = async (): Promise<void> => {
    for (;;) {
      again = false;
      const due = await outbox.claimDue(BATCH, options.leaseMs);
      for (const mail of due) await sendOne(mail);
      if (due.length < BATCH && !again) return;
      if (closed) return;
    }
  };

  const drain = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = drainOnce().finally(() => {
      running = null;
    });
    return running;
  };

  const drainLogged = () => void drain().catch((error: unknown) => options.onError?.(error));
  const poll = setInterval(drainLogged, options.pollMs ?? 2000);
  poll.unref();

  return {
    wake() {
      if (!closed) drainLogged();
    },
    drain,
    async close() {
      closed = true;
      clearInterval(poll);
      await running?.catch(() => {});
    },
  };
}
