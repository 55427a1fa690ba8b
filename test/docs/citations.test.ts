/**
 * What the sources cite can be read in the repository. A comment (or a
 * message) in src/, bench/ or scripts/ cites the API contract as
 * "docs/api.md, <section>" and a design rule as "docs/design.md, <section>":
 * every `docs/<file>.md` named must exist, and a section named after it (a
 * capitalised phrase after the comma) must start with the text of one of the
 * file's headings, as must an `#anchor` slugged as GitHub does. Documents
 * that are not in the repository (SPEC.md, ARCHITECTURE.md) are not cited at
 * all, in the sources or in the documentation. RFCs are cited by number and
 * section, and are not checked here.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';
import { Lexer, type Token, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Files that still cite documents outside the repository, until their owners change them; remove an entry once its file is fixed. */
const PENDING: readonly string[] = [];

/** A citation of a document outside the repository: SPEC.md (also "SPEC's", "SPEC:") or ARCHITECTURE.md. */
const OUTSIDE = /\bSPEC\b|\bARCHITECTURE\b/;
const OUTSIDE_IN_DOCS = /\bSPEC\.md\b|\bARCHITECTURE\.md\b/;

function walk(dir: string, keep: (name: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : walk(path, keep);
    return keep(name) ? [path] : [];
  });
}

const isSource = (name: string) => /\.(ts|js|mjs|cjs)$/.test(name) && !name.endsWith('.d.ts');

function sourceFiles(): string[] {
  return ['src', 'bench', 'scripts'].flatMap((dir) => walk(join(ROOT, dir), isSource));
}

function markdownFiles(): string[] {
  return [join(ROOT, 'README.md'), join(ROOT, 'bench', 'README.md'), ...walk(join(ROOT, 'docs'), (name) => name.endsWith('.md'))];
}

/** The lines of a file that match `pattern`, as `path:line: text`. */
function matchingLines(file: string, pattern: RegExp): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((line, index) => (pattern.test(line) ? [`${relative(ROOT, file)}:${index + 1}: ${line.trim()}`] : []));
}

/** Every token of a document, nested ones included. */
function* walkTokens(tokens: readonly Token[]): Generator<Token> {
  for (const token of tokens) {
    yield token;
    const nested = token as { tokens?: Token[]; items?: Token[] };
    if (nested.tokens) yield* walkTokens(nested.tokens);
    if (nested.items) yield* walkTokens(nested.items);
  }
}

/** A heading's text as GitHub renders it (code spans and emphasis without their marks). */
function plainText(tokens: readonly Token[]): string {
  return tokens
    .map((token) => {
      const nested = (token as { tokens?: Token[] }).tokens;
      if (nested && nested.length > 0) return plainText(nested);
      return 'text' in token && typeof token.text === 'string' ? token.text.replace(/&amp;/g, '&').replace(/&#39;/g, "'").replace(/&quot;/g, '"') : '';
    })
    .join('');
}

const headingCache = new Map<string, { titles: string[]; anchors: Set<string> }>();
function headingsOf(file: string): { titles: string[]; anchors: Set<string> } {
  let headings = headingCache.get(file);
  if (!headings) {
    const slugger = new GithubSlugger();
    const titles: string[] = [];
    for (const token of walkTokens(new Lexer().lex(readFileSync(file, 'utf8')))) {
      if (token.type === 'heading') titles.push(plainText((token as Tokens.Heading).tokens).trim());
    }
    headings = { titles, anchors: new Set(titles.map((title) => slugger.slug(title))) };
    headingCache.set(file, headings);
  }
  return headings;
}

/** `text` starts with `title`, and the title ends there as a phrase (not inside a word). */
function startsWithHeading(text: string, title: string): boolean {
  return text.startsWith(title) && !/[\p{L}\p{N}_-]/u.test(text.charAt(title.length));
}

/** A source's text with comment lines joined, so that a citation wrapped over two comment lines reads as one. */
function joinedText(file: string): string {
  return readFileSync(file, 'utf8').replace(/[ \t]*\r?\n[ \t]*(?:\*(?!\/)|\/\/)?[ \t]*/g, ' ');
}

/** `docs/<file>.md`, an optional `#anchor`, and an optional ", Section" (a capitalised phrase). */
const CITATION = /\bdocs\/([\w./-]+?\.md)(?:#([\w-]+))?(?:, ([A-Z][^;:()*`"'\n]{0,120}))?/g;

/** The broken citations of docs pages in one source file. */
function brokenCitations(file: string): string[] {
  const broken: string[] = [];
  for (const match of joinedText(file).matchAll(CITATION)) {
    const [cited, page, anchor, section] = match as unknown as [string, string, string | undefined, string | undefined];
    const target = join(ROOT, 'docs', page);
    const where = `${relative(ROOT, file)}: ${cited.trim()}`;
    if (!existsSync(target)) {
      broken.push(`${where}: no such file`);
      continue;
    }
    const headings = headingsOf(target);
    if (anchor !== undefined && !headings.anchors.has(anchor)) broken.push(`${where}: no heading with that anchor`);
    if (section !== undefined && !headings.titles.some((title) => startsWithHeading(section.trim(), title))) {
      broken.push(`${where}: docs/${page} has no heading "${section.trim()}" (cite a section by its heading's exact text)`);
    }
  }
  return broken;
}

describe('citations in the sources', () => {
  const files = sourceFiles();

  it('finds the sources, and the citations they make', () => {
    expect(files.map((file) => relative(ROOT, file))).toEqual(expect.arrayContaining(['src/engine/context.ts', 'src/store/database.ts', 'src/keys/plans.ts']));
    expect(files.filter((file) => [...joinedText(file).matchAll(CITATION)].some((match) => match[3] !== undefined)).length).toBeGreaterThan(5);
  });

  it('cite no document outside the repository (SPEC.md, ARCHITECTURE.md): the contract is docs/api.md, the design rules docs/design.md', () => {
    const pending = new Set(PENDING);
    const offenders = files.filter((file) => !pending.has(relative(ROOT, file))).flatMap((file) => matchingLines(file, OUTSIDE));
    expect(offenders).toEqual([]);
  });

  it('leave in the pending list only files that still cite such a document', () => {
    const fixed = PENDING.filter((path) => !existsSync(join(ROOT, path)) || matchingLines(join(ROOT, path), OUTSIDE).length === 0);
    expect(fixed, 'fixed or gone: remove these from PENDING in test/docs/citations.test.ts').toEqual([]);
  });

  it.each(files.map((file) => [relative(ROOT, file), file]))('%s: every docs page it cites exists, with the section named', (_name, file) => {
    expect(brokenCitations(file)).toEqual([]);
  });
});

describe('citations in the documentation', () => {
  it('cite no document outside the repository (SPEC.md, ARCHITECTURE.md)', () => {
    expect(markdownFiles().flatMap((file) => matchingLines(file, OUTSIDE_IN_DOCS))).toEqual([]);
  });
});
