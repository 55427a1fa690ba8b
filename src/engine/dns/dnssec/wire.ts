/**
 * Reading resource records from a DNS message in the exact wire form DNSSEC
 * signs: owner names and rdata with compression undone and, for the types
 * RFC 4034 §6.2 lists, the names inside the rdata lowercased (RFC 6840 §5.1
 * takes NSEC out of that list). dns-packet's decoding is lossy for this
 * (names become escaped text, unknown types lose their bitmaps), so the few
 * octets DNSSEC needs are read here.
 */

/** A domain name as its labels, most specific first; the root is `[]`. */
export type WireName = readonly Buffer[];

/** One resource record in canonical form (RFC 4034 §6.2). */
export interface WireRecord {
  owner: WireName;
  type: number;
  klass: number;
  ttl: number;
  /** The rdata, uncompressed, embedded names lowercased where §6.2 says so. */
  rdata: Buffer;
}

/** The sections of a message, and its header flags. */
export interface WireMessage {
  rcode: number;
  /** The AD bit: the resolver says it validated the data (RFC 4035 §3.2.3). */
  authentic_data: boolean;
  answer: WireRecord[];
  authority: WireRecord[];
  additional: WireRecord[];
}

/** Thrown for a message that is not well formed. */
export class WireFormatError extends Error {}

/** Reads a whole message; throws WireFormatError when it is not well formed. */
export function readMessage(message: Buffer): WireMessage {
  if (message.length < 12) throw new WireFormatError('message shorter than its header');
  const flags = message.readUInt16BE(2);
  const counts = [4, 6, 8, 10].map((at) => message.readUInt16BE(at));
  let offset = 12;
  for (let i = 0; i < counts[0]!; i++) offset = readName(message, offset).end + 4;
  const sections: WireRecord[][] = [[], [], []];
  for (let section = 0; section < 3; section++) {
    for (let i = 0; i < counts[section + 1]!; i++) {
      const { record, end } = readRecord(message, offset);
      offset = end;
      if (record.type !== 41) sections[section]!.push(record);
    }
  }
  return { rcode: flags & 0x0f, authentic_data: (flags & 0x20) !== 0, answer: sections[0]!, authority: sections[1]!, additional: sections[2]! };
}

function readRecord(message: Buffer, offset: number): { record: WireRecord; end: number } {
  const { name: owner, end: afterName } = readName(message, offset);
  if (afterName + 10 > message.length) throw new WireFormatError('record header cut short');
  const type = message.readUInt16BE(afterName);
  const klass = message.readUInt16BE(afterName + 2);
  const ttl = message.readUInt32BE(afterName + 4);
  const length = message.readUInt16BE(afterName + 8);
  const start = afterName + 10;
  const end = start + length;
  if (end > message.length) throw new WireFormatError('rdata cut short');
  return { record: { owner, type, klass, ttl, rdata: canonicalRdata(message, type, start, end) }, end };
}

/**
 * Reads a possibly compressed name at `offset`; `end` is the offset after
 * it in the message (after the pointer when compressed).
 */
export function readName(message: Buffer, offset: number): { name: Buffer[]; end: number } {
  const labels: Buffer[] = [];
  let at = offset;
  let end = -1;
  let jumps = 0;
  for (;;) {
    if (at >= message.length) throw new WireFormatError('name runs past the message');
    const length = message[at]!;
    if ((length & 0xc0) === 0xc0) {
      if (at + 1 >= message.length || ++jumps > 64) throw new WireFormatError('bad compression pointer');
      if (end < 0) end = at + 2;
      at = ((length & 0x3f) << 8) | message[at + 1]!;
      continue;
    }
    if (length > 63) throw new WireFormatError('bad label length');
    if (length === 0) {
      if (end < 0) end = at + 1;
      return { name: labels, end };
    }
    if (at + 1 + length > message.length) throw new WireFormatError('label runs past the message');
    labels.push(Buffer.from(message.subarray(at + 1, at + 1 + length)));
    at += 1 + length;
  }
}

/** The uncompressed wire form of a name, lowercased when `lower`. */
export function nameWire(name: WireName, lower = true): Buffer {
  const parts: Buffer[] = [];
  for (const label of name) parts.push(Buffer.from([label.length]), lower ? lowerAscii(label) : label);
  parts.push(Buffer.from([0]));
  return Buffer.concat(parts);
}

/** ASCII letters lowercased, other octets as they are (RFC 4343). */
export function lowerAscii(label: Buffer): Buffer {
  const out = Buffer.from(label);
  for (let i = 0; i < out.length; i++) if (out[i]! >= 0x41 && out[i]! <= 0x5a) out[i]! += 0x20;
  return out;
}

// The rdata layouts with names inside that RFC 4034 §6.2 lowercases, as
// [octets before the names, names, whether more octets follow].
const NAME_LAYOUTS: Record<number, [number, number, boolean]> = {
  2: [0, 1, false], 3: [0, 1, false], 4: [0, 1, false], 5: [0, 1, false], 7: [0, 1, false], 8: [0, 1, false],
  9: [0, 1, false], 12: [0, 1, false], 39: [0, 1, false], 14: [0, 2, false], 17: [0, 2, false],
  15: [2, 1, false], 18: [2, 1, false], 21: [2, 1, false], 36: [2, 1, false], 26: [2, 2, false],
  6: [0, 2, true], 33: [6, 1, false], 24: [18, 1, true], 46: [18, 1, true],
};

function canonicalRdata(message: Buffer, type: number, start: number, end: number): Buffer {
  const layout = NAME_LAYOUTS[type];
  if (!layout) return Buffer.from(message.subarray(start, end));
  const [fixed, names, rest] = layout;
  if (start + fixed > end) throw new WireFormatError(`rdata of type ${type} cut short`);
  const parts: Buffer[] = [message.subarray(start, start + fixed)];
  let at = start + fixed;
  for (let i = 0; i < names; i++) {
    const { name, end: after } = readName(message, at);
    parts.push(nameWire(name));
    at = after;
  }
  if (at > end) throw new WireFormatError(`rdata of type ${type} cut short`);
  if (rest) parts.push(message.subarray(at, end));
  else if (at !== end) throw new WireFormatError(`rdata of type ${type} has trailing octets`);
  return Buffer.from(Buffer.concat(parts));
}

/** Compares two names in canonical order (RFC 4034 §6.1): by labels from the root, octets lowercased. */
export function compareNames(a: WireName, b: WireName): number {
  for (let i = 1; i <= Math.min(a.length, b.length); i++) {
    const order = Buffer.compare(lowerAscii(a[a.length - i]!), lowerAscii(b[b.length - i]!));
    if (order !== 0) return order;
  }
  return a.length - b.length;
}

export function sameName(a: WireName, b: WireName): boolean {
  return a.length === b.length && compareNames(a, b) === 0;
}

/** True when `name` is `ancestor` or below it. */
export function isAtOrBelow(name: WireName, ancestor: WireName): boolean {
  return name.length >= ancestor.length && sameName(name.slice(name.length - ancestor.length), ancestor);
}

/** A name from presentation text (`www.Example.com.`, `.`), with `\.` and `\DDD` escapes. */
export function parseName(text: string): Buffer[] {
  if (text === '.' || text === '') return [];
  const labels: Buffer[] = [];
  let current: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === '\\') {
      const digits = /^\d{3}/.exec(text.slice(i + 1));
      if (digits) {
        current.push(Number(digits[0]) & 0xff);
        i += 3;
      } else if (i + 1 < text.length) {
        current.push(...Buffer.from(text[++i]!, 'utf8'));
      }
    } else if (char === '.') {
      labels.push(Buffer.from(current));
      current = [];
    } else {
      current.push(...Buffer.from(char, 'utf8'));
    }
  }
  if (current.length > 0 || !text.endsWith('.')) labels.push(Buffer.from(current));
  if (labels.some((label) => label.length === 0 || label.length > 63)) throw new WireFormatError(`not a domain name: ${text}`);
  return labels;
}

/** A name in presentation form with its trailing dot, lowercased, escaping as dig does. */
export function presentName(name: WireName): string {
  if (name.length === 0) return '.';
  return `${name.map((label) => presentLabel(lowerAscii(label))).join('.')}.`;
}

function presentLabel(label: Buffer): string {
  let text = '';
  for (const octet of label) {
    if (octet === 0x2e || octet === 0x5c || octet === 0x22 || octet === 0x28 || octet === 0x29 || octet === 0x3b || octet === 0x40 || octet === 0x24) {
      text += `\\${String.fromCharCode(octet)}`;
    } else if (octet <= 0x20 || octet > 0x7e) {
      text += `\\${String(octet).padStart(3, '0')}`;
    } else {
      text += String.fromCharCode(octet);
    }
  }
  return text;
}
