import type { Command, HelpConfiguration, OutputConfiguration } from 'commander';
import { displayWidth } from '../output/human/display-width.js';
import type { CliIo } from './io.js';
import { terminalWidth } from './terminal-width.js';

/** Narrower than this, a description is not given a column of its own beside its term: it wraps under the term. */
const MIN_DESCRIPTION_COLUMNS = 20;

/**
 * Help fitted to the terminal: commander lays out the terms and their
 * descriptions at the width of the terminal (its columns, else COLUMNS,
 * else 80, as the human views), and every text it writes (the usage line,
 * the text added after the options: examples, notes) is wrapped to that
 * width on its way out. A word longer than the width (a URL) is never
 * broken.
 */
export function fittedHelp(io: Pick<CliIo, 'stdout' | 'env'>): { help: HelpConfiguration; output: Pick<OutputConfiguration, 'getOutHelpWidth' | 'getErrHelpWidth'> } {
  const width = () => terminalWidth(io);
  return {
    help: { minWidthToWrap: MIN_DESCRIPTION_COLUMNS },
    output: { getOutHelpWidth: width, getErrHelpWidth: width },
  };
}

/**
 * Text wrapped to `width` columns. A paragraph at the margin (lines without
 * indentation, one after the other, a heading that ends with a colon
 * standing apart) that does not fit is filled again as one, and so is an
 * indented list whose lines end with a comma. Another indented line that
 * does not fit breaks at spaces, its continuation lines indented to where
 * its description starts (the text after the first run of two spaces, as
 * in `  --port <n>   port to listen on`, past a `# ` that starts it) when
 * that leaves room, else four columns deeper than the line. Words are
 * never broken: one that does not fit where its line starts starts
 * further left.
 */
export function wrapHelpText(text: string, width: number): string {
  const out: string[] = [];
  let paragraph: string[] = [];
  const endParagraph = () => {
    if (paragraph.length === 0) return;
    if (paragraph.some((line) => displayWidth(line) > width)) {
      const indent = /^ */.exec(paragraph[0]!)![0];
      out.push(...fillLine(indent + paragraph.map((line) => line.trim()).join(' '), width, indent.length));
    } else out.push(...paragraph);
    paragraph = [];
  };
  for (const line of text.split('\n')) {
    const previous = paragraph.at(-1);
    const sameIndent = previous !== undefined && /^ */.exec(previous)![0] === /^ */.exec(line)![0];
    // Lines of one paragraph: at the margin, or a list going on after a comma.
    const goesOn = previous !== undefined && sameIndent && line.trim() !== '' && (/^\S/.test(line) ? !previous.endsWith(':') && !line.endsWith(':') : previous.endsWith(','));
    if (!goesOn) endParagraph();
    if (/^\S/.test(line) || (line.trim() !== '' && line.trimEnd().endsWith(','))) {
      paragraph.push(line);
      continue;
    }
    if (goesOn) {
      paragraph.push(line);
      endParagraph();
      continue;
    }
    out.push(...(displayWidth(line) <= width ? [line] : wrapLine(line, width)));
  }
  endParagraph();
  return out.join('\n');
}

function wrapLine(line: string, width: number): string[] {
  const indent = /^ */.exec(line)![0].length;
  const column = /^ *\S.*? {2,}(# )?(?=\S)/.exec(line)?.[0].length;
  const hanging = column !== undefined && column <= width - MIN_DESCRIPTION_COLUMNS ? column : indent === 0 ? 0 : Math.min(indent + 4, Math.floor(width / 2));
  return fillLine(line, width, hanging);
}

/**
 * A line broken at spaces into lines of `width` columns, those after the
 * first indented by `hanging`; a word that does not fit where its line
 * starts starts further left, one wider than the width stays whole.
 */
export function fillLine(line: string, width: number, hanging: number): string[] {
  const indent = /^ */.exec(line)![0].length;
  const lines: string[] = [];
  let current = '';
  let currentWidth = 0;
  let lineIndent = indent;
  // Each word with the spaces before it, kept while the line goes on (the two spaces after a term).
  for (const [chunk, spaces, word] of line.slice(indent).matchAll(/( *)(\S+)/g) as Iterable<[string, string, string]>) {
    const wordWidth = displayWidth(word);
    if (current !== '' && lineIndent + currentWidth + displayWidth(chunk) > width) {
      lines.push(' '.repeat(lineIndent) + current);
      current = '';
      currentWidth = 0;
      lineIndent = hanging;
    }
    if (current === '') {
      // A word that does not fit where the line starts starts further left (a URL under its option); one wider than the line stays whole.
      lineIndent = Math.max(0, Math.min(lineIndent, width - wordWidth));
      current = word;
      currentWidth = wordWidth;
    } else {
      current += chunk;
      currentWidth += spaces.length + wordWidth;
    }
  }
  lines.push(' '.repeat(lineIndent) + current);
  return lines;
}

/**
 * What a bare `netintel` prints: the usage, each command on one line with
 * the start of its description, and where the whole help is.
 */
export function shortUsage(program: Command, width: number): string {
  const commands = program.commands.filter((command) => command.name() !== 'help');
  const nameWidth = Math.max(...commands.map((command) => command.name().length));
  const lines = commands.map((command) => {
    const name = `  ${command.name().padEnd(nameWidth)}  `;
    return `${name}${fitted(summaryOf(command.description()), width - name.length)}`;
  });
  return [
    `Usage: ${program.name()} <command> [arguments] [options]`,
    '',
    'Commands:',
    ...lines,
    '',
    wrapHelpText(`Run "${program.name()} help <command>" or "${program.name()} <command> --help" for a command's options and examples, "${program.name()} --help" for everything.`, width),
    '',
  ].join('\n');
}

/** The first clause of a description, up to its first colon, semicolon or parenthesis, in lower case as the others (`DNS` stays). */
function summaryOf(description: string): string {
  const clause = description.split(/[:;(]/)[0]!.trim();
  return /^[A-Z][a-z]/.test(clause) ? clause[0]!.toLowerCase() + clause.slice(1) : clause;
}

/** `text` cut at a word to fit `columns`, an ellipsis marking the cut. */
function fitted(text: string, columns: number): string {
  if (displayWidth(text) <= columns) return text;
  const words = text.split(' ');
  let kept = '';
  for (const word of words) {
    const next = kept === '' ? word : `${kept} ${word}`;
    if (displayWidth(next) + 1 > columns) break;
    kept = next;
  }
  return `${kept}…`;
}
