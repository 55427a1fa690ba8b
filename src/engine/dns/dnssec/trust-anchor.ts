import { readDnskey, readDs, type Dnskey, type Ds } from './dnssec-records.js';
import { algorithmNumber } from './verify-signature.js';
import { parseName, presentName, sameName, WireFormatError, type WireName } from './wire.js';

/**
 * Trust anchors: the DS or DNSKEY records a chain of trust starts from
 * (RFC 4033 §2), all at one owner, the top of the chain.
 */
export interface TrustAnchor {
  owner: WireName;
  ds: Ds[];
  dnskeys: Dnskey[];
}

/**
 * The IANA root zone KSKs as DS records (KSK-2017, tag 20326, and KSK-2024,
 * tag 38696), as published in https://data.iana.org/root-anchors/root-anchors.xml
 * and in Debian's dns-root-data.
 */
export const ROOT_TRUST_ANCHOR_TEXT = `. IN DS 20326 8 2 E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D
. IN DS 38696 8 2 683D2D0ACB8C9B712A1948B27F741219298D0A450D612C483AF444A4C0FB2B16
`;

/** The default trust anchor: the root zone's. */
export function rootTrustAnchor(): TrustAnchor {
  return parseTrustAnchors(ROOT_TRUST_ANCHOR_TEXT);
}

/** One resource record as zone-file text gives it (RFC 1035 §5.1). */
export interface TextRecord {
  owner: string;
  ttl: number | null;
  klass: string;
  type: string;
  /** The rdata fields, comments and parentheses removed. */
  rdata: string[];
}

/** Thrown for text that is not a record; the message says which line and why. */
export class RecordSyntaxError extends Error {}

/**
 * Reads zone-file records: `owner [TTL] [class] type rdata` with TTL and
 * class in either order (RFC 1035 §5.1), `;` comments, `( ... )` across
 * lines, quoted strings kept as one field. `$TTL` and `$ORIGIN` lines set
 * the default TTL and the origin relative names are completed with; a
 * blank or indented owner repeats the previous one.
 *
 * @throws RecordSyntaxError naming the line.
 */
export function parseRecords(text: string): TextRecord[] {
  const records: TextRecord[] = [];
  let origin = '.';
  let defaultTtl: number | null = null;
  let previousOwner: string | null = null;
  for (const { fields, line, indented } of logicalLines(text)) {
    if (fields.length === 0) continue;
    const first = fields[0]!;
    if (first.toUpperCase() === '$ORIGIN') {
      origin = absolute(fields[1] ?? '', '.', line);
      continue;
    }
    if (first.toUpperCase() === '$TTL') {
      defaultTtl = parseTtl(fields[1] ?? '', line);
      continue;
    }
    if (first.startsWith('$')) throw new RecordSyntaxError(`line ${line}: unsupported directive ${first}`);
    let at = 0;
    let owner: string;
    if (indented) {
      if (previousOwner === null) throw new RecordSyntaxError(`line ${line}: no owner name`);
      owner = previousOwner;
    } else {
      owner = first === '@' ? origin : absolute(first, origin, line);
      at = 1;
    }
    previousOwner = owner;
    let ttl = defaultTtl;
    let klass = 'IN';
    for (let i = 0; i < 2 && at < fields.length; i++) {
      const field = fields[at]!;
      if (/^\d+$/.test(field)) {
        ttl = parseTtl(field, line);
        at++;
      } else if (/^(IN|CH|HS|CS)$/i.test(field)) {
        klass = field.toUpperCase();
        at++;
      }
    }
    const type = fields[at];
    if (type === undefined) throw new RecordSyntaxError(`line ${line}: no record type`);
    if (!/^[A-Za-z][A-Za-z0-9-]*$/.test(type)) throw new RecordSyntaxError(`line ${line}: ${JSON.stringify(type)} is not a record type`);
    records.push({ owner, ttl, klass, type: type.toUpperCase(), rdata: fields.slice(at + 1) });
  }
  return records;
}

/**
 * Trust anchors from zone-file text holding DS and DNSKEY records (what
 * `dnssec-keygen` writes to K*.key, what `dnssec-dsfromkey` prints, what
 * unbound's trust-anchor-file reads). Other record types are ignored; all
 * anchors must share one owner.
 *
 * @throws RecordSyntaxError for text that is not records, rdata that is not
 *   DS or DNSKEY, no anchor at all, or anchors at different owners.
 */
export function parseTrustAnchors(text: string): TrustAnchor {
  let owner: WireName | null = null;
  const ds: Ds[] = [];
  const dnskeys: Dnskey[] = [];
  for (const record of parseRecords(text)) {
    if (record.type !== 'DS' && record.type !== 'DNSKEY') continue;
    if (record.klass !== 'IN') throw new RecordSyntaxError(`${record.owner} ${record.type}: class ${record.klass}, not IN`);
    const name = toWireName(record.owner);
    if (owner !== null && !sameName(owner, name)) {
      throw new RecordSyntaxError(`trust anchors at two owners, ${presentName(owner)} and ${presentName(name)}; give one zone's`);
    }
    owner = name;
    if (record.type === 'DS') ds.push(readDs(dsRdata(record)));
    else dnskeys.push(readDnskey(dnskeyRdata(record)));
  }
  if (owner === null) throw new RecordSyntaxError('no DS or DNSKEY record found');
  return { owner, ds, dnskeys };
}

function toWireName(text: string): WireName {
  try {
    return parseName(text);
  } catch (error) {
    throw new RecordSyntaxError(error instanceof WireFormatError ? error.message : String(error));
  }
}

function dsRdata(record: TextRecord): Buffer {
  const [tag, algorithm, digestType, ...digestParts] = record.rdata;
  const digest = digestParts.join('');
  if (digestType === undefined || !/^[0-9a-fA-F]+$/.test(digest) || digest.length % 2 !== 0) {
    throw new RecordSyntaxError(`${record.owner} DS: expected "key-tag algorithm digest-type hex-digest"`);
  }
  const head = Buffer.alloc(4);
  head.writeUInt16BE(integer(tag!, 0xffff, record, 'key tag'), 0);
  head[2] = algorithmField(algorithm!, record);
  head[3] = integer(digestType, 0xff, record, 'digest type');
  return Buffer.concat([head, Buffer.from(digest, 'hex')]);
}

function dnskeyRdata(record: TextRecord): Buffer {
  const [flags, protocol, algorithm, ...keyParts] = record.rdata;
  const key = keyParts.join('');
  if (algorithm === undefined || key.length === 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(key) || key.length % 4 !== 0) {
    throw new RecordSyntaxError(`${record.owner} DNSKEY: expected "flags protocol algorithm base64-key"`);
  }
  const head = Buffer.alloc(4);
  head.writeUInt16BE(integer(flags!, 0xffff, record, 'flags'), 0);
  head[2] = integer(protocol!, 0xff, record, 'protocol');
  head[3] = algorithmField(algorithm, record);
  return Buffer.concat([head, Buffer.from(key, 'base64')]);
}

function algorithmField(text: string, record: TextRecord): number {
  if (/^\d+$/.test(text)) return integer(text, 0xff, record, 'algorithm');
  const number = algorithmNumber(text);
  if (number === null) throw new RecordSyntaxError(`${record.owner} ${record.type}: unknown algorithm ${JSON.stringify(text)}`);
  return number;
}

function integer(text: string, max: number, record: TextRecord, what: string): number {
  const value = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(value <= max)) throw new RecordSyntaxError(`${record.owner} ${record.type}: ${what} ${JSON.stringify(text)} is not a number from 0 to ${max}`);
  return value;
}

function parseTtl(text: string, line: number): number {
  if (!/^\d+$/.test(text) || Number(text) > 0x7fffffff) throw new RecordSyntaxError(`line ${line}: ${JSON.stringify(text)} is not a TTL`);
  return Number(text);
}

function absolute(name: string, origin: string, line: number): string {
  if (name === '') throw new RecordSyntaxError(`line ${line}: no name`);
  if (name.endsWith('.') && !name.endsWith('\\.')) return name;
  return origin === '.' ? `${name}.` : `${name}.${origin}`;
}

/** Lines joined across parentheses, split into fields, with the line each starts on. */
function* logicalLines(text: string): Generator<{ fields: string[]; line: number; indented: boolean }> {
  let fields: string[] = [];
  let depth = 0;
  let startLine = 1;
  let indented = false;
  const lines = text.split(/\r?\n/);
  for (let index = 0; index < lines.length; index++) {
    const raw = lines[index]!;
    if (depth === 0) {
      startLine = index + 1;
      indented = /^[ \t]/.test(raw);
      fields = [];
    }
    let i = 0;
    while (i < raw.length) {
      const char = raw[i]!;
      if (char === ';') break;
      if (char === ' ' || char === '\t') {
        i++;
      } else if (char === '(') {
        depth++;
        i++;
      } else if (char === ')') {
        if (depth === 0) throw new RecordSyntaxError(`line ${index + 1}: ")" without "("`);
        depth--;
        i++;
      } else if (char === '"') {
        let end = i + 1;
        while (end < raw.length && raw[end] !== '"') end += raw[end] === '\\' ? 2 : 1;
        if (end >= raw.length) throw new RecordSyntaxError(`line ${index + 1}: unterminated quoted string`);
        fields.push(raw.slice(i + 1, end));
        i = end + 1;
      } else {
        let end = i;
        while (end < raw.length && !' \t;()"'.includes(raw[end]!)) end += raw[end] === '\\' ? 2 : 1;
        fields.push(raw.slice(i, end));
        i = end;
      }
    }
    if (depth === 0) yield { fields, line: startLine, indented };
  }
  if (depth !== 0) throw new RecordSyntaxError(`line ${startLine}: "(" without ")"`);
}
