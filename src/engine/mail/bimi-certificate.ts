import { X509Certificate } from 'node:crypto';

/** The logotype extension (RFC 3709) a Mark Certificate carries its SVG in. */
export const LOGOTYPE_OID = '1.3.6.1.5.5.7.1.12';

/** The first certificate of a Mark Certificate PEM file, read but not validated. */
export interface MarkCertificate {
  /** Certificates in the PEM file. */
  certificates: number;
  subject: string;
  issuer: string;
  valid_from: string;
  valid_to: string;
  /** Extension OIDs of the first certificate, in order. */
  extensions: string[];
  /** True when the first certificate carries the logotype extension. */
  logotype: boolean;
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]+?)-----END CERTIFICATE-----/g;

/**
 * Reads the first certificate of a PEM file (the leaf of a VMC or CMC):
 * subject, issuer, validity and whether it has the logotype extension. No
 * chain is built and no signature checked. Null when the text holds no
 * certificate node:crypto can read.
 */
export function readMarkCertificate(pem: string): MarkCertificate | null {
  const blocks = [...pem.matchAll(PEM_BLOCK)];
  const first = blocks[0];
  if (!first) return null;
  const der = Buffer.from(first[1]!.replace(/\s+/g, ''), 'base64');
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(der);
  } catch {
    return null;
  }
  const extensions = extensionOids(der);
  return {
    certificates: blocks.length,
    subject: certificate.subject.replace(/\n/g, ', '),
    issuer: certificate.issuer.replace(/\n/g, ', '),
    valid_from: new Date(certificate.validFrom).toISOString(),
    valid_to: new Date(certificate.validTo).toISOString(),
    extensions,
    logotype: extensions.includes(LOGOTYPE_OID),
  };
}

interface DerElement {
  tag: number;
  /** Offset of the contents. */
  start: number;
  end: number;
}

/** One DER element at `offset` of `der`, or null when it does not fit. */
function element(der: Buffer, offset: number, limit: number): DerElement | null {
  if (offset + 2 > limit) return null;
  const tag = der[offset]!;
  let length = der[offset + 1]!;
  let start = offset + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4 || start + count > limit) return null;
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + der[start + i]!;
    start += count;
  }
  const end = start + length;
  return end > limit ? null : { tag, start, end };
}

function children(der: Buffer, parent: DerElement): DerElement[] {
  const out: DerElement[] = [];
  let offset = parent.start;
  while (offset < parent.end) {
    const child = element(der, offset, parent.end);
    if (!child) break;
    out.push(child);
    offset = child.end;
  }
  return out;
}

function oidText(bytes: Buffer): string {
  const parts: number[] = [];
  let value = 0;
  bytes.forEach((byte, index) => {
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) {
      if (parts.length === 0 && index >= 0) {
        const first = value < 80 ? Math.floor(value / 40) : 2;
        parts.push(first, value - first * 40);
      } else {
        parts.push(value);
      }
      value = 0;
    }
  });
  return parts.join('.');
}

/**
 * The extension OIDs of a certificate (RFC 5280 §4.1): Certificate →
 * TBSCertificate → [3] Extensions → Extension → extnID. node:crypto reads
 * the certificate but does not list its extensions.
 */
function extensionOids(der: Buffer): string[] {
  const certificate = element(der, 0, der.length);
  if (!certificate) return [];
  const tbs = children(der, certificate)[0];
  if (!tbs) return [];
  const wrapper = children(der, tbs).find((item) => item.tag === 0xa3);
  if (!wrapper) return [];
  const list = children(der, wrapper)[0];
  if (!list) return [];
  return children(der, list).flatMap((extension) => {
    const id = children(der, extension)[0];
    return id && id.tag === 0x06 ? [oidText(der.subarray(id.start, id.end))] : [];
  });
}
