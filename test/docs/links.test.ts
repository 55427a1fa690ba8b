/**
 * Every relative link of the documentation (README.md, docs/**.md and
 * bench/README.md) leads somewhere: the file exists, and an anchor names a
 * heading of that file, slugged as GitHub does (github-slugger). Links are
 * read with a Markdown parser (marked), so code blocks and code spans do
 * not count.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';
import { Lexer, type Token, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function markdownFiles(): string[] {
  const files = [join(ROOT, 'README.md'), join(ROOT, 'bench', 'README.md')];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.md')) files.push(path);
    }
  };
  walk(join(ROOT, 'docs'));
  return files;
}

/** Every token of a document, nested ones included. */
function* walkTokens(tokens: readonly Token[]): Generator<Token> {
  for (const token of tokens) {
    yield token;
    const nested = token as { tokens?: Token[]; items?: Token[]; header?: Array<{ tokens: Token[] }>; rows?: Array<Array<{ tokens: Token[] }>> };
    if (nested.tokens) yield* walkTokens(nested.tokens);
    if (nested.items) yield* walkTokens(nested.items);
    if (nested.header) for (const cell of nested.header) yield* walkTokens(cell.tokens);
    if (nested.rows) for (const row of nested.rows) for (const cell of row) yield* walkTokens(cell.tokens);
  }
}

/** A heading's text as GitHub renders it (code spans and emphasis without their marks). */
function plainText(tokens: readonly Token[]): string {
  return tokens
    .map((token) => {
      const nested = (token as { tokens?: Token[] }).tokens;
      if (nested && nested.length > 0) return plainText(nested);
      return 'text' in token && typeof token.text === 'string' ? unescapeEntities(token.text) : '';
    })
    .join('');
}

function unescapeEntities(text: string): string {
  return text.replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'");
}

const cache = new Map<string, { anchors: Set<string>; links: string[] }>();
function parse(file: string): { anchors: Set<string>; links: string[] } {
  let parsed = cache.get(file);
  if (!parsed) {
    const tokens = new Lexer().lex(readFileSync(file, 'utf8'));
    const slugger = new GithubSlugger();
    const anchors = new Set<string>();
    const links: string[] = [];
    for (const token of walkTokens(tokens)) {
      if (token.type === 'heading') anchors.add(slugger.slug(plainText((token as Tokens.Heading).tokens)));
      if (token.type === 'link' || token.type === 'image') links.push((token as Tokens.Link).href);
    }
    parsed = { anchors, links };
    cache.set(file, parsed);
  }
  return parsed;
}

function isRelative(href: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:/i.test(href) && !href.startsWith('//');
}

describe('documentation links', () => {
  const files = markdownFiles();

  it('finds the pages (README, every command page, the reference pages)', () => {
    const names = files.map((file) => relative(ROOT, file));
    for (const page of ['docs/api.md', 'docs/data.md', 'docs/design.md', 'docs/exit-codes.md', 'docs/output-formats.md', 'docs/commands/ip.md', 'docs/commands/serve.md']) {
      expect(names).toContain(page);
    }
  });

  it.each(files.map((file) => [relative(ROOT, file), file]))('%s: every relative link points to an existing file and heading', (_name, file) => {
    const broken: string[] = [];
    for (const href of parse(file).links) {
      if (!isRelative(href)) continue;
      const [pathPart, anchor] = href.split('#', 2) as [string, string | undefined];
      const target = pathPart === '' ? file : join(dirname(file), decodeURIComponent(pathPart));
      if (!existsSync(target)) {
        broken.push(`${href}: no such file`);
        continue;
      }
      if (anchor !== undefined && anchor !== '') {
        if (!target.endsWith('.md')) {
          broken.push(`${href}: an anchor into a file that is not Markdown`);
          continue;
        }
        if (!parse(target).anchors.has(decodeURIComponent(anchor))) broken.push(`${href}: no heading with that anchor`);
      }
    }
    expect(broken).toEqual([]);
  });
});
