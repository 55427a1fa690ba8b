import { randomBytes } from 'node:crypto';
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';

import MailComposer from 'nodemailer/lib/mail-composer';
import SMTPConnection from 'nodemailer/lib/smtp-connection';

import { NetintelError, type ErrorCode } from '../errors.js';
import { needsSmtpUtf8 } from './email-address.js';
import { writeFileAtomically } from '../write-file-atomically.js';

/**
 * Sends account mail (verification and reset links) through an SMTP relay,
 * or, with no relay configured, writes each message as an RFC 5322 `.eml`
 * file into an outbox directory so a development setup can read the links.
 *
 * SMTP URLs: `smtp://user:pass@host:port` (STARTTLS when the server offers
 * it, nodemailer's default; port 587 when omitted) and
 * `smtps://user:pass@host:port` (TLS from the first byte, RFC 8314; port
 * 465 when omitted). User and password are percent-decoded.
 *
 * Every failure is one `NetintelError` whose message and details name the
 * relay without its password.
 */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /**
   * A stable id (the outbox row's): the Message-ID is `<id@domain of From>`
   * and the outbox file is named after it, so a message sent again after a
   * crash is the same message. Without one, each send makes a new id.
   */
  id?: string;
  /** The Date header (default: now). */
  date?: Date;
}

export interface MailerOptions {
  /** The From address, e.g. `netintel <no-reply@example.com>`. */
  from: string;
  /** The relay; when absent, messages go to `outboxDir`. */
  smtpUrl?: string;
  /** Where `.eml` files are written when there is no `smtpUrl`. */
  outboxDir?: string;
  /** PEM of the CA certificates to trust for the relay, instead of Node's built-in list (a private CA). */
  ca?: string;
  /** Limit in milliseconds for connecting, the greeting and each reply (default `DEFAULT_TIMEOUT_MS`). */
  timeoutMs?: number;
}

export type MailDelivery =
  | { via: 'smtp'; messageId: string; relay: string; response: string }
  | { via: 'outbox'; messageId: string; path: string };

export interface Mailer {
  send(message: MailMessage): Promise<MailDelivery>;
  /** Closes pooled connections, if any. */
  close(): void;
}

export const DEFAULT_TIMEOUT_MS = 30_000;

/** The URL without its password, for messages and logs. */
export function redactSmtpUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    // Not a URL: a `user:pass@` part can still be in it.
    return url.replace(/\/\/([^/@]*?):[^/@]*@/, '//$1:***@');
  }
}

interface SmtpSettings {
  host: string;
  port: number;
  secure: boolean;
  user: string | undefined;
  pass: string | undefined;
  redacted: string;
}

function parseSmtpUrl(url: string): SmtpSettings {
  const redacted = redactSmtpUrl(url);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new NetintelError('usage', `the SMTP URL ${redacted} is not a URL (use smtp://user:pass@host:port or smtps://...)`);
  }
  if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') {
    throw new NetintelError('usage', `the SMTP URL ${redacted} must start with smtp:// or smtps://`);
  }
  if (parsed.hostname === '') throw new NetintelError('usage', `the SMTP URL ${redacted} names no host`);
  const secure = parsed.protocol === 'smtps:';
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  return {
    host,
    port: parsed.port === '' ? (secure ? 465 : 587) : Number(parsed.port),
    secure,
    user: parsed.username === '' ? undefined : decodedCredential(parsed.username, 'user name', redacted),
    pass: parsed.password === '' ? undefined : decodedCredential(parsed.password, 'password', redacted),
    redacted,
  };
}

/** A percent-encoded user name or password of the URL; a malformed escape (`%zz`) is a usage error. */
function decodedCredential(text: string, what: string, redacted: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new NetintelError('usage', `the ${what} in the SMTP URL ${redacted} has a malformed %-escape (write % as %25)`);
  }
}

export function createMailer(options: MailerOptions): Mailer {
  if (options.smtpUrl !== undefined && options.smtpUrl !== '') return smtpMailer(options, parseSmtpUrl(options.smtpUrl));
  if (options.outboxDir !== undefined && options.outboxDir !== '') return outboxMailer(options, options.outboxDir);
  throw new NetintelError('usage', 'no way to send mail (give an SMTP URL, or an outbox directory for .eml files)');
}

/**
 * Sends over one SMTP session per message with nodemailer's SMTPConnection,
 * rather than its transport, because the transport sends an address that
 * needs SMTPUTF8 (RFC 6531) to a relay that does not offer it, as raw 8-bit
 * text: here the relay's EHLO answer is read first, and such a message is
 * refused with a clear error instead (§3.2: no downgrade is defined for a
 * non-ASCII local part).
 */
function smtpMailer(options: MailerOptions, smtp: SmtpSettings): Mailer {
  const timeout = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const session = (): SMTPConnection =>
    new SMTPConnection({
      host: smtp.host,
      port: smtp.port,
      secure: smtp.secure,
      ...(options.ca !== undefined ? { tls: { ca: options.ca } } : {}),
      connectionTimeout: timeout,
      greetingTimeout: timeout,
      socketTimeout: timeout,
    });
  return {
    async send(message) {
      const composed = composeMessage(options.from, message);
      const raw = await composed.build();
      const envelope = composed.envelope;
      const connection = session();
      try {
        await new Promise<void>((resolve, reject) => {
          connection.once('error', reject);
          connection.connect(() => resolve());
        });
        // After the connect event, the last answer is the relay's EHLO (after STARTTLS when it offered that).
        const extensions = String(connection.lastServerResponse || '');
        if (envelope.to.concat(envelope.from || []).some(needsSmtpUtf8) && !/^\d{3}[ -]SMTPUTF8\b/im.test(extensions)) {
          throw new NetintelError('upstream', `the mail relay ${smtp.host}:${smtp.port} does not offer SMTPUTF8, which mail to ${JSON.stringify(message.to)} needs (RFC 6531; use a relay that offers it)`, {
            details: { relay: smtp.redacted, reason: 'smtputf8_not_offered' },
          });
        }
        if (smtp.user !== undefined) await new Promise<void>((resolve, reject) => connection.login({ user: smtp.user!, pass: smtp.pass ?? '' }, (error) => (error ? reject(error) : resolve())));
        const info = await new Promise<{ response: string }>((resolve, reject) =>
          connection.send({ from: envelope.from || '', to: envelope.to }, raw, (error, sent) => (error ? reject(error) : resolve(sent))),
        );
        connection.quit();
        return { via: 'smtp', messageId: composed.messageId, relay: smtp.redacted, response: info.response };
      } catch (error) {
        connection.close();
        if (error instanceof NetintelError) throw error;
        throw smtpError(error, smtp);
      }
    },
    close() {},
  };
}

/** The message as it goes out (CRLF line ends, RFC 5322 §2.1), with its envelope and Message-ID. */
function composeMessage(from: string, message: MailMessage) {
  const { id, date, ...content } = message;
  const domain = /@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? 'localhost';
  const messageId = `<${id ?? randomBytes(16).toString('hex')}@${domain}>`;
  const mail = new MailComposer({ from, ...content, messageId, date: date ?? new Date(), newline: 'windows', disableFileAccess: true, disableUrlAccess: true }).compile();
  return {
    messageId,
    envelope: mail.getEnvelope() as { from: string | false; to: string[] },
    build: () => new Promise<Buffer>((resolve, reject) => mail.build((error, built) => (error ? reject(error) : resolve(built)))),
  };
}

const TLS_ERROR_CODES = new Set([
  'ETLS',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

function errorCodeOf(code: string, original: string | undefined, responseCode: number | undefined): ErrorCode {
  if (TLS_ERROR_CODES.has(code) || (original !== undefined && TLS_ERROR_CODES.has(original))) return 'tls';
  if (code === 'ETIMEDOUT') return 'timeout';
  if (responseCode !== undefined || code === 'EAUTH' || code === 'EENVELOPE' || code === 'EMESSAGE') return 'upstream';
  return 'unreachable';
}

/** Removes the password, in the forms an SMTP client sends it, from a text. */
function withoutSecret(text: string, smtp: SmtpSettings): string {
  if (smtp.pass === undefined || smtp.pass === '') return text;
  const user = smtp.user ?? '';
  const forms = [
    smtp.pass,
    encodeURIComponent(smtp.pass),
    Buffer.from(smtp.pass).toString('base64'),
    Buffer.from(`\0${user}\0${smtp.pass}`).toString('base64'),
  ];
  return forms.reduce((result, form) => result.split(form).join('***'), text);
}

function smtpError(error: unknown, smtp: SmtpSettings): NetintelError {
  const fields = (typeof error === 'object' && error !== null ? error : {}) as {
    message?: unknown;
    code?: unknown;
    originalCode?: unknown;
    responseCode?: unknown;
  };
  const code = typeof fields.code === 'string' ? fields.code : '';
  const original = typeof fields.originalCode === 'string' ? fields.originalCode : undefined;
  const responseCode = typeof fields.responseCode === 'number' ? fields.responseCode : undefined;
  const reason = withoutSecret(typeof fields.message === 'string' ? fields.message : String(error), smtp);
  const where = `${smtp.host}:${smtp.port}`;
  const kind = errorCodeOf(code, original, responseCode);
  const message =
    kind === 'upstream'
      ? `the mail relay ${where} refused the message: ${reason}`
      : kind === 'tls'
        ? `TLS with the mail relay ${where} failed: ${reason} (check the relay's certificate, or the CA given to trust it)`
        : kind === 'timeout'
          ? `the mail relay ${where} did not answer in time (check the SMTP URL and the network)`
          : `could not reach the mail relay ${where}: ${reason} (check the SMTP URL and that the relay is running)`;
  // The nodemailer error is not kept as the cause: its fields hold protocol lines that may carry credentials.
  return new NetintelError(kind, message, {
    details: {
      relay: smtp.redacted,
      ...(code !== '' ? { smtp_client_code: code } : {}),
      ...(original !== undefined ? { system_code: original } : {}),
      ...(responseCode !== undefined ? { reply_code: responseCode } : {}),
    },
  });
}

function outboxMailer(options: MailerOptions, outboxDir: string): Mailer {
  return {
    async send(message) {
      const composed = composeMessage(options.from, message);
      const date = message.date ?? new Date();
      // A message with an id keeps its name, so writing it again replaces it rather than adding a copy.
      const name = `${date.toISOString().replace(/[:.]/g, '-')}-${message.id ?? randomBytes(6).toString('hex')}.eml`;
      const path = await writeOutboxFile(outboxDir, name, await composed.build());
      return { via: 'outbox', messageId: composed.messageId, path };
    },
    close() {},
  };
}

async function writeOutboxFile(outboxDir: string, name: string, content: Buffer): Promise<string> {
  const path = join(outboxDir, name);
  try {
    const created = await mkdir(outboxDir, { recursive: true, mode: 0o700 });
    // mkdir's mode passes through the umask; say it again for the directory made here.
    if (created !== undefined) await chmod(outboxDir, 0o700);
    await writeFileAtomically(path, content, { mode: 0o600 });
    return path;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new NetintelError('output_failed', `could not write mail to the outbox ${outboxDir}: ${reason} (check that the directory is writable)`, {
      details: { outbox: outboxDir },
    });
  }
}
