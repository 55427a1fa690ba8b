import { fillLine } from './help-layout.js';
import type { CliIo } from './io.js';
import { widthOf } from './terminal-width.js';

const PREFIX = 'netintel: ';
/** Words a message may start with that keep their capital: names, not the start of a sentence. */
const PROPER_NAMES = new Set(['Tor', 'Redis', 'Google', 'Microsoft', 'Node', 'Azure', 'Oracle', 'Cloudflare', 'Amazon', 'Punycode', 'OpenID']);

/**
 * The width diagnostics are fitted to: the columns of stderr when it is a
 * terminal, else COLUMNS when it is a positive integer (a script that knows
 * its width); null elsewhere (a log file or a pipe), where each diagnostic
 * stays one line for grep.
 */
export function diagnosticWidth(io: Pick<CliIo, 'stderr' | 'env'>): number | null {
  return widthOf(io.stderr, io.env);
}

/**
 * The `netintel: ...` lines of `text` in the one case of every diagnostic
 * (lower case: a capital only for a name or an acronym, whatever the part
 * of the program that wrote the message), and with a `width`, each wrapped
 * to it, the lines it wraps into indented by two spaces. Other lines (a
 * server's log, help) pass as they are.
 */
export function fitDiagnostics(text: string, width: number | null): string {
  if (!text.includes(PREFIX)) return text;
  return text
    .split('\n')
    .map((line) => {
      if (!line.startsWith(PREFIX)) return line;
      const fitted = PREFIX + lowerCaseStart(line.slice(PREFIX.length));
      return width === null ? fitted : fillLine(fitted, width, 2).join('\n');
    })
    .join('\n');
}

/** `message` with its first word in lower case when it is a capitalised word (`Cannot`), not an acronym (`DNS`) or a name (`Tor`). */
export function lowerCaseStart(message: string): string {
  const word = /^[A-Z][a-z]+(?=$|[\s:,;.'-])/.exec(message)?.[0];
  if (word === undefined || PROPER_NAMES.has(word)) return message;
  return word.toLowerCase() + message.slice(word.length);
}
