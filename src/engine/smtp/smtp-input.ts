import { ipVersionOf } from '../address/ip-text.js';
import { NetintelError } from '../../errors.js';
import { canonicalIp, normaliseDomain } from '../dns/dns-name.js';
import { quoteInput } from '../address/ip-address.js';

/**
 * Input checks of an SMTP probe. Everything that can reach the wire is
 * checked before a connection opens: a value holding CR, LF or NUL could
 * smuggle a second command into the conversation (SMTP command injection),
 * so it is refused as `invalid_input` and nothing is sent.
 */

const LINE_BREAK_OR_NUL = /[\r\n\0]/;

function invalid(message: string, details: Record<string, unknown>): NetintelError {
  return new NetintelError('invalid_input', message, { details });
}

/** Refuses CR, LF and NUL in a value; `secret` keeps the value out of the message. */
export function assertSingleLine(label: string, value: string, secret = false): void {
  if (LINE_BREAK_OR_NUL.test(value)) {
    throw invalid(
      secret ? `${label} holds a CR, LF or NUL character, which could inject SMTP commands` : `${label} ${quoteInput(value)} holds a CR, LF or NUL character, which could inject SMTP commands`,
      secret ? { option: label } : { option: label, input: value },
    );
  }
}

/** The host to probe: a domain name (ASCII form) or an IP address (canonical form). */
export function normaliseSmtpHost(host: string): { host: string; isIp: boolean } {
  if (typeof host !== 'string' || host.trim() === '') throw invalid('the SMTP host is empty', { input: String(host) });
  assertSingleLine('the host', host);
  if (ipVersionOf(host) !== 0) return { host: canonicalIp(host), isIp: true };
  const name = normaliseDomain(host).ascii;
  if (name === '.') throw invalid('the root "." is not an SMTP host', { input: host });
  return { host: name, isIp: false };
}

/** An IP address to connect to (`--ip`), canonical. */
export function normaliseSmtpAddress(address: string): string {
  assertSingleLine('the address', address);
  if (ipVersionOf(address) === 0 || address.includes('%')) {
    throw invalid(`${quoteInput(address)} is not an IPv4 or IPv6 address`, { input: address });
  }
  return canonicalIp(address);
}

export function assertPort(port: number): number {
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw invalid(`the port must be an integer from 1 to 65535, not ${quoteInput(String(port))}`, { input: port });
  }
  return port;
}

/** Parses a port given as text (a flag): digits only, 1-65535. */
export function parsePort(text: string): number {
  assertSingleLine('the port', text);
  if (!/^\d{1,5}$/.test(text.trim())) {
    throw invalid(`the port must be an integer from 1 to 65535, not ${quoteInput(text)}`, { input: text });
  }
  return assertPort(Number(text.trim()));
}

/**
 * The EHLO name (RFC 5321 §4.1.1.1): a domain (ASCII form) or an address
 * literal (`[192.0.2.1]`, `[IPv6:2001:db8::1]`, §4.1.3).
 */
export function normaliseEhloName(name: string): string {
  assertSingleLine('the EHLO name', name);
  const literal = /^\[(?:IPv6:)?([^\]]+)\]$/i.exec(name);
  if (literal) {
    const ip = literal[1]!;
    const v6 = /^\[IPv6:/i.test(name);
    if ((v6 && ipVersionOf(ip) === 6) || (!v6 && ipVersionOf(ip) === 4)) return v6 ? `[IPv6:${canonicalIp(ip)}]` : `[${ip}]`;
    throw invalid(`${quoteInput(name)} is not a valid address literal (RFC 5321 §4.1.3)`, { input: name });
  }
  const ascii = normaliseDomain(name).ascii;
  if (ascii === '.') throw invalid('"." is not a valid EHLO name', { input: name });
  return ascii;
}

/** The address literal of a local address, the default EHLO name (RFC 5321 §4.1.4). */
export function addressLiteral(ip: string): string {
  const plain = ip.startsWith('::ffff:') && ipVersionOf(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  return ipVersionOf(plain) === 6 ? `[IPv6:${canonicalIp(plain)}]` : `[${plain}]`;
}

/**
 * A mailbox for MAIL FROM / RCPT TO: `local@domain` in plain ASCII (no
 * quoted local parts, no SMTPUTF8), the domain an ASCII or IDN name. An
 * empty reverse-path (`<>` or "") is allowed for MAIL FROM only.
 */
export function normaliseMailbox(label: string, value: string, allowEmpty: boolean): string {
  assertSingleLine(label, value);
  const text = value.trim().replace(/^<(.*)>$/, '$1');
  if (text === '') {
    if (allowEmpty) return '';
    throw invalid(`${label} is empty`, { input: value });
  }
  const at = text.lastIndexOf('@');
  const local = text.slice(0, at);
  const domain = text.slice(at + 1);
  if (at < 1 || !/^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}$/.test(local) || local.startsWith('.') || local.endsWith('.') || local.includes('..')) {
    throw invalid(`${label} ${quoteInput(value)} is not a mailbox of the form local@domain (RFC 5321 §4.1.2)`, { input: value });
  }
  return `${local}@${normaliseDomain(domain).ascii}`;
}
