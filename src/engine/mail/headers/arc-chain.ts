/**
 * ARC chain validation (RFC 8617 §5.2) by mailauth's lib/arc, given the
 * project's resolver: the instances must run 1..N with one ARC-Seal,
 * ARC-Message-Signature and ARC-Authentication-Results each, the first
 * seal cv=none and the later ones cv=pass, every seal must verify over
 * the ARC fields before it, and the newest ARC-Message-Signature must
 * verify over the message. mailauth says "fail" for any failure, a key
 * that could not be fetched included; a DNS failure is temperror here
 * (RFC 8617 §5.2: a chain that cannot be validated for a transient reason
 * is not a failing one).
 */
import type { EngineContext } from '../../context.js';
import { NetintelError } from '../../../errors.js';
import type { MailDns } from '../mail-dns.js';
import type { HeaderBlock } from './header-block.js';

/** The ARC chain of a message, validated. */
export interface ArcVerdict {
  /** none: no ARC fields; pass; fail; temperror: a key could not be fetched; not_checked: the body was not given, or the header section is over the caps. */
  result: 'none' | 'pass' | 'fail' | 'temperror' | 'not_checked';
  /** ARC sets (instances) in the message. */
  instances: number;
  /** Each sealer, oldest first: instance, d=, s= and cv= of its ARC-Seal. */
  seals: ArcSeal[];
  /** Why it failed or could not be checked, null on pass or none. */
  reason: string | null;
}

export interface ArcSeal {
  instance: number;
  domain: string | null;
  selector: string | null;
  cv: string | null;
}

/** RSA keys shorter than this fail the chain, as DKIM keys do (RFC 8301 §3.2). */
const MIN_KEY_BITS = 1024;

/**
 * The largest header section, and the most lines in it, handed to mailauth,
 * which splits header fields in time quadratic in the lines (lib/tools.js
 * parseHeaders): 128 KiB already takes seconds. Real header sections are a
 * few kilobytes to a few tens of kilobytes.
 */
export const MAX_ARC_HEADER_BYTES = 64 * 1024;
export const MAX_ARC_HEADER_LINES = 2000;

/** Validates the message's ARC chain; `hasBody` false when only the header block was given (or an empty body). */
export async function validateArc(ctx: EngineContext, dns: MailDns, message: Buffer, block: HeaderBlock, hasBody: boolean): Promise<ArcVerdict> {
  const seals = sealsOf(block);
  const arcFields = block.fields.filter((field) => field.key === 'arc-seal' || field.key === 'arc-message-signature' || field.key === 'arc-authentication-results');
  if (arcFields.length === 0) return { result: 'none', instances: 0, seals, reason: null };
  const instances = new Set(seals.map((seal) => seal.instance)).size;
  if (!hasBody) return { result: 'not_checked', instances, seals, reason: 'only the header block was given: the ARC-Message-Signature covers the body' };
  const { bytes, lines } = headerSize(block);
  if (bytes > MAX_ARC_HEADER_BYTES || lines > MAX_ARC_HEADER_LINES) {
    return { result: 'not_checked', instances, seals, reason: `the header section (${bytes} octets, ${lines} lines) is too large for ARC validation: at most ${MAX_ARC_HEADER_BYTES} octets and ${MAX_ARC_HEADER_LINES} lines are validated` };
  }

  const arcKeys = new Set(arcFields.filter((field) => field.key !== 'arc-authentication-results').map((field) => `${tagOf(field.value, 's')}._domainkey.${tagOf(field.value, 'd')}`.toLowerCase()));
  let dnsFailure: string | null = null;
  let badKeyName: string | null = null;
  const resolver = async (name: string, type: string): Promise<string[][]> => {
    // mailauth verifies every DKIM-Signature on the way and fetches its key too; those verdicts are computed
    // elsewhere (dkim-message.ts, with its cap on signatures), so only ARC keys are looked up.
    if (type !== 'TXT' || !arcKeys.has(name.toLowerCase())) throw Object.assign(new Error(`no ${type} lookup of ${name} for ARC`), { code: 'ENOTFOUND' });
    try {
      const found = await dns.lookup(name, 'TXT');
      if (found.records.length === 0) throw Object.assign(new Error(`no TXT record at ${name}`), { code: found.status === 'nxdomain' ? 'ENOTFOUND' : 'ENODATA' });
      return found.records.map((record) => record.strings);
    } catch (error) {
      if (!(error instanceof NetintelError)) throw error;
      // A key name that is no domain name (a 64-octet label) is the sealer's error, not a DNS failure.
      if (error.code === 'invalid_input') {
        badKeyName ??= error.message;
        throw Object.assign(new Error(error.message), { code: 'ENOTFOUND' });
      }
      dnsFailure ??= error.message;
      throw Object.assign(new Error(error.message), { code: 'ETIMEOUT' });
    }
  };
  const [{ dkimVerify }, { arc }] = await Promise.all([import('mailauth/lib/dkim/verify.js'), import('mailauth/lib/arc/index.js')]);
  const options = { resolver, minBitLength: MIN_KEY_BITS, curTime: ctx.now() };
  const verified = await dkimVerify(message, options);
  const chain = (verified as unknown as { arc: Parameters<typeof arc>[0] }).arc;
  const outcome = await arc(chain, options);
  const comment = outcome.status.comment ? String(outcome.status.comment) : null;
  if (outcome.status.result === 'pass') return { result: 'pass', instances, seals, reason: null };
  if (dnsFailure !== null) return { result: 'temperror', instances, seals, reason: `a key could not be fetched: ${dnsFailure}` };
  if (badKeyName !== null) return { result: 'fail', instances, seals, reason: `a key name is not a domain name: ${badKeyName}` };
  return { result: 'fail', instances, seals, reason: comment ?? 'the chain does not validate' };
}

/** The header section's octets and lines, as mailauth would split it. */
function headerSize(block: HeaderBlock): { bytes: number; lines: number } {
  let bytes = 0;
  let lines = 0;
  for (const field of block.parts.fields) {
    bytes += field.raw.length + 2;
    for (let at = field.raw.indexOf('\n'); at !== -1; at = field.raw.indexOf('\n', at + 1)) lines++;
    lines++;
  }
  return { bytes, lines };
}

/** The ARC-Seal fields' tags as written, oldest instance first. */
function sealsOf(block: HeaderBlock): ArcSeal[] {
  const seals: ArcSeal[] = [];
  for (const field of block.fields) {
    if (field.key !== 'arc-seal') continue;
    const tag = (name: string) => tagOf(field.value, name);
    const instance = Number(tag('i'));
    seals.push({ instance: Number.isInteger(instance) && instance > 0 ? instance : 0, domain: tag('d'), selector: tag('s'), cv: tag('cv') });
  }
  return seals.sort((a, b) => a.instance - b.instance);
}

/** A tag's value in a tag=value list (RFC 6376 §3.2), white space removed, or null. */
function tagOf(value: string, name: string): string | null {
  return new RegExp(`(?:^|;)\\s*${name}\\s*=\\s*([^;]*)`, 'i').exec(value)?.[1]?.replace(/\s+/g, '') ?? null;
}
