/**
 * DKIM canonicalization (RFC 6376 §3.4) and the two hashes of §3.7: the
 * body hash, computed in one streaming pass over the body whatever its
 * size, and the header hash input.
 */
import { createHash, type Hash } from 'node:crypto';
import type { DkimCanonicalization } from './dkim-signature.js';
import type { MessageField } from './dkim-message-reader.js';

/** One body hash a signature asks for. */
export interface BodyHashRequest {
  canonicalization: DkimCanonicalization;
  /** l=, null for the whole body. */
  limit: bigint | null;
}

export interface BodyHashResult {
  /** SHA-256 of the canonicalized body, cut at the limit. */
  digest: Buffer;
  /** Octets of the whole canonicalized body (not cut). */
  canonicalLength: number;
}

/** The key of a request, to share one hash among the signatures that ask the same. */
export function bodyHashKey(request: BodyHashRequest): string {
  return `${request.canonicalization}:${request.limit ?? ''}`;
}

const CRLF = Buffer.from('\r\n');
/** Output is handed to the hashes in pieces of about this size. */
const FLUSH_BYTES = 64 * 1024;

/**
 * Computes the body hashes asked for, one pass over the body per
 * canonicalization, however many limits are asked: the canonical body is
 * produced line by line and fed to every hash up to its limit, so memory
 * stays a few pieces whatever the body's size.
 *
 * simple (§3.4.3): the body as it is, empty lines at the end removed, a
 * missing final CRLF added; an empty body is one CRLF. relaxed (§3.4.4):
 * also whitespace at the end of each line removed and runs of whitespace
 * made one space; an empty body stays empty. Lines ending in LF alone are
 * read as ending in CRLF, as the message reader reads them.
 */
export function hashDkimBodies(body: Buffer, requests: readonly BodyHashRequest[]): Map<string, BodyHashResult> {
  const results = new Map<string, BodyHashResult>();
  for (const canonicalization of ['simple', 'relaxed'] as const) {
    const wanted = new Map<string, BodyHashRequest>();
    for (const request of requests) if (request.canonicalization === canonicalization) wanted.set(bodyHashKey(request), request);
    if (wanted.size === 0) continue;
    const sinks = [...wanted].map(([key, request]) => ({ key, hash: createHash('sha256'), remaining: request.limit }));
    const length = canonicalBody(body, canonicalization, (piece) => {
      for (const sink of sinks) feed(sink, piece);
    });
    for (const sink of sinks) results.set(sink.key, { digest: sink.hash.digest(), canonicalLength: length });
  }
  return results;
}

function feed(sink: { hash: Hash; remaining: bigint | null }, piece: Buffer): void {
  if (sink.remaining === null) {
    sink.hash.update(piece);
    return;
  }
  if (sink.remaining <= 0n) return;
  const take = sink.remaining >= BigInt(piece.length) ? piece.length : Number(sink.remaining);
  sink.hash.update(take === piece.length ? piece : piece.subarray(0, take));
  sink.remaining -= BigInt(take);
}

/** Produces the canonical body in pieces; returns its length in octets. */
function canonicalBody(body: Buffer, canonicalization: DkimCanonicalization, emit: (piece: Buffer) => void): number {
  let length = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const out = (piece: Buffer) => {
    pending.push(piece);
    pendingBytes += piece.length;
    length += piece.length;
    if (pendingBytes >= FLUSH_BYTES) flush();
  };
  const flush = () => {
    if (pendingBytes > 0) emit(pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes));
    pending = [];
    pendingBytes = 0;
  };
  // Empty lines are held back until a line with content follows: those at the end are dropped (§3.4.3, §3.4.4).
  let emptyLines = 0;
  let offset = 0;
  while (offset < body.length) {
    const lf = body.indexOf(0x0a, offset);
    const lineEnd = lf === -1 ? body.length : lf;
    const contentEnd = lf !== -1 && lineEnd > offset && body[lineEnd - 1] === 0x0d ? lineEnd - 1 : lineEnd;
    let line = body.subarray(offset, contentEnd);
    if (canonicalization === 'relaxed') line = relaxedLine(line);
    offset = lf === -1 ? body.length : lf + 1;
    if (line.length === 0) {
      emptyLines++;
      continue;
    }
    for (; emptyLines > 0; emptyLines--) out(CRLF);
    out(line);
    // A last line without CRLF gets one (§3.4.3; §3.4.4 for a non-empty body).
    out(CRLF);
  }
  // simple: an empty body (or one of empty lines only) is a single CRLF.
  if (length === 0 && canonicalization === 'simple') out(CRLF);
  flush();
  return length;
}

/** §3.4.4 a: whitespace at the end of the line removed, each run of whitespace inside made one space. */
function relaxedLine(line: Buffer): Buffer {
  let end = line.length;
  while (end > 0 && isWsp(line[end - 1]!)) end--;
  let clean = true;
  for (let index = 0; index < end; index++) {
    const code = line[index]!;
    if (code === 0x09 || (code === 0x20 && index + 1 < end && isWsp(line[index + 1]!))) {
      clean = false;
      break;
    }
  }
  if (clean) return end === line.length ? line : line.subarray(0, end);
  const out = Buffer.allocUnsafe(end);
  let size = 0;
  let inRun = false;
  for (let index = 0; index < end; index++) {
    const code = line[index]!;
    if (!isWsp(code)) {
      out[size++] = code;
      inRun = false;
    } else if (!inRun) {
      out[size++] = 0x20;
      inRun = true;
    }
  }
  return out.subarray(0, size);
}

function isWsp(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

/**
 * The header hash input of §3.7: the fields h= names, each picked from
 * the bottom up (a name listed twice takes the next instance up; a name
 * with no instance left adds nothing, §5.4.2), canonicalized and ended by
 * CRLF; then the DKIM-Signature field itself with its b= value emptied,
 * canonicalized, without a final CRLF. Linear in the size of the fields.
 */
export function headerHashInput(fields: readonly MessageField[], signedFields: readonly string[], signatureField: MessageField, canonicalization: DkimCanonicalization): Buffer {
  const instances = new Map<string, number[]>();
  for (let index = 0; index < fields.length; index++) {
    const key = fields[index]!.key;
    if (key === null) continue;
    let list = instances.get(key);
    if (!list) instances.set(key, (list = []));
    list.push(index);
  }
  const parts: string[] = [];
  for (const name of signedFields) {
    const index = instances.get(name)?.pop();
    if (index === undefined) continue;
    parts.push(canonicalField(fields[index]!, canonicalization), '\r\n');
  }
  parts.push(canonicalField(withoutSignatureValue(signatureField), canonicalization));
  return Buffer.from(parts.join(''), 'latin1');
}

/** §3.4.1 simple: the field unchanged. §3.4.2 relaxed: name in lower case, unfolded, whitespace runs made one space, none around the colon or at the end. */
function canonicalField(field: MessageField, canonicalization: DkimCanonicalization): string {
  if (canonicalization === 'simple' || field.name === null) return field.raw;
  const value = field.raw
    .slice(field.valueStart)
    .replace(/\r\n/g, '')
    .replace(/[ \t]+/g, ' ')
    .replace(/^ /, '')
    .replace(/ $/, '');
  return `${field.key}:${value}`;
}

/**
 * The signature field with the value of its b= tag deleted "including all
 * surrounding whitespace" (§3.7 step 2): everything between `b=` and the
 * next `;` (or the end) goes. b= is found by the tag-list rules, so a `b`
 * inside another tag's value (bh=, or z= text) is never taken for it.
 */
function withoutSignatureValue(field: MessageField): MessageField {
  const raw = field.raw;
  let start = field.valueStart;
  while (start <= raw.length) {
    const semicolon = raw.indexOf(';', start);
    const end = semicolon === -1 ? raw.length : semicolon;
    const equals = raw.slice(start, end).indexOf('=');
    if (equals !== -1 && raw.slice(start, start + equals).replace(/[ \t\r\n]+/g, '') === 'b') {
      return { ...field, raw: raw.slice(0, start + equals + 1) + raw.slice(end) };
    }
    if (semicolon === -1) break;
    start = semicolon + 1;
  }
  return field;
}
