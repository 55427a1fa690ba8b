/**
 * Reads one Received trace field (RFC 5321 §4.4) into what a hop says:
 * who connected (the EHLO name, the name and address the receiver saw),
 * who received, with which protocol and TLS, the queue id, the recipient
 * and the time.
 *
 * Written here rather than taken from mailauth's lib/parse-received.js:
 * that one splits the field into key, value and comment tokens only; the
 * connecting address, the reverse-DNS name, the TLS version and cipher (each
 * MTA writes them in a comment or clause of its own), Exim's `helo=` and
 * `tls` words, qmail's `invoked` lines and the date are left to the caller,
 * and an unbalanced comment swallows the rest of the field. This reader
 * never throws and never loses the field: what it cannot read it says so.
 */
import { ipVersionOf } from '../../address/ip-text.js';
import { readMailDate } from './mail-date.js';

/** What one Received field says, as far as it could be read. */
export interface ReceivedFields {
  /** The EHLO/HELO name the client gave (RFC 5321 §4.4 "From" domain), or null. */
  from_helo: string | null;
  /** The client's name by reverse DNS, as the receiver wrote it in its TCP-info comment, or null. */
  from_rdns: string | null;
  /** The client's address the receiver saw, or null when none is written. */
  from_ip: string | null;
  /** The receiving host, or null. */
  by_host: string | null;
  /** The `with` protocol as written (SMTP, ESMTPS, LMTP, "Microsoft SMTP Server", HTTP...), or null. */
  protocol: string | null;
  /** The TLS version when the field states one (TLSv1.3, TLS1_2...), or null. */
  tls_version: string | null;
  /** The TLS cipher when the field states one, or null. */
  tls_cipher: string | null;
  /** The receiver's queue id (`id`), or null. */
  id: string | null;
  /** The recipient (`for`), without angle brackets, or null. */
  for: string | null;
  /** The envelope sender when the field states it (Exim's envelope-from), or null. */
  envelope_from: string | null;
  /** The time after the last ";", ISO 8601 UTC, or null when absent or unreadable. */
  timestamp: string | null;
}

/** A Received field read: its fields, and whether it was understood (`parsed`); the text is kept by the caller. */
export interface ReceivedReading {
  parsed: boolean;
  fields: ReceivedFields;
}

/** The clause keywords of RFC 5321 §4.4 (Stamp): From-domain, By-domain, Via, With, ID, For. */
const KEYWORDS = new Set(['from', 'by', 'via', 'with', 'id', 'for']);

/** The longest field value read; longer ones (no MTA writes them) are cut, the caller still keeps the whole text. */
const MAX_VALUE_CHARS = 8192;

type Token = { kind: 'word'; text: string } | { kind: 'comment'; text: string };

/**
 * Reads the value of a Received field (the text after "Received:",
 * unfolded or not).
 */
export function readReceived(value: string): ReceivedReading {
  const text = value.length > MAX_VALUE_CHARS ? value.slice(0, MAX_VALUE_CHARS) : value;
  const fields = emptyFields();
  const semicolon = lastSemicolonOutsideComments(text);
  const trace = semicolon === -1 ? text : text.slice(0, semicolon);
  if (semicolon !== -1) fields.timestamp = readMailDate(text.slice(semicolon + 1));

  const clauses = clausesOf(tokenize(trace));
  for (const clause of clauses) readClause(clause, fields);
  const qmailLocal = clauses.some((clause) => clause.key === '' && clause.comments.some((comment) => /^qmail \d+ invoked /i.test(comment)));
  const parsed = (fields.by_host !== null || fields.from_helo !== null || fields.from_ip !== null || qmailLocal) && clauses.every((clause) => clause.key !== '' || clause.words.length === 0);
  return { parsed: parsed && fields.timestamp !== null, fields };
}

function emptyFields(): ReceivedFields {
  return { from_helo: null, from_rdns: null, from_ip: null, by_host: null, protocol: null, tls_version: null, tls_cipher: null, id: null, for: null, envelope_from: null, timestamp: null };
}

/** The last ";" not inside a comment: the date follows it (a ";" may sit in a comment, as in Exim's). */
function lastSemicolonOutsideComments(text: string): number {
  let depth = 0;
  let last = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === '(') depth++;
    else if (c === ')' && depth > 0) depth--;
    else if (c === ';' && depth === 0) last = i;
  }
  return last;
}

/** Words and comments (nested, RFC 5322 §3.2.2); an unclosed comment runs to the end. */
function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    // Any white space, as the word rule below stops at any: a form feed or a no-break space must not make an empty word.
    if (/\s/.test(c)) {
      i++;
    } else if (c === '(') {
      let depth = 1;
      let j = i + 1;
      let inner = '';
      while (j < text.length && depth > 0) {
        const d = text[j]!;
        if (d === '\\' && j + 1 < text.length) {
          inner += text[j + 1];
          j += 2;
          continue;
        }
        if (d === '(') depth++;
        else if (d === ')') depth--;
        if (depth > 0) inner += d;
        j++;
      }
      tokens.push({ kind: 'comment', text: inner.replace(/\s+/g, ' ').trim() });
      i = j;
    } else {
      let j = i;
      // A word runs to white space or a comment; brackets keep an IPv6 literal or a "[addr]:port" whole.
      while (j < text.length && !/[\s(]/.test(text[j]!)) j++;
      tokens.push({ kind: 'word', text: text.slice(i, j) });
      i = j;
    }
  }
  return tokens;
}

interface Clause {
  /** The keyword in lower case, or "" for what comes before the first one. */
  key: string;
  words: string[];
  comments: string[];
}

function clausesOf(tokens: readonly Token[]): Clause[] {
  const clauses: Clause[] = [{ key: '', words: [], comments: [] }];
  for (const token of tokens) {
    const current = clauses[clauses.length - 1]!;
    if (token.kind === 'comment') {
      current.comments.push(token.text);
    } else if (KEYWORDS.has(token.text.toLowerCase())) {
      clauses.push({ key: token.text.toLowerCase(), words: [], comments: [] });
    } else {
      current.words.push(token.text);
    }
  }
  return clauses;
}

function readClause(clause: Clause, fields: ReceivedFields): void {
  switch (clause.key) {
    case 'from':
      readFrom(clause, fields);
      break;
    case 'by':
      fields.by_host = clause.words[0] ?? fields.by_host;
      for (const comment of clause.comments) readTlsComment(comment, fields);
      break;
    case 'with':
      readWith(clause, fields);
      break;
    case 'id':
      fields.id = clause.words[0] ?? fields.id;
      for (const comment of clause.comments) readTlsComment(comment, fields);
      break;
    case 'for':
      fields.for = clause.words[0] === undefined ? fields.for : clause.words[0].replace(/^<|>$/g, '') || null;
      break;
    case '':
      // qmail: "from unknown (HELO name) (192.0.2.1)" comes as a from clause; "(qmail 123 invoked ...)" stands alone.
      for (const comment of clause.comments) readEnvelopeFrom(comment, fields);
      break;
    default:
      break;
  }
  for (const comment of clause.comments) readEnvelopeFrom(comment, fields);
}

/**
 * The From clause: the EHLO name (or an address literal), then the
 * TCP-info comment, which each MTA writes its own way:
 * Postfix and Sendmail `(rdns [ip])`, Exim `([ip]:port helo=name)`,
 * Microsoft 365 `(ip)`, qmail `(HELO name) (ip)`, Gmail `(rdns. [ip])`.
 */
function readFrom(clause: Clause, fields: ReceivedFields): void {
  const first = clause.words[0];
  if (first !== undefined) {
    const literal = addressLiteral(first);
    if (literal !== null) fields.from_ip = literal;
    else if (first.toLowerCase() !== 'unknown') fields.from_helo = first;
  }
  for (const comment of clause.comments) {
    const helo = /(?:^|\s)helo[= ]([^\s)]+)/i.exec(comment);
    if (helo) fields.from_helo ??= helo[1]!;
    const words = comment.split(/\s+/);
    const addresses = words.flatMap((word) => addressLiteral(word.replace(/[,;]$/, '')) ?? []);
    if (addresses.length > 0) fields.from_ip ??= addresses[0]!;
    // The reverse-DNS name is the first word of a TCP-info comment that also gives the address, "(rdns [ip])";
    // Sendmail writes the ident user before it (user@rdns).
    const name = (words[0] ?? '').replace(/^[^@]*@/, '').replace(/\.$/, '');
    if (fields.from_rdns === null && addresses.length > 0 && addressLiteral(words[0]!) === null && isHostName(name) && !/^(helo|unknown)$/i.test(name)) {
      fields.from_rdns = name;
    }
    readTlsComment(comment, fields);
  }
}

/** The With clause: the protocol (one word, or Microsoft's "Microsoft SMTP Server"), Exim's `(TLS1.3) tls CIPHER`, Microsoft's `(version=..., cipher=...)`. */
function readWith(clause: Clause, fields: ReceivedFields): void {
  const words = [...clause.words];
  if (words.length === 0) return;
  if (/^microsoft$/i.test(words[0]!)) {
    const end = words.findIndex((word) => /^server$/i.test(word));
    fields.protocol = words.slice(0, end === -1 ? words.length : end + 1).join(' ');
  } else {
    fields.protocol = words[0]!;
  }
  const tls = words.findIndex((word) => word.toLowerCase() === 'tls');
  if (tls !== -1 && words[tls + 1] !== undefined) fields.tls_cipher ??= words[tls + 1]!;
  for (const comment of clause.comments) {
    if (/^TLS ?v?1[._]?\d$/i.test(comment) || /^SSLv3$/i.test(comment)) fields.tls_version ??= comment;
    readTlsComment(comment, fields);
  }
}

/**
 * The TLS facts of a comment: Postfix `using TLSv1.3 with cipher X (...)`,
 * Sendmail `version=TLSv1.3 cipher=X bits=256 verify=NOT`, Microsoft
 * `version=TLS1_2, cipher=X`, Exim `(TLS1.3)`.
 */
function readTlsComment(comment: string, fields: ReceivedFields): void {
  const using = /\busing (TLSv?[\d.]+|SSLv3)(?: with cipher ([A-Za-z0-9_-]+))?/i.exec(comment);
  if (using) {
    fields.tls_version ??= using[1]!;
    if (using[2] !== undefined) fields.tls_cipher ??= using[2];
  }
  const version = /\bversion=([A-Za-z0-9_.]+)/i.exec(comment);
  if (version && /tls|ssl/i.test(version[1]!)) fields.tls_version ??= version[1]!;
  const cipher = /\bcipher=([A-Za-z0-9_-]+)/i.exec(comment);
  if (cipher) fields.tls_cipher ??= cipher[1]!;
}

function readEnvelopeFrom(comment: string, fields: ReceivedFields): void {
  const envelope = /^envelope-from <?([^\s<>]*)>?$/i.exec(comment);
  if (envelope) fields.envelope_from ??= envelope[1]!;
}

/** An address written as `[192.0.2.1]`, `[IPv6:2001:db8::1]`, `[192.0.2.1]:25`, or bare; null for anything else. */
function addressLiteral(word: string): string | null {
  const bracketed = /^\[(?:IPv6:)?([0-9A-Fa-f:.]+)\](?::\d+)?$/i.exec(word);
  const candidate = bracketed ? bracketed[1]! : word;
  return ipVersionOf(candidate) === 0 ? null : candidate.toLowerCase();
}

/** A host name as a TCP-info comment gives it (one label, such as localhost, included). */
function isHostName(text: string): boolean {
  return text.length <= 253 && /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(text) && ipVersionOf(text) === 0;
}
