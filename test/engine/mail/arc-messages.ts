/**
 * The message ARC tests seal and break: a mail from alice@example.org to a
 * list at sealer1.test, which records its SPF verdict, and the sealing of
 * it by mailauth's sealer at a fixed time (1 July 2025, 10:00 UTC).
 */
import { sealMessage } from 'mailauth/lib/arc/index.js';
import type { TestKey } from './dkim-zone.js';

/** When the test messages are sealed, in seconds since the epoch (the time a verifier must be told). */
export const ARC_SEAL_TIME = Date.UTC(2025, 6, 1, 10, 0, 0) / 1000;

/** The list message, CRLF line ends, with `extra` header fields before the others. */
export function listMessage(from = 'alice@example.org', extra: readonly string[] = []): string {
  return [
    ...extra,
    'Authentication-Results: sealer1.test; spf=pass smtp.mailfrom=example.org; dkim=none',
    `From: Alice <${from}>`,
    'To: list@sealer1.test',
    'Subject: through a list',
    'Date: Tue, 1 Jul 2025 10:00:00 +0000',
    'Message-ID: <arc-1@example.org>',
    '',
    'The figures are attached.',
    '',
  ].join('\r\n');
}

/**
 * `message` with one more ARC set by `domain`: its Authentication-Results as
 * the set's ARC-Authentication-Results, cv=none for the first set and
 * cv=pass after.
 */
export async function sealOnce(message: string, key: TestKey, domain: string, selector: string): Promise<string> {
  const results = /^Authentication-Results: ([^\r]*)/m.exec(message)?.[1] ?? `${domain}; none`;
  const instances = (message.match(/^ARC-Seal:/gm) ?? []).length;
  const headers = await sealMessage(Buffer.from(message, 'latin1'), {
    signingDomain: domain,
    selector,
    privateKey: key.pem,
    signTime: new Date(ARC_SEAL_TIME * 1000),
    // mailauth's types lack the sealer's own options.
    ...({ authResults: results, cv: instances === 0 ? 'none' : 'pass' } as object),
  });
  return headers.toString('latin1') + message;
}
