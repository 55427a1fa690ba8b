import type { MailMessage } from '../accounts/mailer.js';

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
