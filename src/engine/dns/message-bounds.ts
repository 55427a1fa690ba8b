/**
 * The structure of a DNS message checked against its own length before
 * anything is decoded (RFC 1035 §4.1). dns-packet's decoder is lenient
 * where it slices: an rdata length past the end of the message is cut to
 * what is there (a TXT record over the end reads as `"hello" ""`), and a
 * name inside rdata may run past its record. Those are checked here; a
 * message that passes can be decoded without reading outside a record.
 */

/** Octets of the fixed header (RFC 1035 §4.1.1). */
const HEADER_OCTETS = 12;

/** The longest name on the wire, length octets and the root's included (RFC 1035 §2.3.4, §3.1). */
const MAX_NAME_OCTETS = 255;

// Types whose rdata holds names dns-packet decodes, as [octets before the
// first name, names, octets after the names: 'exact' (none), 'fixed' (the
// count in the third slot) or 'rest' (any)], from RFC 1035 §3.3, RFC 2782,
// RFC 6672 and RFC 4034.
type NameLayout = readonly [before: number, names: number, after: 'exact' | 'rest' | number];
const NAME_LAYOUTS: Readonly<Record<number, NameLayout>> = {
  2: [0, 1, 'exact'], // NS
  5: [0, 1, 'exact'], // CNAME
  12: [0, 1, 'exact'], // PTR
  39: [0, 1, 'exact'], // DNAME
  15: [2, 1, 'exact'], // MX
  6: [0, 2, 20], // SOA
  33: [6, 1, 'exact'], // SRV
  46: [18, 1, 'rest'], // RRSIG
  47: [0, 1, 'rest'], // NSEC
};

const TXT = 16;
const SECTIONS = ['answer', 'authority', 'additional'] as const;

/** Where the question section ends, in a message whose questions passed {@link messageProblem}. */
export function questionEnd(message: Buffer): number {
  let offset = HEADER_OCTETS;
  const questions = message.readUInt16BE(4);
  for (let i = 0; i < questions; i++) offset = nameEnd(message, offset) + 4;
  return offset;
}

/**
 * Why `message` is not a well-formed DNS message, in a few words, or null
 * when it is. With `questionsOnly`, only the header and the question
 * section are checked: a truncated reply (TC set) is read for its question
 * alone, and its records may be cut (RFC 1035 §4.1.1, §7.3).
 *
 * The rules: the header is whole; every name is a sequence of labels of at
 * most 63 octets ending in the root label, with compression pointers that
 * point to an earlier offset (RFC 1035 §4.1.4: to a prior occurrence, which
 * also rules out loops), at most 255 octets long when expanded; every
 * record's fixed fields and rdata lie inside the message; names inside the
 * rdata of NS, CNAME, PTR, DNAME, MX, SOA, SRV, RRSIG and NSEC end inside
 * that rdata; the character strings of a TXT record fill its rdata exactly.
 */
export function messageProblem(message: Buffer, questionsOnly = false): string | null {
  if (message.length === 0) return 'an empty message';
  if (message.length < HEADER_OCTETS) return `${message.length} octets, shorter than the 12-octet DNS header`;
  try {
    let offset = HEADER_OCTETS;
    const questions = message.readUInt16BE(4);
    for (let i = 0; i < questions; i++) {
      offset = nameEnd(message, offset);
      if (offset + 4 > message.length) throw new Malformed(`question ${i + 1} is cut short`);
      offset += 4;
    }
    if (questionsOnly) return null;
    for (let section = 0; section < SECTIONS.length; section++) {
      const count = message.readUInt16BE(6 + 2 * section);
      for (let i = 0; i < count; i++) offset = recordEnd(message, offset, () => `record ${i + 1} of the ${SECTIONS[section]} section`);
    }
    return null;
  } catch (error) {
    if (error instanceof Malformed) return error.message;
    throw error;
  }
}

class Malformed extends Error {}

/** The offset after the record at `offset`; `which` names it for the message. */
function recordEnd(message: Buffer, offset: number, which: () => string): number {
  const afterName = nameEnd(message, offset);
  if (afterName + 10 > message.length) throw new Malformed(`${which()} is cut short`);
  const type = message.readUInt16BE(afterName);
  const length = message.readUInt16BE(afterName + 8);
  const start = afterName + 10;
  const end = start + length;
  if (end > message.length) {
    throw new Malformed(`${which()} claims ${length} octets of data, ${end - message.length} past the end of the message`);
  }
  const layout = NAME_LAYOUTS[type];
  if (layout) checkNamesInRdata(message, start, end, layout, which);
  else if (type === TXT) checkCharacterStrings(message, start, end, which);
  return end;
}

function checkNamesInRdata(message: Buffer, start: number, end: number, layout: NameLayout, which: () => string): void {
  const [before, names, after] = layout;
  let at = start + before;
  if (at > end) throw new Malformed(`the data of ${which()} is cut short`);
  for (let i = 0; i < names; i++) {
    // A name inside rdata must end inside it: its labels are read from the message, which may go on past the record.
    at = nameEnd(message, at, end);
  }
  const left = end - at;
  if (after === 'exact' ? left !== 0 : typeof after === 'number' ? left !== after : left < 0) {
    throw new Malformed(`the data of ${which()} does not match its length`);
  }
}

function checkCharacterStrings(message: Buffer, start: number, end: number, which: () => string): void {
  let at = start;
  while (at < end) at += 1 + message[at]!;
  if (at !== end) throw new Malformed(`a character string of ${which()} runs past the end of its data`);
}

/**
 * The offset after the name at `offset` (after its pointer when compressed).
 * `limit`: where the name's own octets must end (the end of its rdata);
 * octets reached through a pointer lie before it anyway.
 */
function nameEnd(message: Buffer, offset: number, limit = message.length): number {
  let at = offset;
  let end = -1;
  let octets = 0;
  // Octets before this offset are earlier in the message: a pointer must go below it (RFC 1035 §4.1.4).
  let earliest = offset;
  for (;;) {
    if (at >= (end < 0 ? limit : message.length)) throw new Malformed(at >= message.length ? 'a name runs past the end of the message' : 'a name runs past the end of its record');
    const length = message[at]!;
    const kind = length & 0xc0;
    if (kind === 0xc0) {
      if (at + 1 >= (end < 0 ? limit : message.length)) throw new Malformed('a compression pointer is cut short');
      const target = ((length & 0x3f) << 8) | message[at + 1]!;
      if (target >= message.length) throw new Malformed(`a compression pointer points past the end of the message (to offset ${target} of ${message.length})`);
      if (target >= earliest) throw new Malformed(`a compression pointer at offset ${at} points forward or to itself (to offset ${target}), not to an earlier name`);
      if (end < 0) end = at + 2;
      earliest = target;
      at = target;
      continue;
    }
    if (kind !== 0) throw new Malformed(`a label at offset ${at} has the reserved type bits ${kind.toString(2).padStart(8, '0').slice(0, 2)}`);
    octets += 1 + length;
    if (octets > MAX_NAME_OCTETS) throw new Malformed(`a name is longer than ${MAX_NAME_OCTETS} octets`);
    if (length === 0) return end < 0 ? at + 1 : end;
    if (at + 1 + length > (end < 0 ? limit : message.length)) throw new Malformed(at + 1 + length > message.length ? 'a label runs past the end of the message' : 'a name runs past the end of its record');
    at += 1 + length;
  }
}
