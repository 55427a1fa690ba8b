/**
 * The TypeScript files of src/ and their syntax trees (@babel/parser), for
 * the tests that hold every source to a rule (test/architecture).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from '@babel/parser';

export const SRC = new URL('../../src/', import.meta.url).pathname;

export interface SyntaxNode {
  readonly type: string;
  readonly loc?: { readonly start: { readonly line: number }; readonly end: { readonly line: number } };
  readonly [key: string]: unknown;
}

/** The .ts files below `dir`, at any depth. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

export function isNode(value: unknown): value is SyntaxNode {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

const NOT_CHILDREN = new Set(['loc', 'leadingComments', 'trailingComments', 'innerComments']);

/** The nodes directly below `node`, comments left out. */
export function childrenOf(node: SyntaxNode): SyntaxNode[] {
  return Object.entries(node).flatMap(([key, value]) => (NOT_CHILDREN.has(key) ? [] : Array.isArray(value) ? value.filter(isNode) : isNode(value) ? [value] : []));
}

/** The syntax tree of a source file (its Program node). */
export function parseSource(file: string): SyntaxNode {
  return parse(readFileSync(file, 'utf8'), { sourceType: 'module', plugins: ['typescript'] }).program as unknown as SyntaxNode;
}
