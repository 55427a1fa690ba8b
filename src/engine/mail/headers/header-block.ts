/**
 * The header block of a saved message or of a header section pasted on its
 * own, read by the same reader DKIM verification uses (dkim-message-reader.ts:
 * one mbox "From " line skipped, CRLF or LF, folded fields joined, the same
 * size limits), each field unfolded and decoded for display: 8-bit text as
 * UTF-8 (RFC 6532 §3.2) and encoded words (RFC 2047) by libmime.
 */
import { readMessageParts, type MessageParts } from '../dkim-message-reader.js';

/** One header field, for display. */
export interface HeaderField {
  /** The name as written. */
  name: string;
  /** The name in lower case. */
  key: string;
  /** The value unfolded (RFC 5322 §2.2.3), 8-bit octets read as UTF-8, encoded words left as written. */
  value: string;
}

/** A message's header block. */
export interface HeaderBlock {
  fields: HeaderField[];
  /** Lines of the header section that are not fields (kept for the record, never dropped). */
  stray: string[];
  /** The message as split for DKIM (fields as octets, and the body). */
  parts: MessageParts;
}

/**
 * Reads the header fields of `message`.
 *
 * @throws NetintelError `invalid_input` as readMessageParts does (over the
 *   size limits, or not starting with a header field).
 */
export function readHeaderBlock(message: Buffer, source: string): HeaderBlock {
  const parts = readMessageParts(message, source);
  const fields: HeaderField[] = [];
  const stray: string[] = [];
  for (const field of parts.fields) {
    const text = utf8Text(field.raw);
    if (field.name === null || field.key === null) {
      stray.push(unfold(text));
      continue;
    }
    fields.push({ name: field.name, key: field.key, value: unfold(utf8Text(field.raw.slice(field.valueStart))) });
  }
  return { fields, stray, parts };
}

/** The first value of a field by lower-case name, or null. */
export function fieldValue(block: HeaderBlock, key: string): string | null {
  return block.fields.find((field) => field.key === key)?.value ?? null;
}

/** Every value of a field by lower-case name, in message order (top first). */
export function fieldValues(block: HeaderBlock, key: string): string[] {
  return block.fields.filter((field) => field.key === key).map((field) => field.value);
}

/**
 * The first value of each field in `keys`, for display: its encoded words
 * (RFC 2047) decoded by libmime, text libmime cannot decode left as written;
 * null for a field the message lacks. libmime is loaded only when a value
 * holds an encoded word (every one starts with `=?`): its charset tables
 * take longer to set up than the rest of the command's start.
 */
export async function displayedValues<Key extends string>(block: HeaderBlock, keys: readonly Key[]): Promise<Record<Key, string | null>> {
  const values = keys.map((key) => fieldValue(block, key));
  const libmime = values.some((value) => value?.includes('=?')) ? (await import('libmime')).default : null;
  const decoded = (value: string) => {
    try {
      return libmime === null ? value : libmime.decodeWords(value);
    } catch {
      return value;
    }
  };
  return Object.fromEntries(keys.map((key, index) => [key, values[index] === null ? null : decoded(values[index]!)])) as Record<Key, string | null>;
}

/** The field unfolded (RFC 5322 §2.2.3) and trimmed; trimmed by hand, as /[ \t]+$/ takes quadratic time on a long run of blanks inside the text. */
function unfold(text: string): string {
  const joined = text.replace(/\r?\n(?=[ \t])/g, '');
  let start = 0;
  let end = joined.length;
  while (start < end && (joined[start] === ' ' || joined[start] === '\t')) start++;
  while (end > start && ' \t\r\n'.includes(joined[end - 1]!)) end--;
  return joined.slice(start, end);
}

/** The field's octets (one character each) read as UTF-8 when they are valid UTF-8, else as Latin-1. */
function utf8Text(octets: string): string {
  // Plain ASCII, the common case, needs no decoding.
  if (!/[\x80-\xff]/.test(octets)) return octets;
  const bytes = Buffer.from(octets, 'latin1');
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return octets;
  }
}
