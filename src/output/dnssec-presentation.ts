/**
 * Presentation forms, as dig prints them, of the record types netintel
 * carries in RFC 3597 generic form (`\# <length> <hex>`): DS, DNSKEY,
 * RRSIG, NSEC, NSEC3 (RFC 4034 §2.2, §3.2, §4.2, §5.3; RFC 5155 §3.3),
 * TLSA (RFC 6698 §2.2), SVCB and HTTPS (RFC 9460 §2.1). Null when the
 * rdata does not read as its type, so the caller keeps the generic form.
 */

/** The presentation of `type` rdata given in generic form, or null. */
export function presentGenericRdata(type: string, generic: string): string | null {
  const match = /^\\# (\d+)(?: ([0-9a-fA-F]+))?$/.exec(generic);
  if (!match) return null;
  const rdata = Buffer.from(match[2] ?? '', 'hex');
  if (rdata.length !== Number(match[1])) return null;
  try {
    switch (type) {
      case 'DS':
      case 'CDS':
        return `${rdata.readUInt16BE(0)} ${rdata[2]} ${rdata[3]} ${chunks(hex(rdata.subarray(4)))}`;
      case 'DNSKEY':
      case 'CDNSKEY':
        return `${rdata.readUInt16BE(0)} ${rdata[2]} ${rdata[3]} ${chunks(rdata.subarray(4).toString('base64'))}`;
      case 'RRSIG':
        return presentRrsig(rdata);
      case 'NSEC': {
        const { name, end } = readName(rdata, 0);
        return [name, ...typeList(rdata.subarray(end))].join(' ');
      }
      case 'NSEC3':
        return presentNsec3(rdata);
      case 'TLSA':
        return `${rdata[0]} ${rdata[1]} ${rdata[2]} ${chunks(hex(rdata.subarray(3)))}`;
      case 'SVCB':
      case 'HTTPS':
        return presentSvcb(rdata);
      default:
        return null;
    }
  } catch {
    return null;
  }
}

function hex(bytes: Buffer): string {
  return bytes.toString('hex').toUpperCase();
}

/** dig breaks long base64 and hex fields into 56-character groups. */
function chunks(text: string): string {
  return text.match(/.{1,56}/g)?.join(' ') ?? '';
}

function presentRrsig(rdata: Buffer): string {
  const { name, end } = readName(rdata, 18);
  const fields = [
    typeMnemonic(rdata.readUInt16BE(0)),
    rdata[2],
    rdata[3],
    rdata.readUInt32BE(4),
    timestamp(rdata.readUInt32BE(8)),
    timestamp(rdata.readUInt32BE(12)),
    rdata.readUInt16BE(16),
    name,
    chunks(rdata.subarray(end).toString('base64')),
  ];
  return fields.join(' ');
}

/** RFC 4034 §3.2: YYYYMMDDHHmmSS in UTC. */
function timestamp(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

function presentNsec3(rdata: Buffer): string {
  const saltLength = rdata[4]!;
  const salt = rdata.subarray(5, 5 + saltLength);
  const hashLength = rdata[5 + saltLength]!;
  const hashAt = 6 + saltLength;
  const nextHash = rdata.subarray(hashAt, hashAt + hashLength);
  if (hashAt + hashLength > rdata.length) throw new RangeError('NSEC3 cut short');
  return [rdata[0], rdata[1], rdata.readUInt16BE(2), saltLength === 0 ? '-' : hex(salt), base32hex(nextHash), ...typeList(rdata.subarray(hashAt + hashLength))].join(' ');
}

function base32hex(bytes: Buffer): string {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUV';
  let text = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      text += alphabet[(buffer >> bits) & 0x1f];
    }
  }
  if (bits > 0) text += alphabet[(buffer << (5 - bits)) & 0x1f];
  return text;
}

// RFC 9460 §14.3.2 SvcParamKeys.
const SVC_KEYS = ['mandatory', 'alpn', 'no-default-alpn', 'port', 'ipv4hint', 'ech', 'ipv6hint'];

function presentSvcb(rdata: Buffer): string {
  const priority = rdata.readUInt16BE(0);
  const { name, end } = readName(rdata, 2);
  const fields: string[] = [String(priority), name];
  let at = end;
  while (at < rdata.length) {
    const key = rdata.readUInt16BE(at);
    const length = rdata.readUInt16BE(at + 2);
    const value = rdata.subarray(at + 4, at + 4 + length);
    if (value.length !== length) throw new RangeError('SvcParam cut short');
    at += 4 + length;
    const keyName = SVC_KEYS[key] ?? `key${key}`;
    fields.push(length === 0 && key === 2 ? keyName : `${keyName}=${svcValue(key, value)}`);
  }
  return fields.join(' ');
}

function svcValue(key: number, value: Buffer): string {
  switch (key) {
    case 0:
      return Array.from({ length: value.length / 2 }, (_, i) => SVC_KEYS[value.readUInt16BE(i * 2)] ?? `key${value.readUInt16BE(i * 2)}`).join(',');
    case 1: {
      const ids: string[] = [];
      for (let i = 0; i < value.length; i += 1 + value[i]!) ids.push(value.subarray(i + 1, i + 1 + value[i]!).toString('latin1'));
      return `"${ids.join(',')}"`;
    }
    case 3:
      return String(value.readUInt16BE(0));
    case 4:
      return Array.from({ length: value.length / 4 }, (_, i) => [...value.subarray(i * 4, i * 4 + 4)].join('.')).join(',');
    case 5:
      return value.toString('base64');
    case 6:
      return Array.from({ length: value.length / 16 }, (_, i) => ipv6(value.subarray(i * 16, i * 16 + 16))).join(',');
    default:
      return `"${[...value].map((b) => (b >= 0x21 && b <= 0x7e && b !== 0x22 && b !== 0x5c ? String.fromCharCode(b) : `\\${String(b).padStart(3, '0')}`)).join('')}"`;
  }
}

function ipv6(bytes: Buffer): string {
  const groups = Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2).toString(16));
  // RFC 5952 §4.2: the longest run of two or more zero groups becomes `::`.
  let best = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLength) {
      best = i;
      bestLength = j - i;
    }
    i = j === i ? i + 1 : j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLength).join(':')}`;
}

/** An uncompressed name in rdata, absolute, in dig's form. */
function readName(rdata: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let at = offset;
  for (;;) {
    const length = rdata[at];
    if (length === undefined || length > 63) throw new RangeError('bad name in rdata');
    if (length === 0) return { name: labels.length === 0 ? '.' : `${labels.join('.')}.`, end: at + 1 };
    const label = rdata.subarray(at + 1, at + 1 + length);
    if (label.length !== length) throw new RangeError('label cut short');
    labels.push([...label].map(labelChar).join(''));
    at += 1 + length;
  }
}

function labelChar(octet: number): string {
  if ('.\\"();@$'.includes(String.fromCharCode(octet))) return `\\${String.fromCharCode(octet)}`;
  if (octet <= 0x20 || octet > 0x7e) return `\\${String(octet).padStart(3, '0')}`;
  return String.fromCharCode(octet);
}

/** The types of an NSEC/NSEC3 type bit map (RFC 4034 §4.1.2), in numeric order. */
function typeList(bitmap: Buffer): string[] {
  const types: string[] = [];
  let at = 0;
  while (at + 2 <= bitmap.length) {
    const window = bitmap[at]!;
    const length = bitmap[at + 1]!;
    for (let i = 0; i < length; i++) {
      const octet = bitmap[at + 2 + i];
      if (octet === undefined) throw new RangeError('bit map cut short');
      for (let bit = 0; bit < 8; bit++) if (octet & (0x80 >> bit)) types.push(typeMnemonic(window * 256 + i * 8 + bit));
    }
    at += 2 + length;
  }
  return types;
}

// IANA "Resource Record (RR) TYPEs", the ones bit maps commonly hold.
const TYPE_MNEMONICS: Record<number, string> = {
  1: 'A', 2: 'NS', 5: 'CNAME', 6: 'SOA', 12: 'PTR', 13: 'HINFO', 15: 'MX', 16: 'TXT', 17: 'RP', 18: 'AFSDB', 24: 'SIG', 25: 'KEY',
  28: 'AAAA', 29: 'LOC', 33: 'SRV', 35: 'NAPTR', 36: 'KX', 37: 'CERT', 39: 'DNAME', 42: 'APL', 43: 'DS', 44: 'SSHFP', 45: 'IPSECKEY',
  46: 'RRSIG', 47: 'NSEC', 48: 'DNSKEY', 49: 'DHCID', 50: 'NSEC3', 51: 'NSEC3PARAM', 52: 'TLSA', 53: 'SMIMEA', 55: 'HIP', 59: 'CDS',
  60: 'CDNSKEY', 61: 'OPENPGPKEY', 62: 'CSYNC', 63: 'ZONEMD', 64: 'SVCB', 65: 'HTTPS', 99: 'SPF', 256: 'URI', 257: 'CAA',
};

function typeMnemonic(type: number): string {
  return TYPE_MNEMONICS[type] ?? `TYPE${type}`;
}
