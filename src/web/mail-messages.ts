import type { MailMessage } from '../accounts/mailer.js';
import type { AccountOperations } from '../store/account-store.js';
import type { QueuedMail } from '../store/mail-outbox-store.js';

/**
 * The messages the account pages send: plain text, links on lines of their
 * own so every client makes them clickable. Lines stay within 76
 * characters, so the message goes as 7bit text, readable as it is in an
 * outbox file (longer lines would be quoted-printable, RFC 2045 §6.7, with
 * the links broken by soft line breaks).
 */
export function verificationMail(to: string, link: string): MailMessage {
  return {
    to,
    subject: 'Verify your e-mail address for netintel',
    text: [
      'Hello,',
      '',
      'Someone (we hope you) made a netintel account with this address.',
      'Open this link to verify it:',
      '',
      link,
      '',
      'The link works once, for 24 hours. If you did not sign up, ignore this',
      'message: no account is usable without it.',
    ].join('\n'),
  };
}

/** Sent instead of a verification when the address has an account already, so the sign-up page need not say so. */
export function alreadyRegisteredMail(to: string, loginUrl: string, forgotUrl: string): MailMessage {
  return {
    to,
    subject: 'You already have a netintel account',
    text: [
      'Hello,',
      '',
      'Someone (we hope you) tried to sign up for netintel with this address,',
      'which has an account already.',
      '',
      `Log in: ${loginUrl}`,
      `Forgotten your password? ${forgotUrl}`,
      '',
      'If it was not you, ignore this message; nothing has changed.',
    ].join('\n'),
  };
}

export function resetMail(to: string, link: string): MailMessage {
  return {
    to,
    subject: 'Choose a new netintel password',
    text: [
      'Hello,',
      '',
      'Someone (we hope you) asked to choose a new password for the netintel',
      'account of this address. Open this link:',
      '',
      link,
      '',
      'The link works once, for one hour. If you did not ask, ignore this',
      'message; your password stays as it is.',
    ].join('\n'),
  };
}

/**
 * Makes the message of a queued row when it is sent (accounts/mail-sender.ts),
 * with a new link where it needs one: a link made now is the newest of its
 * kind, which the older ones give way to. Null when there is nothing to send
 * any more: the account is gone or disabled, or verified already.
 */
export function composeAccountMail(accounts: AccountOperations, publicUrl: () => string): (mail: QueuedMail) => Promise<MailMessage | null> {
  const url = (path: string) => `${publicUrl()}${path}`;
  return async (mail) => {
    const account = mail.accountId !== null ? await accounts.byId(mail.accountId) : await accounts.byEmail(mail.recipient);
    if (account === null || account.disabled_at !== null) return null;
    switch (mail.kind) {
      case 'verify-email': {
        if (account.email_verified_at !== null) return null;
        // The token in the path keeps a link to 76 characters on most hosts, a line mail does not wrap (RFC 2045 §6.7).
        return verificationMail(account.email, url(`/verify/${(await accounts.issueLink(account.id, 'verify-email')).token}`));
      }
      case 'already-registered':
        return alreadyRegisteredMail(account.email, url('/login'), url('/forgot'));
      case 'reset-password':
        return resetMail(account.email, url(`/reset/${(await accounts.issueLink(account.id, 'reset-password')).token}`));
    }
  };
}
