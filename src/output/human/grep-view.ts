import { Chalk } from 'chalk';
import { escapeTerminalText } from '../terminal-text.js';

/** How grep's lines are drawn: colours when allowed. */
export interface GrepLineStyle {
  color: boolean;
}

export interface GrepLinePrefix {
  source: string | null;
  lineNumber: number | null;
}

/**
 * grep's output lines: `file:line:` then the whole line with its addresses
 * marked, or each address alone. Control characters of the text (tabs
 * included) are written as visible escapes, as in every human view: a log
 * line may hold terminal escapes an attacker wrote. Colours as GNU grep's
 * defaults: file name magenta, line number green, separators cyan, matches
 * bold red.
 */
export function createGrepLineWriter(style: GrepLineStyle): {
  prefix(prefix: GrepLinePrefix): string;
  line(line: string, matches: ReadonlyArray<{ start: number; text: string }>): string;
  /** An address alone (-o): the scanner's matches hold no control character. */
  address(text: string): string;
} {
  const chalk = new Chalk({ level: style.color ? 1 : 0 });
  const text = (part: string) => escapeTerminalText(part);
  return {
    prefix: ({ source, lineNumber }) =>
      (source === null ? '' : `${chalk.magenta(text(source))}${chalk.cyan(':')}`) + (lineNumber === null ? '' : `${chalk.green(String(lineNumber))}${chalk.cyan(':')}`),
    line: (line, matches) => {
      if (!style.color) return text(line);
      let out = '';
      let at = 0;
      for (const match of matches) {
        out += text(line.slice(at, match.start)) + chalk.red.bold(match.text);
        at = match.start + match.text.length;
      }
      return out + text(line.slice(at));
    },
    address: style.color ? (address) => chalk.red.bold(address) : (address) => address,
  };
}
