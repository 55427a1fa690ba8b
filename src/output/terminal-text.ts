/**
 * Text from input or the network made safe to show on a terminal. A PTR
 * name, a TXT record, an SMTP banner or a line of a target list may carry
 * ESC, BEL or an OSC sequence that retitles the window, rewrites what is
 * on screen or plants a hyperlink; bidirectional overrides reorder what the
 * reader sees (CVE-2021-42574, "Trojan Source"). The human views (the table
 * format, messages on stderr) show such characters as visible escapes
 * (`\x1b`, `\u202e`); the machine formats (json, ndjson, csv, xml) keep the
 * data exactly.
 */

// C0 controls but LF, DEL, C1 controls, and the bidi embeddings, overrides and isolates.
// eslint-disable-next-line no-control-regex
const UNSAFE_KEEPING_NEWLINES = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Readonly<Record<string, string>> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** One control character as its visible escape: `\t`, `\x1b`, `\u202e`. */
export function visibleEscape(char: string): string {
  const named = NAMED[char];
  if (named !== undefined) return named;
  const code = char.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * `text` with every control character (C0, DEL, C1) and bidi control
 * (U+202A-202E, U+2066-2069) written as a visible escape. With
 * `keepNewlines`, LF stays (a table cell of several lines); otherwise the
 * result is one line.
 */
export function escapeTerminalText(text: string, options: { keepNewlines?: boolean } = {}): string {
  const pattern = options.keepNewlines === true ? UNSAFE_KEEPING_NEWLINES : UNSAFE;
  pattern.lastIndex = 0;
  // Most text has nothing to escape: test first, so it is returned as it is.
  if (!pattern.test(text)) return text;
  pattern.lastIndex = 0;
  return text.replace(pattern, visibleEscape);
}

/** True when `text` holds a character escapeTerminalText would escape (LF allowed with `keepNewlines`). */
export function hasTerminalControls(text: string, options: { keepNewlines?: boolean } = {}): boolean {
  const pattern = options.keepNewlines === true ? UNSAFE_KEEPING_NEWLINES : UNSAFE;
  pattern.lastIndex = 0;
  return pattern.test(text);
}
