/**
 * The tag=value list of DKIM (RFC 6376 §3.2), the one syntax of both key
 * records (§3.6.1) and DKIM-Signature header fields (§3.5). Both are read
 * here so that the key check and the message verifier cannot read the same
 * text two ways.
 */

export interface DkimTag {
  name: string;
  /** The value with the folding whitespace around it removed; inner whitespace kept. */
  value: string;
}

/** A part of the text that breaks the tag-list grammar; any problem makes the whole tag-list invalid (§3.2). */
export interface DkimTagListProblem {
  code: 'syntax' | 'duplicate_tag';
  message: string;
  /** The tag concerned, when there is one. */
  tag: string | null;
}

export interface DkimTagList {
  /** The well-formed tags in text order, each name once (a repeated tag is a problem, not a second entry). */
  tags: DkimTag[];
  problems: DkimTagListProblem[];
}

export interface DkimTagListOptions {
  /**
   * Accept octets above 0x7e in values: RFC 8616 §4 lets the i= of a
   * DKIM-Signature hold a UTF-8 local part. Key records stay 7-bit.
   */
  eightBit?: boolean;
}

/** RFC 6376 §3.2: tag-name = ALPHA *ALNUMPUNC. */
const TAG_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/**
 * Reads a tag-list. Folding whitespace (SP, HTAB, CR, LF) is allowed
 * around names, around `=` and between the parts of a value (§3.2, with
 * erratum 5070 allowing an empty value); a final `;` is allowed; an empty
 * tag between two `;` is not. Tag names are case-sensitive. Never throws;
 * linear in the length of the text.
 */
export function parseDkimTagList(text: string, options: DkimTagListOptions = {}): DkimTagList {
  const problems: DkimTagListProblem[] = [];
  const tags: DkimTag[] = [];
  const seen = new Set<string>();
  const parts = text.split(';');
  for (let index = 0; index < parts.length; index++) {
    const part = parts[index]!;
    if (trimFws(part) === '') {
      // An empty last element is the optional trailing ";"; an empty one elsewhere is ";;".
      if (index !== parts.length - 1) problems.push({ code: 'syntax', message: `an empty tag between two ";" (tag ${index + 1})`, tag: null });
      continue;
    }
    const equals = part.indexOf('=');
    if (equals === -1) {
      problems.push({ code: 'syntax', message: `"${shorten(trimFws(part))}" is not a tag=value pair`, tag: null });
      continue;
    }
    const name = trimFws(part.slice(0, equals));
    const value = trimFws(part.slice(equals + 1));
    if (!TAG_NAME.test(name)) {
      problems.push({ code: 'syntax', message: `"${shorten(name)}" is not a valid tag name`, tag: null });
      continue;
    }
    if (!isTagValue(value, options.eightBit === true)) {
      problems.push({ code: 'syntax', message: `the value of ${name}= holds characters a tag value cannot`, tag: name });
      continue;
    }
    if (seen.has(name)) {
      problems.push({ code: 'duplicate_tag', message: `${name}= appears more than once, which makes the whole tag list invalid`, tag: name });
      continue;
    }
    seen.add(name);
    tags.push({ name, value });
  }
  return { tags, problems };
}

/** The value of the first tag called `name`, or null. */
export function dkimTagValue(list: DkimTagList, name: string): string | null {
  return list.tags.find((item) => item.name === name)?.value ?? null;
}

/** True for the folding whitespace characters of a tag-list: SP, HTAB, CR, LF. */
export function isFws(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0d || code === 0x0a;
}

/** `text` without folding whitespace at either end (JavaScript's trim() would take other spaces too). */
export function trimFws(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isFws(text.charCodeAt(start))) start++;
  while (end > start && isFws(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/** `text` with every folding whitespace character removed (base64 values, §2.4). */
export function removeFws(text: string): string {
  return text.replace(/[ \t\r\n]+/g, '');
}

/**
 * RFC 6376 §3.2: tag-value = [ tval *( 1*(WSP / FWS) tval ) ], tval =
 * 1*VALCHAR, VALCHAR = %x21-3A / %x3C-7E. The value arrives trimmed, so
 * any whitespace left is between two tvals. A character scan, not a regular
 * expression, so that a long value costs one pass.
 */
function isTagValue(value: string, eightBit: boolean): boolean {
  for (let index = 0; index < value.length; index++) {
    const code = value.charCodeAt(index);
    if ((code >= 0x21 && code <= 0x3a) || (code >= 0x3c && code <= 0x7e) || isFws(code)) continue;
    if (eightBit && code >= 0x80 && code <= 0xff) continue;
    return false;
  }
  return true;
}

function shorten(text: string): string {
  const printable = text.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > 40 ? `${printable.slice(0, 37)}...` : printable;
}
