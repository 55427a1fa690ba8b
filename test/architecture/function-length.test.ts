import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { childrenOf, isNode, parseSource, sourceFiles, SRC, type SyntaxNode } from '../support/source-syntax.js';

const MOST_LINES = 120;

interface LongFunction {
  readonly file: string;
  readonly line: number;
  readonly name: string;
  readonly lines: number;
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
  const found: LongFunction[] = [];
  const visit = (node: SyntaxNode, parent: SyntaxNode | undefined): void => {
    if (isFunction(node) && node.loc) {
      const lines = node.loc.end.line - node.loc.start.line + 1;
      if (lines > MOST_LINES) found.push({ file: relative(SRC, file), line: node.loc.start.line, name: nameOf(node, parent), lines });
    }
    for (const child of childrenOf(node)) visit(child, node);
  };
  visit(parseSource(file), undefined);
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
