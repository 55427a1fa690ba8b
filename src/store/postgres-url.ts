import { NetintelError } from '../errors.js';

/** `postgres://` or `postgresql://` (libpq's connection URI forms), any case. */
const POSTGRES_URL = /^postgres(?:ql)?:\/\//i;

/** Whether a `--db` value names a PostgreSQL database rather than a SQLite file. */
export function isPostgresUrl(value: string): boolean {
  return POSTGRES_URL.test(value);
}

/**
 * The URL with its password (in the user part or a `password=` parameter)
 * replaced by `***`: the only form of the URL that messages and logs show.
 */
export function redactPostgresUrl(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:@/?#]*:)[^@/?#]*@/i, '$1***@').replace(/([?&]password=)[^&#]*/gi, '$1***');
}

/** `host:port` of a URL for messages: the host (or `host=` parameter, or localhost) and the port (default 5432). */
export function postgresEndpoint(url: string): string {
  const parsed = parsePostgresUrl(url);
  const host = parsed.hostname || parsed.searchParams.get('host') || 'localhost';
  const port = parsed.port || parsed.searchParams.get('port') || '5432';
  return `${host}:${port}`;
}

/**
 * The password of a URL (decoded), or null; messages are searched for it
 * before they are shown.
 */
export function postgresPassword(url: string): string | null {
  const parsed = parsePostgresUrl(url);
  const password = parsed.password ? safeDecode(parsed.password) : parsed.searchParams.get('password');
  return password ? password : null;
}

/**
 * Checks a PostgreSQL URL.
 *
 * @throws NetintelError `usage`, naming the URL without its password.
 */
export function parsePostgresUrl(url: string): URL {
  try {
    return new URL(url);
  } catch {
    throw new NetintelError('usage', `${redactPostgresUrl(url)} is not a valid PostgreSQL URL (check --db: postgres://user:password@host:port/database)`, {
      details: { db: redactPostgresUrl(url) },
    });
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
