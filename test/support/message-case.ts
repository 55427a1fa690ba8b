/**
 * The one case of netintel's messages (docs/development.md): an error's
 * message starts in lower case, unless its first word is an acronym (DNS,
 * TLS, IPv6, AS65000...) or a name. The messages are made that way where
 * they are thrown, so the CLI's stderr, JSON, XML and CSV error records and
 * the API's problem bodies all carry the same text.
 */
import { isErrorCode } from '../../src/errors.js';

/** Words a message may start with that keep their capital: names, not the start of a sentence. */
const NAMES = new Set(['Tor', 'Redis', 'Google', 'Microsoft', 'Node', 'Azure', 'Oracle', 'Cloudflare', 'Amazon', 'Punycode', 'Spamhaus']);

/** The first word of `message` when it is a capitalised ordinary word (`Cannot`), else null (`cannot`, `DNS`, `IPv6`, `AS0`, `Tor`). */
export function capitalisedStart(message: string): string | null {
  const word = /^[A-Z][a-z]+(?=$|[\s:,;.'"()-])/.exec(message)?.[0];
  return word === undefined || NAMES.has(word) ? null : word;
}

/**
 * The messages of the error records in a parsed JSON value: every object
 * with an error code (`code`) and a `message`, at any depth (a bulk item's
 * `error`, an e-mail test's `errors` and `failure`, a record of `-f json`),
 * and a problem document's `detail`.
 */
export function errorMessagesIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(errorMessagesIn);
  if (value === null || typeof value !== 'object') return [];
  const record = value as Record<string, unknown>;
  const own: string[] = [];
  if (typeof record.code === 'string' && isErrorCode(record.code)) {
    if (typeof record.message === 'string') own.push(record.message);
    if (typeof record.detail === 'string') own.push(record.detail);
  }
  return [...own, ...Object.values(record).flatMap(errorMessagesIn)];
}

/** The error messages of `value` that start with a capitalised ordinary word. */
export function capitalisedErrorMessages(value: unknown): string[] {
  return errorMessagesIn(value).filter((message) => capitalisedStart(message) !== null);
}
