/**
 * The shell command blocks of the README, docs/*.md and docs/commands/*.md, as a reader
 * sees them, read with a Markdown parser (marked): fenced blocks marked
 * sh, bash, shell, console or zsh, and unmarked ones whose first line is a
 * command (netintel, curl, npm, node). What a block is expected to do is
 * said in an HTML comment right before it, which GitHub does not show:
 *
 * - `<!-- not run: REASON -->`: the block is not run by the tests, for the
 *   reason given (it installs packages, names an operator's own hosts...);
 * - `<!-- exits: 0 7 -->`: each command's exit status, in order, where the
 *   text says it is not 0 (without the comment every command exits 0).
 *
 * A command is a line, or lines joined by a trailing backslash; lines of
 * comments alone are left out. A block that shows commands with their
 * output (`$ netintel ...` followed by what it printed, in a shell block or
 * a text one) is refused: the commands go in a sh block, the output in a
 * text block after it, so that the commands can be copied and run.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Lexer, type Token } from 'marked';
import { REPO_ROOT } from '../support/cli.js';

export interface ShellBlock {
  /** The file, relative to the repository (`README.md`, `docs/api.md`). */
  file: string;
  /** The section the block is in: the text of the nearest heading above it. */
  heading: string;
  /** The text of the nearest second-level heading above it (`Recipes`). */
  section: string;
  /** The commands, in order. */
  commands: string[];
  /** Why the block is not run, or null when it is. */
  notRun: string | null;
  /** The exit status of each command (0 for each without an `exits` comment). */
  exits: number[];
}

const SHELL_LANGUAGES = new Set(['sh', 'bash', 'shell', 'console', 'zsh']);
const COMMAND_START = /^(?:\$ )?(?:netintel|curl|npm|node)\b/;

/** README.md, every docs/*.md and every command page (docs/commands/*.md). */
export function documentFiles(): string[] {
  const pages = (dir: string) => readdirSync(join(REPO_ROOT, dir)).filter((name) => name.endsWith('.md')).sort().map((name) => join(dir, name));
  return ['README.md', ...pages('docs'), ...pages(join('docs', 'commands'))];
}

/** Every shell command block of the files, in document order. */
export function shellBlocks(files: readonly string[] = documentFiles()): ShellBlock[] {
  return files.flatMap((file) => shellBlocksIn(relative(REPO_ROOT, join(REPO_ROOT, file)), readFileSync(join(REPO_ROOT, file), 'utf8')));
}

/** Every shell command block of one document's Markdown text; `file` names it in errors. */
export function shellBlocksIn(file: string, text: string): ShellBlock[] {
  const blocks: ShellBlock[] = [];
  let heading = '';
  let section = '';
  const visit = (tokens: readonly Token[]): void => {
    let previous: Token | null = null;
    for (const token of tokens) {
      if (token.type === 'heading') {
        heading = token.text;
        if (token.depth === 2) section = token.text;
      }
      if (token.type === 'code' && isShell(token.lang ?? '', token.text)) blocks.push({ ...blockOf(file, heading, token.text, previous), section });
      else if (token.type === 'code' && /^\$ /.test(token.text)) throw mixed(file, heading);
      const nested = token as { tokens?: Token[]; items?: Token[] };
      if (nested.items) visit(nested.items);
      else if (nested.tokens && token.type !== 'code') visit(nested.tokens);
      if (token.type !== 'space') previous = token;
    }
  };
  visit(new Lexer().lex(text));
  return blocks;
}

function isShell(language: string, text: string): boolean {
  const lang = language.trim().split(/\s+/)[0]!.toLowerCase();
  if (SHELL_LANGUAGES.has(lang)) return true;
  return lang === '' && COMMAND_START.test(text.trimStart());
}

/** A block that shows a command with what it printed: neither can be copied nor run as it stands. */
function mixed(file: string, heading: string): Error {
  return new Error(`${file}, ${heading}: a block mixes commands ("$ ...") with their output; put the commands in a sh block and the output in a text block after it`);
}

function blockOf(file: string, heading: string, text: string, previous: Token | null): Omit<ShellBlock, 'section'> {
  const lines = text.split('\n').filter((line) => line.trim() !== '' && !line.trimStart().startsWith('#'));
  if (lines.some((line) => line.startsWith('$ ')) && lines.some((line, index) => !line.startsWith('$ ') && !lines[index - 1]?.endsWith('\\'))) throw mixed(file, heading);
  const commands = commandsOf(text);
  const comment = previous?.type === 'html' ? previous.text.trim() : '';
  const notRun = /^<!--\s*not run:\s*([\s\S]+?)\s*-->$/.exec(comment)?.[1] ?? null;
  const exitsText = /^<!--\s*exits:\s*([\d\s]+?)\s*-->$/.exec(comment)?.[1];
  if (comment !== '' && notRun === null && exitsText === undefined && /^<!--/.test(comment)) {
    throw new Error(`${file}, ${heading}: the comment before a shell block says neither "not run: REASON" nor "exits: N ...": ${comment}`);
  }
  const exits = exitsText === undefined ? commands.map(() => 0) : exitsText.split(/\s+/).map(Number);
  if (exits.length !== commands.length) throw new Error(`${file}, ${heading}: ${exits.length} exit statuses for ${commands.length} commands`);
  return { file, heading, commands, notRun, exits };
}

/** The block's commands: continued lines joined, comment-only and blank lines left out. */
function commandsOf(text: string): string[] {
  const commands: string[] = [];
  let pending = '';
  for (const line of text.split('\n')) {
    if (pending === '' && (line.trim() === '' || line.trimStart().startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    commands.push((pending + line).replace(/^\$ /, '').trim());
    pending = '';
  }
  if (pending !== '') commands.push(pending.trim());
  return commands;
}
