import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse } from '@babel/parser';
import { describe, expect, it } from 'vitest';

const SRC = new URL('../../src/', import.meta.url).pathname;
const MOST_LINES = 120;

interface LongFunction {
  readonly file: string;
  readonly line: number;
  readonly name: string;
  readonly lines: number;
}

interface SyntaxNode {
  readonly type: string;
  readonly loc?: { readonly start: { readonly line: number }; readonly end: { readonly line: number } };
  readonly [key: string]: unknown;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

function isNode(value: unknown): value is SyntaxNode {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

function isFunction(node: SyntaxNode): boolean {
  return /^(FunctionDeclaration|FunctionExpression|ArrowFunctionExpression|ObjectMethod|ClassMethod|ClassPrivateMethod)$/.test(node.type);
}

function keyName(key: unknown): string | undefined {
  if (!isNode(key)) return undefined;
  if (key.type === 'Identifier' || key.type === 'PrivateName') return String((key as { name?: unknown }).name ?? (key as { id?: { name?: unknown } }).id?.name);
  if (key.type === 'StringLiteral') return String((key as { value?: unknown }).value);
  return undefined;
}

/** The name a reader would look for: the function's own, or the binding, property or method it is assigned to. */
function nameOf(node: SyntaxNode, parent: SyntaxNode | undefined): string {
  const id = node['id'];
  if (isNode(id) && id.type === 'Identifier') return String(id['name']);
  const key = keyName(node['key']);
  if (key !== undefined) return key;
  if (parent?.type === 'VariableDeclarator') return keyName(parent['id']) ?? '(anonymous)';
  if (parent?.type === 'ObjectProperty' || parent?.type === 'ClassProperty') return keyName(parent['key']) ?? '(anonymous)';
  return '(anonymous)';
}

function longFunctionsIn(file: string): LongFunction[] {
  const ast = parse(readFileSync(file, 'utf8'), { sourceType: 'module', plugins: ['typescript'] });
  const found: LongFunction[] = [];
  const visit = (node: SyntaxNode, parent: SyntaxNode | undefined): void => {
    if (isFunction(node) && node.loc) {
      const lines = node.loc.end.line - node.loc.start.line + 1;
      if (lines > MOST_LINES) found.push({ file: relative(SRC, file), line: node.loc.start.line, name: nameOf(node, parent), lines });
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'loc' || key === 'leadingComments' || key === 'trailingComments' || key === 'innerComments') continue;
      if (Array.isArray(value)) for (const child of value) { if (isNode(child)) visit(child, node); }
      else if (isNode(value)) visit(value, node);
    }
  };
  visit(ast.program as unknown as SyntaxNode, undefined);
  return found;
}

describe('function length', () => {
  it(`keeps every function in src/ to ${MOST_LINES} lines or fewer`, () => {
    const offenders = sourceFiles(SRC)
      .flatMap(longFunctionsIn)
      .map(({ file, line, name, lines }) => `${file}:${line} ${name} (${lines} lines)`);
    expect(offenders).toEqual([]);
  });
});
