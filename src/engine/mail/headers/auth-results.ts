/**
 * Reads an Authentication-Results field (RFC 8601 §2.2): the authserv-id,
 * then results separated by ";", each `method[/version]=result`, an
 * optional `reason=`, and `ptype.property=value` properties. Comments
 * (RFC 5322 §3.2.2) are dropped and quoted strings kept whole. The reader
 * never throws: what it cannot read is left out, and a field with no
 * authserv-id gives none.
 */

/** One result of an Authentication-Results field. */
export interface StatedResult {
  /** Which Authentication-Results field (1: the topmost, written by the last receiver). */
  field: number;
  authserv_id: string;
  /** The method in lower case (spf, dkim, dmarc, arc, iprev, auth...). */
  method: string;
  /** The result in lower case (pass, fail, softfail, neutral, none, temperror, permerror, policy...). */
  result: string;
  reason: string | null;
  /** `ptype.property` to value, in the order written: `smtp.mailfrom`, `header.d`, `header.from`... */
  properties: Record<string, string>;
}

/** The longest field read; longer ones are cut (no receiver writes them). */
const MAX_FIELD_CHARS = 16_384;

/** The results of one Authentication-Results field's value; `field` numbers the field. */
export function readAuthResults(value: string, field: number): StatedResult[] {
  const parts = splitOutsideQuotes(withoutComments(value.slice(0, MAX_FIELD_CHARS)), ';');
  const head = words(parts[0] ?? '');
  const authservId = head[0];
  if (authservId === undefined || authservId.includes('=')) return [];
  const results: StatedResult[] = [];
  for (const part of parts.slice(1)) {
    const tokens = words(part);
    const method = /^([A-Za-z0-9_-]+)(?:\/\d+)?=([A-Za-z0-9_-]+)$/.exec(tokens[0] ?? '');
    if (!method) continue;
    const properties: Record<string, string> = {};
    let reason: string | null = null;
    for (const token of tokens.slice(1)) {
      const equals = token.indexOf('=');
      if (equals <= 0) continue;
      const key = token.slice(0, equals).toLowerCase();
      const pvalue = unquote(token.slice(equals + 1));
      if (key === 'reason') reason = pvalue;
      else if (/^[a-z0-9_-]+\.[a-z0-9_.-]+$/.test(key) && !(key in properties)) properties[key] = pvalue;
    }
    results.push({ field, authserv_id: unquote(authservId).toLowerCase(), method: method[1]!.toLowerCase(), result: method[2]!.toLowerCase(), reason, properties });
  }
  return results;
}

function withoutComments(text: string): string {
  let out = '';
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length) {
      if (depth === 0) out += c + text[i + 1];
      i++;
    } else if (quoted) {
      out += c;
      if (c === '"') quoted = false;
    } else if (c === '(') {
      depth++;
      out += depth === 1 ? ' ' : '';
    } else if (c === ')' && depth > 0) {
      depth--;
    } else if (depth === 0) {
      if (c === '"') quoted = true;
      out += c;
    }
  }
  return out;
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length) {
      current += c + text[++i];
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === separator && !quoted) {
      parts.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  parts.push(current);
  return parts;
}

/** White-space separated words, a quoted string kept whole; "a = b" joined as "a=b". */
function words(text: string): string[] {
  return splitOutsideQuotes(blanksAroundEqualsRemoved(text.replace(/\s/g, ' ')), ' ').filter((word) => word !== '');
}

/** "a = b" as "a=b", in one pass: a regular expression of blanks around "=" retries from every blank of a long run without one, in quadratic time. */
function blanksAroundEqualsRemoved(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] !== ' ') {
      out += text[i++];
      continue;
    }
    let j = i;
    while (j < text.length && text[j] === ' ') j++;
    if (text[j] !== '=' && !out.endsWith('=')) out += ' ';
    i = j;
  }
  return out;
}

function unquote(text: string): string {
  return text.length >= 2 && text.startsWith('"') && text.endsWith('"') ? text.slice(1, -1).replace(/\\(.)/g, '$1') : text;
}
