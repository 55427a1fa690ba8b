import { fillLine } from './help-layout.js';
import type { CliIo } from './io.js';
import { widthOf } from './terminal-width.js';

const PREFIX = 'netintel: ';

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
 * With a `width`, each `netintel: ...` line of `text` wrapped to it, the
 * lines it wraps into indented by two spaces; other lines (a server's log,
 * help) pass as they are. The messages are in lower case where they are
 * made (docs/development.md), so the text is not changed otherwise.
 */
export function fitDiagnostics(text: string, width: number | null): string {
  if (width === null || !text.includes(PREFIX)) return text;
  return text
    .split('\n')
    .map((line) => (line.startsWith(PREFIX) ? fillLine(line, width, 2).join('\n') : line))
    .join('\n');
}
