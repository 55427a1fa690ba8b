import { presentGenericRdata } from './dnssec-presentation.js';

/**
 * DNS record data in presentation (zone-file) form, as dig prints it
 * (RFC 1035 §5.1; CAA RFC 8659 §4.1; SRV RFC 2782; DNSSEC, TLSA and SVCB types
 * in dnssec-presentation.ts; unknown types RFC 3597 §5),
 * for the table and CSV views.
 */
export function presentDnsData(type: string, data: unknown): string {
  if (typeof data === 'string') {
    if (type === 'A' || type === 'AAAA') return data;
    if (data.startsWith('\\#')) return presentGenericRdata(type, data) ?? presentGeneric(data);
    return presentName(data);
  }
  const record = data as Record<string, unknown>;
  switch (type) {
    case 'MX':
      return `${record.preference} ${presentName(record.exchange as string)}`;
    case 'SOA':
      return `${presentName(record.mname as string)} ${presentName(record.rname as string)} ${record.serial} ${record.refresh} ${record.retry} ${record.expire} ${record.minimum}`;
    case 'TXT':
      return (record.strings as string[]).map(quoteCharacterString).join(' ');
    case 'CAA':
      return `${record.flags} ${record.tag} ${quoteCharacterString(record.value as string)}`;
    case 'SRV':
      return `${record.priority} ${record.weight} ${record.port} ${presentName(record.target as string)}`;
    default:
      return JSON.stringify(data);
  }
}

/** One answer as a dig-style line: `name. ttl IN type data`. */
export function presentDnsAnswer(answer: { name: string; ttl_seconds: number; type: string; data: unknown }): string {
  return `${presentName(answer.name)} ${answer.ttl_seconds} IN ${answer.type} ${presentDnsData(answer.type, answer.data)}`;
}

// Printable ASCII other than `"` and `\`: a character string made only of
// these needs no escaping inside quotes.
const PLAIN_STRING = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * A character string quoted for a zone file (RFC 1035 §5.1): `"` and `\`
 * escaped with a backslash, octets outside printable ASCII (controls, DEL,
 * the bytes of UTF-8 sequences) as `\DDD` in decimal, as dig prints them.
 */
function quoteCharacterString(text: string): string {
  if (PLAIN_STRING.test(text)) return `"${text}"`;
  let quoted = '"';
  for (const octet of Buffer.from(text, 'utf8')) {
    if (octet === 0x22 || octet === 0x5c) quoted += `\\${String.fromCharCode(octet)}`;
    else if (octet < 0x20 || octet > 0x7e) quoted += `\\${String(octet).padStart(3, '0')}`;
    else quoted += String.fromCharCode(octet);
  }
  return `${quoted}"`;
}

// Labels made only of these need no escaping (letters, digits, hyphen,
// underscore, `*` and the other printable ASCII that is not special).
const PLAIN_NAME = /^[\x21\x23\x25-\x27\x2a-\x3a\x3c-\x3f\x41-\x7e]*$/;

/**
 * A domain name (no trailing dot, `.` for the root) in absolute
 * presentation form: a trailing dot, the root as `.` alone. Characters
 * with a meaning in zone files (`"();@$`, space) are escaped with a
 * backslash and other non-printable octets as `\DDD`, as dig does. A
 * backslash is kept as it is: the decoder already writes a dot inside a
 * label (the mailbox local part of an SOA rname) as `\.`.
 */
function presentName(name: string): string {
  if (name === '.' || name === '') return '.';
  if (PLAIN_NAME.test(name)) return `${name}.`;
  let escaped = '';
  for (const octet of Buffer.from(name, 'utf8')) {
    if (octet === 0x22 || octet === 0x28 || octet === 0x29 || octet === 0x3b || octet === 0x40 || octet === 0x24) {
      escaped += `\\${String.fromCharCode(octet)}`;
    } else if (octet <= 0x20 || octet > 0x7e) {
      escaped += `\\${String(octet).padStart(3, '0')}`;
    } else {
      escaped += String.fromCharCode(octet);
    }
  }
  return `${escaped}.`;
}

/** RFC 3597 §5 generic data with its hex in upper case, as dig prints it (`\# 4 0A000001`). */
function presentGeneric(data: string): string {
  return data.toUpperCase();
}
