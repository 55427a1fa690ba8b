/**
 * TLSA records (RFC 6698 §2): the certificate usage, the selector, the
 * matching type and the certificate association data, read from the wire
 * RDATA, from dns-packet's decoded form, or from the presentation format
 * (`3 1 1 2bb1...`, RFC 6698 §2.2).
 */

/** RFC 6698 §2.1.1 / RFC 7218 §2.1 acronyms of the certificate usages. */
export const TLSA_USAGE_NAMES: Readonly<Record<number, string>> = { 0: 'PKIX-TA', 1: 'PKIX-EE', 2: 'DANE-TA', 3: 'DANE-EE' };
/** RFC 6698 §2.1.2 / RFC 7218 §2.2. */
export const TLSA_SELECTOR_NAMES: Readonly<Record<number, string>> = { 0: 'Cert', 1: 'SPKI' };
/** RFC 6698 §2.1.3 / RFC 7218 §2.3. */
export const TLSA_MATCHING_NAMES: Readonly<Record<number, string>> = { 0: 'Full', 1: 'SHA2-256', 2: 'SHA2-512' };

/** The digest length each hashed matching type must have (RFC 6698 §2.1.3). */
const DIGEST_LENGTH: Readonly<Record<number, number>> = { 1: 32, 2: 64 };

export interface TlsaRecord {
  /** Certificate usage, 0-255; 0-3 are defined (RFC 6698 §2.1.1). */
  usage: number;
  /** 0-255; 0 (full certificate) and 1 (SubjectPublicKeyInfo) are defined (RFC 6698 §2.1.2). */
  selector: number;
  /** 0-255; 0 (exact), 1 (SHA-256), 2 (SHA-512) are defined (RFC 6698 §2.1.3). */
  matching_type: number;
  /** The certificate association data, lower-case hex. */
  data: string;
  /** `DANE-EE(3) SPKI(1) SHA2-256(1)` (RFC 7218 acronyms), for people. */
  label: string;
  /**
   * Why a sender cannot use the record, or null: an unknown parameter, a
   * digest of the wrong length (RFC 7671 §5.1 has such records ignored), a
   * PKIX usage (RFC 7672 §3.1.3 has SMTP treat them as unusable).
   */
  unusable: string | null;
}

/** What a record is made of before it is judged. */
export interface TlsaFields {
  usage: number;
  selector: number;
  matching_type: number;
  data: Uint8Array;
}

/**
 * Judges the fields of one record and gives its display form.
 *
 * @throws TypeError when a field is not a byte value (not outside input:
 *   the parsers below never pass one).
 */
export function tlsaRecord(fields: TlsaFields): TlsaRecord {
  for (const [label, value] of [['usage', fields.usage], ['selector', fields.selector], ['matching type', fields.matching_type]] as const) {
    if (!Number.isInteger(value) || value < 0 || value > 255) throw new TypeError(`TLSA ${label} ${String(value)} is not 0-255`);
  }
  const data = Buffer.from(fields.data).toString('hex');
  return {
    usage: fields.usage,
    selector: fields.selector,
    matching_type: fields.matching_type,
    data,
    label: `${named(TLSA_USAGE_NAMES, fields.usage)} ${named(TLSA_SELECTOR_NAMES, fields.selector)} ${named(TLSA_MATCHING_NAMES, fields.matching_type)}`,
    unusable: unusableReason(fields.usage, fields.selector, fields.matching_type, fields.data.length),
  };
}

function named(names: Readonly<Record<number, string>>, value: number): string {
  return `${names[value] ?? 'unknown'}(${value})`;
}

function unusableReason(usage: number, selector: number, matchingType: number, length: number): string | null {
  if (usage === 0 || usage === 1) return `usage ${named(TLSA_USAGE_NAMES, usage)} is not used for SMTP (RFC 7672 §3.1.3)`;
  if (usage !== 2 && usage !== 3) return `unknown certificate usage ${usage}`;
  if (selector !== 0 && selector !== 1) return `unknown selector ${selector}`;
  if (matchingType !== 0 && matchingType !== 1 && matchingType !== 2) return `unknown matching type ${matchingType}`;
  const expected = DIGEST_LENGTH[matchingType];
  if (expected !== undefined && length !== expected) return `a ${named(TLSA_MATCHING_NAMES, matchingType)} digest is ${expected} bytes, this one ${length}`;
  if (length === 0) return 'the certificate association data is empty';
  return null;
}

/**
 * A TLSA RDATA as it travels (RFC 6698 §2.1): three octets, then the data.
 * Null when shorter than four octets (the data must not be empty).
 */
export function parseTlsaRdata(rdata: Uint8Array): TlsaRecord | null {
  if (rdata.length < 4) return null;
  return tlsaRecord({ usage: rdata[0]!, selector: rdata[1]!, matching_type: rdata[2]!, data: rdata.subarray(3) });
}

/**
 * The presentation format (RFC 6698 §2.2): three decimal fields and the
 * data in hex, which may be split by white space. Null when it is not one.
 */
export function parseTlsaText(text: string): TlsaRecord | null {
  const fields = text.trim().split(/\s+/);
  if (fields.length < 4 || !fields.slice(0, 3).every((field) => /^\d{1,3}$/.test(field))) return null;
  const [usage, selector, matchingType] = fields.slice(0, 3).map(Number) as [number, number, number];
  const hex = fields.slice(3).join('');
  if (usage > 255 || selector > 255 || matchingType > 255 || !/^(?:[0-9a-fA-F]{2})+$/.test(hex)) return null;
  return tlsaRecord({ usage, selector, matching_type: matchingType, data: Buffer.from(hex, 'hex') });
}

/**
 * A TLSA record from dns-packet's decoding of an answer (`{usage,
 * selector, matchingType, certificate}`), or from the RDATA bytes dns-packet
 * gives for a type it does not decode. Null for anything else.
 */
export function tlsaFromDecoded(data: unknown): TlsaRecord | null {
  if (data instanceof Uint8Array) return parseTlsaRdata(data);
  if (typeof data !== 'object' || data === null) return null;
  const { usage, selector, matchingType, certificate } = data as Record<string, unknown>;
  if (!isByte(usage) || !isByte(selector) || !isByte(matchingType) || !(certificate instanceof Uint8Array) || certificate.length === 0) return null;
  return tlsaRecord({ usage, selector, matching_type: matchingType, data: certificate });
}

function isByte(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 255;
}

/** `3 1 1 2bb1...` (RFC 6698 §2.2), the form zone files and dig show. */
export function presentTlsa(record: Pick<TlsaRecord, 'usage' | 'selector' | 'matching_type' | 'data'>): string {
  return `${record.usage} ${record.selector} ${record.matching_type} ${record.data}`;
}
