/**
 * STARTTLS preambles: what each protocol says on a plain connection before
 * the TLS handshake. Each leaves the socket at the point where the client
 * starts the handshake, or throws a PreambleError saying why not. SMTP is
 * spoken by the SMTP probe's own session (src/engine/smtp/smtp-session.ts).
 */
import type { Socket } from 'node:net';
import { addressLiteral } from '../smtp/smtp-input.js';
import { escapeControls, SmtpSession, type ReplyOutcome } from '../smtp/smtp-session.js';
import { PeerReader } from './peer-reader.js';
import type { StarttlsProtocol } from './tls-result.js';

/** Why a preamble did not reach the handshake: the server refused or spoke nonsense (`upstream`), or went silent (`timeout`). */
export class PreambleError extends Error {
  constructor(
    readonly code: 'upstream' | 'timeout',
    message: string,
  ) {
    super(message);
  }
}

export type Preamble = (socket: Socket, host: string, deadline: number) => Promise<Socket>;

export const PREAMBLES: Readonly<Record<StarttlsProtocol, Preamble>> = {
  smtp: smtpPreamble,
  imap: imapPreamble,
  pop3: pop3Preamble,
  ftp: ftpPreamble,
  xmpp: xmppPreamble,
  ldap: ldapPreamble,
  postgres: postgresPreamble,
};

/**
 * A peer's words in quotes, cut at 120 characters, its control characters
 * escaped once (an SMTP reply comes escaped from SmtpSession already, and
 * escapeControls leaves what it wrote as it is) and its own quotes escaped,
 * so the quoted text ends where the peer's words end.
 */
const shown = (text: string) => `"${escapeControls(text.length > 120 ? `${text.slice(0, 120)}...` : text).replaceAll('"', '\\"')}"`;

/** Runs a preamble over a PeerReader: its read failures become PreambleErrors, the socket is released on success. */
async function over(socket: Socket, deadline: number, talk: (reader: PeerReader) => Promise<void>): Promise<Socket> {
  const reader = new PeerReader(socket);
  try {
    await talk(reader);
  } catch (error) {
    reader.release();
    if (error instanceof PreambleError) throw error;
    const message = (error as Error).message;
    throw new PreambleError(/in time/.test(message) ? 'timeout' : 'upstream', message);
  }
  return reader.release();
}

/** SMTP (RFC 3207 §4): the greeting, EHLO, STARTTLS, `220`. */
async function smtpPreamble(socket: Socket, _host: string, deadline: number): Promise<Socket> {
  const session = new SmtpSession({ socket, startedAt: performance.now() });
  const expect = async (outcome: Promise<ReplyOutcome>, code: number, what: string): Promise<void> => {
    const reply = await outcome;
    if (reply.kind === 'timeout') throw new PreambleError('timeout', `the SMTP server did not answer ${what} in time`);
    if (reply.kind === 'closed') throw new PreambleError('upstream', `the SMTP server closed the connection after ${what}`);
    if (reply.kind === 'protocol') throw new PreambleError('upstream', `the SMTP server's answer to ${what} is not SMTP (${reply.reason})`);
    if (reply.reply.code !== code) throw new PreambleError('upstream', `the SMTP server answered ${what} with ${reply.reply.code} ${shown(reply.reply.text)}`);
  };
  const left = () => Math.max(1, deadline - performance.now());
  try {
    await expect(session.readReply(left()), 220, 'the connection');
    await expect(session.command(`EHLO ${addressLiteral(socket.localAddress ?? '127.0.0.1')}`, left()), 250, 'EHLO');
    await expect(session.command('STARTTLS', left()), 220, 'STARTTLS');
  } catch (error) {
    session.destroy();
    throw error;
  }
  return session.release().socket;
}

/** IMAP (RFC 2595 §3.1, RFC 9051 §6.2.1): the `* OK` greeting, `a STARTTLS`, `a OK`. */
function imapPreamble(socket: Socket, _host: string, deadline: number): Promise<Socket> {
  return over(socket, deadline, async (reader) => {
    const greeting = await reader.line(deadline);
    if (!/^\* OK\b/i.test(greeting)) throw new PreambleError('upstream', `the IMAP greeting is not "* OK": ${shown(greeting)}`);
    reader.write('a STARTTLS\r\n');
    for (;;) {
      const line = await reader.line(deadline);
      if (line.startsWith('* ')) continue;
      if (/^a OK\b/i.test(line)) return;
      throw new PreambleError('upstream', `the IMAP server refused STARTTLS: ${shown(line)}`);
    }
  });
}

/** POP3 (RFC 2595 §4): `+OK` greeting, `STLS`, `+OK`. */
function pop3Preamble(socket: Socket, _host: string, deadline: number): Promise<Socket> {
  return over(socket, deadline, async (reader) => {
    const greeting = await reader.line(deadline);
    if (!greeting.startsWith('+OK')) throw new PreambleError('upstream', `the POP3 greeting is not "+OK": ${shown(greeting)}`);
    reader.write('STLS\r\n');
    const answer = await reader.line(deadline);
    if (!answer.startsWith('+OK')) throw new PreambleError('upstream', `the POP3 server refused STLS: ${shown(answer)}`);
  });
}

/** One FTP reply, its continuation lines read past (RFC 959 §4.2). */
async function ftpReply(reader: PeerReader, deadline: number): Promise<{ code: number; line: string }> {
  const first = await reader.line(deadline);
  const match = /^(\d{3})([ -])/.exec(first);
  if (!match) throw new PreambleError('upstream', `not an FTP reply: ${shown(first)}`);
  let line = first;
  if (match[2] === '-') {
    while (!line.startsWith(`${match[1]} `)) line = await reader.line(deadline);
  }
  return { code: Number(match[1]), line };
}

/** FTP (RFC 4217 §4): the `220` greeting, `AUTH TLS`, `234`. */
function ftpPreamble(socket: Socket, _host: string, deadline: number): Promise<Socket> {
  return over(socket, deadline, async (reader) => {
    const greeting = await ftpReply(reader, deadline);
    if (greeting.code !== 220) throw new PreambleError('upstream', `the FTP greeting is not 220: ${shown(greeting.line)}`);
    reader.write('AUTH TLS\r\n');
    const answer = await ftpReply(reader, deadline);
    if (answer.code !== 234) throw new PreambleError('upstream', `the FTP server refused AUTH TLS: ${shown(answer.line)}`);
  });
}

/** Text up to and including the first match of `pattern` in what was received. */
function untilText(pattern: RegExp): (bytes: Buffer) => { value: string; used: number } | null {
  return (bytes) => {
    const text = bytes.toString('latin1');
    const match = pattern.exec(text);
    if (!match) return null;
    const end = match.index + match[0].length;
    return { value: text.slice(0, end), used: end };
  };
}

/** XMPP (RFC 6120 §5.4): a stream header, the features offering `<starttls/>`, `<starttls/>`, `<proceed/>`. */
function xmppPreamble(socket: Socket, host: string, deadline: number): Promise<Socket> {
  return over(socket, deadline, async (reader) => {
    reader.write(`<?xml version='1.0'?><stream:stream to='${host}' version='1.0' xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>`);
    const features = await reader.read(untilText(/<\/stream:features>|<stream:features\s*\/>|<\/stream:stream>|<stream:error[\s>]/), deadline);
    if (!/<starttls[\s>/]/.test(features)) throw new PreambleError('upstream', 'the XMPP server does not offer STARTTLS in its stream features');
    reader.write("<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>");
    const answer = await reader.read(untilText(/<proceed[^>]*>|<failure[^>]*>|<\/stream:stream>/), deadline);
    if (!answer.includes('<proceed')) throw new PreambleError('upstream', 'the XMPP server refused STARTTLS (<failure/>)');
  });
}

/** The StartTLS extended request, message 1 (RFC 4511 §4.14.1): LDAPMessage { 1, [APPLICATION 23] { [0] "1.3.6.1.4.1.1466.20037" } }. */
const LDAP_STARTTLS_REQUEST = Buffer.concat([Buffer.from([0x30, 0x1d, 0x02, 0x01, 0x01, 0x77, 0x18, 0x80, 0x16]), Buffer.from('1.3.6.1.4.1.1466.20037', 'latin1')]);

/** LDAP (RFC 4511 §4.14): the StartTLS extended operation; resultCode 0 lets the handshake begin. */
function ldapPreamble(socket: Socket, _host: string, deadline: number): Promise<Socket> {
  return over(socket, deadline, async (reader) => {
    reader.write(LDAP_STARTTLS_REQUEST);
    const resultCode = await reader.read(readLdapExtendedResult, deadline);
    if (resultCode !== 0) throw new PreambleError('upstream', `the LDAP server refused StartTLS (resultCode ${resultCode})`);
  });
}

/** A BER length at `offset`: its value and where the content starts; null when more bytes are needed. */
function berLength(bytes: Uint8Array, offset: number): { length: number; start: number } | null {
  if (offset >= bytes.length) return null;
  const first = bytes[offset]!;
  if (first < 0x80) return { length: first, start: offset + 1 };
  const count = first & 0x7f;
  if (count === 0 || count > 3) throw new PreambleError('upstream', 'the LDAP answer has a BER length netintel does not read');
  if (offset + 1 + count > bytes.length) return null;
  let length = 0;
  for (let i = 0; i < count; i++) length = length * 256 + bytes[offset + 1 + i]!;
  return { length, start: offset + 1 + count };
}

/**
 * The resultCode of an LDAP ExtendedResponse (RFC 4511 §4.12): the whole
 * LDAPMessage must have arrived (null until then); anything else than a
 * SEQUENCE holding a messageID and an [APPLICATION 24] whose first element
 * is an ENUMERATED is refused.
 *
 * @throws PreambleError `upstream` for what is not such a message.
 */
export function readLdapExtendedResult(bytes: Uint8Array): { value: number; used: number } | null {
  if (bytes.length === 0) return null;
  if (bytes[0] !== 0x30) throw new PreambleError('upstream', 'the LDAP answer is not an LDAPMessage');
  const outer = berLength(bytes, 1);
  if (outer === null) return null;
  const end = outer.start + outer.length;
  if (end > bytes.length) return null;
  const message = bytes.subarray(0, end);
  const malformed = () => new PreambleError('upstream', 'the LDAP answer is not an ExtendedResponse');
  if (message[outer.start] !== 0x02) throw malformed();
  const id = berLength(message, outer.start + 1);
  if (id === null) throw malformed();
  const opAt = id.start + id.length;
  if (message[opAt] !== 0x78) throw malformed();
  const op = berLength(message, opAt + 1);
  if (op === null || op.start + op.length > end || message[op.start] !== 0x0a) throw malformed();
  const code = berLength(message, op.start + 1);
  if (code === null || code.length < 1 || code.length > 4 || code.start + code.length > end) throw malformed();
  let value = 0;
  for (let i = 0; i < code.length; i++) value = value * 256 + message[code.start + i]!;
  return { value, used: end };
}

/** PostgreSQL's SSLRequest: length 8, code 80877103 (docs/commands/tls.md, STARTTLS). */
const POSTGRES_SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);

/** PostgreSQL: the SSLRequest, answered by one byte, `S` (go ahead) or `N` (no TLS). */
function postgresPreamble(socket: Socket, _host: string, deadline: number): Promise<Socket> {
  return over(socket, deadline, async (reader) => {
    reader.write(POSTGRES_SSL_REQUEST);
    const answer = await reader.read((bytes) => (bytes.length > 0 ? { value: bytes[0]!, used: 1 } : null), deadline);
    if (answer === 0x4e) throw new PreambleError('upstream', 'the PostgreSQL server does not accept TLS (it answered N to SSLRequest)');
    if (answer !== 0x53) throw new PreambleError('upstream', `the PostgreSQL server answered SSLRequest with byte 0x${answer.toString(16).padStart(2, '0')}`);
  });
}
