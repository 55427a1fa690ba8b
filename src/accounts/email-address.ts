import { normaliseDomain } from '../engine/dns/dns-name.js';
import { NetintelError } from '../errors.js';

/**
 * The one reading of an e-mail address for accounts: sign-up, sign-in, the
 * reset form, social login and `netintel accounts` all pass what they are
 * given through `canonicalEmail`, so that each mailbox has exactly one
 * spelling, and so one account.
 *
 * - Control, format, bidirectional, private-use, unassigned and other
 *   invisible characters are refused: a right-to-left override or a zero
 *   width space would make two accounts look like one address.
 * - The local part is a dot-atom (RFC 5322 §3.4.1) whose atext may hold
 *   UTF-8 (RFC 6531 §3.3), normalised to NFC (RFC 6532 §3.1), at most 64
 *   octets (RFC 5321 §4.5.3.1.1). Its case is kept: RFC 5321 §2.4 leaves
 *   it to the receiving host. Quoted local parts are refused: no one signs
 *   up with them, and they hide characters in plain sight.
 * - The domain is read as every domain name is (normaliseDomain: UTS #46,
 *   A-labels checked) and stored as its A-label (IDNA, RFC 5891), lower
 *   case, without a final dot: `a@MÜNCHEN.de` and `a@xn--mnchen-3ya.de`
 *   are one address. It must be a host name of at least two labels;
 *   address literals are refused.
 */
export function canonicalEmail(text: string): string {
  const trimmed = text.trim();
  const hidden = HIDDEN.exec(trimmed);
  if (hidden) {
    const point = hidden[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    throw notAnAddress(text, `it holds an invisible, control or direction character (U+${point}); type the address again`);
  }
  const at = trimmed.lastIndexOf('@');
  if (at <= 0 || at === trimmed.length - 1) throw notAnAddress(text, 'give local@domain');
  const local = trimmed.slice(0, at).normalize('NFC');
  const domain = canonicalDomain(trimmed.slice(at + 1));
  if (!DOT_ATOM.test(local) || Buffer.byteLength(local) > 64) throw notAnAddress(text, 'the part before the @ is not one an address can have');
  if (domain === null) throw notAnAddress(text, 'the part after the @ is not a domain name');
  const address = `${local}@${domain}`;
  if (Buffer.byteLength(address) > 254) throw notAnAddress(text, 'it is longer than 254 octets');
  return address;
}

/** The canonical address, or null for text that is not one (forms say so next to the field). */
export function canonicalEmailOrNull(text: string): string | null {
  try {
    return canonicalEmail(text);
  } catch {
    return null;
  }
}

/** Whether the local part needs SMTPUTF8 (RFC 6531) to be sent to: it holds more than ASCII. */
export function needsSmtpUtf8(address: string): boolean {
  return /[^\x00-\x7f]/.test(address.slice(0, address.lastIndexOf('@')));
}

/**
 * Characters no address may hold: controls (Cc), format characters such as
 * bidi overrides and zero-width spaces (Cf), line and paragraph separators,
 * surrogates, private-use and unassigned code points, other default-ignorable
 * ones (variation selectors, fillers), and spaces.
 */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}\p{White_Space}]/u;

/** RFC 5322 dot-atom with RFC 6531's UTF-8 atext: no leading, trailing or doubled dot. */
const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~\u0080-\u{10FFFF}]+(?:\.[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~\u0080-\u{10FFFF}]+)*$/u;

/** A host name label of a mail domain: letters, digits and inner hyphens (RFC 5321 §4.1.2 sub-domain). */
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** The domain as the DNS layer reads every name (UTS #46, A-labels checked, dns-name.ts), held to a mail domain's rules. */
function canonicalDomain(text: string): string | null {
  let ascii: string;
  try {
    ascii = normaliseDomain(text).ascii;
  } catch {
    return null;
  }
  const labels = ascii.split('.');
  // normaliseDomain refuses an all-digit top-level label (an IPv4 address) and names over 253 octets.
  return labels.length >= 2 && labels.every((label) => LABEL.test(label)) ? ascii : null;
}

function notAnAddress(text: string, why: string): NetintelError {
  return new NetintelError('usage', `${JSON.stringify(text)} is not an e-mail address: ${why}`, { details: { email: text } });
}
