import type { SmtpExtensions } from './smtp-result.js';

/**
 * Reads the service extensions of an EHLO reply (RFC 5321 §4.1.1.1): the
 * first line greets, each further line is `KEYWORD [params]`. `AUTH=...`
 * (the pre-RFC 2554 form some servers still print) counts as AUTH.
 *
 * @param texts The text of each reply line, code and separator removed.
 */
export function parseEhloExtensions(texts: readonly string[]): SmtpExtensions {
  const extensions = emptyExtensions();
  const auth = new Set<string>();
  for (const line of texts.slice(1)) {
    const trimmed = line.trim();
    if (trimmed === '') continue;
    const [head = '', ...params] = trimmed.split(/\s+/);
    const [keywordRaw = '', inline] = head.split('=', 2);
    const keyword = keywordRaw.toUpperCase();
    if (!/^[A-Z0-9][A-Z0-9-]*$/.test(keyword)) continue;
    if (!extensions.keywords.includes(keyword)) extensions.keywords.push(keyword);
    switch (keyword) {
      case 'SIZE': {
        extensions.size = true;
        const value = params[0];
        if (value !== undefined && /^\d{1,15}$/.test(value)) extensions.size_limit_bytes = Number(value);
        break;
      }
      case 'PIPELINING':
        extensions.pipelining = true;
        break;
      case '8BITMIME':
        extensions.eight_bit_mime = true;
        break;
      case 'SMTPUTF8':
        extensions.smtp_utf8 = true;
        break;
      case 'STARTTLS':
        extensions.starttls = true;
        break;
      case 'CHUNKING':
        extensions.chunking = true;
        break;
      case 'DSN':
        extensions.dsn = true;
        break;
      case 'ENHANCEDSTATUSCODES':
        extensions.enhanced_status_codes = true;
        break;
      case 'REQUIRETLS':
        extensions.require_tls = true;
        break;
      case 'AUTH':
        for (const mechanism of [...(inline ? [inline] : []), ...params]) {
          const name = mechanism.toUpperCase();
          if (/^[A-Z0-9_-]{1,20}$/.test(name)) auth.add(name);
        }
        break;
      default:
        break;
    }
  }
  extensions.auth = [...auth];
  return extensions;
}

/** The extensions of a HELO session: none (RFC 5321 §4.1.1.1). */
export function emptyExtensions(): SmtpExtensions {
  return {
    keywords: [],
    size: false,
    size_limit_bytes: null,
    pipelining: false,
    eight_bit_mime: false,
    smtp_utf8: false,
    starttls: false,
    chunking: false,
    dsn: false,
    enhanced_status_codes: false,
    require_tls: false,
    auth: [],
  };
}

/**
 * The host name a greeting or EHLO reply starts with (RFC 5321 §4.2: the
 * server's domain or address literal first), lower case, or null when the
 * first word is neither (a bare `220 ESMTP ready`).
 */
export function leadingHostname(text: string): string | null {
  const first = text.trim().split(/\s+/, 1)[0] ?? '';
  if (/^\[(?:IPv6:[0-9a-f:.]+|[0-9.]+)\]$/i.test(first)) return first.toLowerCase();
  const name = first.replace(/\.$/, '').toLowerCase();
  if (name.length > 253 || !name.includes('.')) return null;
  const labels = name.split('.');
  return labels.every((label) => /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/.test(label)) && !/^\d+$/.test(labels[labels.length - 1]!)
    ? name
    : null;
}
