/**
 * Splits a saved message into its header fields and body (RFC 5322 §2.1,
 * §2.2) for DKIM verification, in one pass and within fixed limits: each
 * line is looked at once, a field's continuation lines are joined once,
 * and input over the limits is refused before any work is done on it.
 */
import { byteSizeText } from '../../byte-size.js';
import { NetintelError } from '../../errors.js';

/** The largest message read: more than any mail server accepts (common limits are 25 to 50 MB). */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * The largest header section read, up to the empty line before the body.
 * Real header sections are a few kilobytes to a few tens of kilobytes;
 * Postfix keeps at most 100 KiB of one (header_size_limit).
 */
export const MAX_HEADER_BYTES = 1024 * 1024;

/** One header field as it stands in the message. */
export interface MessageField {
  /** The field name as written (any space before the colon left out); null for a line that is not a field. */
  name: string | null;
  /** `name` in lower case, for matching h= (field names are case-insensitive, RFC 5322 §1.2.2). */
  key: string | null;
  /**
   * The whole field, one character per octet (latin1), continuation lines
   * joined by CRLF whatever line ends the file used, without the CRLF that
   * ends it: the form simple header canonicalization hashes (RFC 6376 §3.4.1).
   */
  raw: string;
  /** Where the value starts in `raw`: after the colon (0 when `name` is null). */
  valueStart: number;
}

/** A message split for verification. */
export interface MessageParts {
  fields: MessageField[];
  /** The octets after the empty line that ends the header section; empty when there is none. */
  body: Buffer;
}

/** RFC 5322 §3.6.8: field-name = 1*ftext, ftext = %d33-57 / %d59-126. */
const FIELD_NAME = /^[\x21-\x39\x3b-\x7e]+$/;

/**
 * Reads the header fields and body of `message`. Lines may end in CRLF or
 * in LF alone (files saved on Unix); both are read as CRLF, as verifiers
 * do, since the signer saw CRLF on the wire (RFC 5322 §2.1). A first line
 * that is an mbox separator (`From sender date`, RFC 4155) is skipped.
 *
 * @throws NetintelError `invalid_input` when the message is over
 *   {@link MAX_MESSAGE_BYTES}, its header section over
 *   {@link MAX_HEADER_BYTES}, or it does not start with a header field.
 */
export function readMessageParts(message: Buffer, source: string): MessageParts {
  if (message.length > MAX_MESSAGE_BYTES) {
    throw new NetintelError('invalid_input', `${source} has ${message.length} octets; messages over ${byteSizeText(MAX_MESSAGE_BYTES)} are not read (give one saved message)`, {
      details: { source, bytes: message.length, limit: MAX_MESSAGE_BYTES },
    });
  }
  let offset = 0;
  // An mbox separator ("From sender date", RFC 4155) is "From", a space, then no colon (obs-optional "From :" is a field).
  if (/^From +[^ \t:]/.test(message.subarray(0, 64).toString('latin1'))) {
    const end = message.indexOf(0x0a);
    offset = end === -1 ? message.length : end + 1;
  }
  if (!/^[\x21-\x39\x3b-\x7e]+[ \t]*:/.test(message.subarray(offset, offset + 1000).toString('latin1'))) {
    throw new NetintelError('invalid_input', `${source} does not start with a header field, so it is not a saved message (RFC 5322)`, { details: { source } });
  }

  const headerStart = offset;
  const fields: MessageField[] = [];
  // The field being read: where it starts, where its last line's content ends, whether a line of it ended in LF alone.
  let fieldStart = -1;
  let fieldEnd = -1;
  let bareLf = false;
  let body: Buffer = Buffer.alloc(0);
  const close = () => {
    if (fieldStart !== -1) fields.push(fieldOf(message.subarray(fieldStart, fieldEnd).toString('latin1'), bareLf));
    fieldStart = -1;
  };

  while (offset < message.length) {
    const lf = message.indexOf(0x0a, offset);
    const lineEnd = lf === -1 ? message.length : lf;
    const next = lf === -1 ? message.length : lf + 1;
    const crlf = lf !== -1 && lineEnd > offset && message[lineEnd - 1] === 0x0d;
    const contentEnd = crlf ? lineEnd - 1 : lineEnd;
    if (contentEnd === offset && lf !== -1) {
      // The empty line: the body follows.
      close();
      body = message.subarray(next);
      break;
    }
    if (next - headerStart > MAX_HEADER_BYTES) {
      throw new NetintelError(
        'invalid_input',
        `${source}: the header section is over ${byteSizeText(MAX_HEADER_BYTES)} (the limit on the header fields before the body of a message read for DKIM)`,
        { details: { source, limit: MAX_HEADER_BYTES } },
      );
    }
    const first = message[offset];
    if ((first === 0x20 || first === 0x09) && fieldStart !== -1) {
      // A continuation line (RFC 5322 §2.2.3): part of the field above.
      fieldEnd = contentEnd;
    } else {
      close();
      fieldStart = offset;
      fieldEnd = contentEnd;
      bareLf = false;
    }
    if (lf !== -1 && !crlf) bareLf = true;
    offset = next;
  }
  close();
  return { fields, body };
}

function fieldOf(text: string, bareLf: boolean): MessageField {
  // Inside the field every line break is CRLF, LF alone or CR LF already in place; make them all CRLF.
  const raw = bareLf ? text.replace(/\r?\n/g, '\r\n') : text;
  const colon = raw.indexOf(':');
  if (colon === -1) return { name: null, key: null, raw, valueStart: 0 };
  // obs-optional (RFC 5322 §4.5.8) allows space between the name and the colon.
  const name = withoutTrailingBlanks(raw.slice(0, colon));
  if (!FIELD_NAME.test(name)) return { name: null, key: null, raw, valueStart: 0 };
  return { name, key: name.toLowerCase(), raw, valueStart: colon + 1 };
}


/**
 * `text` without the spaces and tabs that end it, in one pass from the end:
 * the regular expression /[ \t]+$/ retries from every blank of a long run
 * that does not end the text, quadratic time on a hostile line.
 */
export function withoutTrailingBlanks(text: string): string {
  let end = text.length;
  while (end > 0 && (text.charCodeAt(end - 1) === 0x20 || text.charCodeAt(end - 1) === 0x09)) end--;
  return end === text.length ? text : text.slice(0, end);
}
