import { createHmac } from 'node:crypto';
import type { SmtpAuthMechanism } from './smtp-result.js';
import type { ReplyOutcome, SmtpSession } from './smtp-session.js';

const REDACTED = '[redacted]';

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/**
 * The strings an AUTH exchange could expose, for the session to scrub from
 * anything it records (a server that echoes what it got). Very short
 * passwords are left out: scrubbing every "ab" from a transcript would
 * make it unreadable, and the exchange itself is never recorded in clear.
 */
export function authSecrets(user: string, pass: string): string[] {
  const secrets = [pass, base64(pass), base64(`\0${user}\0${pass}`)];
  return secrets.filter((secret) => secret.length >= 4);
}

/**
 * Runs one SASL exchange (RFC 4954) and returns the server's final reply:
 * PLAIN with an initial response (RFC 4616), LOGIN (username and password
 * each after a 334 prompt), CRAM-MD5 (RFC 2195: HMAC-MD5 of the server's
 * challenge keyed with the password). Every line carrying credentials is
 * recorded as `[redacted]`.
 */
export async function authenticate(
  session: SmtpSession,
  mechanism: SmtpAuthMechanism,
  user: string,
  pass: string,
  timeoutMs: number,
): Promise<ReplyOutcome> {
  switch (mechanism) {
    case 'PLAIN': {
      const blob = base64(`\0${user}\0${pass}`);
      const first = await session.command(`AUTH PLAIN ${blob}`, timeoutMs, `AUTH PLAIN ${REDACTED}`);
      // A server that does not take an initial response asks for it with an empty 334.
      if (first.kind === 'reply' && first.reply.code === 334) return session.command(blob, timeoutMs, REDACTED);
      return first;
    }
    case 'LOGIN': {
      const prompt = await session.command('AUTH LOGIN', timeoutMs);
      if (prompt.kind !== 'reply' || prompt.reply.code !== 334) return prompt;
      const second = await session.command(base64(user), timeoutMs, REDACTED);
      if (second.kind !== 'reply' || second.reply.code !== 334) return second;
      return session.command(base64(pass), timeoutMs, REDACTED);
    }
    case 'CRAM-MD5': {
      const challenge = await session.command('AUTH CRAM-MD5', timeoutMs);
      if (challenge.kind !== 'reply' || challenge.reply.code !== 334) return challenge;
      const decoded = Buffer.from(challenge.reply.text.trim(), 'base64').toString('latin1');
      const digest = createHmac('md5', pass).update(decoded, 'latin1').digest('hex');
      return session.command(base64(`${user} ${digest}`), timeoutMs, REDACTED);
    }
  }
}

/**
 * The mechanism to test among those offered: the one asked for, else
 * PLAIN, LOGIN, CRAM-MD5 in that order (what mail clients use first);
 * null when none of them is offered.
 */
export function chooseMechanism(offered: readonly string[], wanted: SmtpAuthMechanism | undefined): SmtpAuthMechanism | null {
  if (wanted) return offered.includes(wanted) ? wanted : null;
  for (const mechanism of ['PLAIN', 'LOGIN', 'CRAM-MD5'] as const) if (offered.includes(mechanism)) return mechanism;
  return null;
}
