/**
 * Every NetintelError message written in src/ starts in lower case, unless
 * its first word is an acronym or a name (docs/development.md): the text the
 * sources give `new NetintelError(code, message)`, and the text they give a
 * helper that makes the message from one of its parameters (`withContext`,
 * `invalid`, `fail`...). The messages made at run time are checked where
 * they are seen: the goldens' stderr and error records
 * (test/e2e/diagnostics.test.ts) and every JSON answer of the server tests
 * (test/server/openapi-contract.ts).
 */
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { capitalisedStart } from '../support/message-case.js';
import { childrenOf, isNode, parseSource, sourceFiles, SRC, type SyntaxNode } from '../support/source-syntax.js';

interface Site {
  readonly file: string;
  readonly line: number;
  readonly start: string;
}

function walk(node: SyntaxNode, visit: (node: SyntaxNode) => void): void {
  visit(node);
  for (const child of childrenOf(node)) walk(child, visit);
}

/** The texts a message expression starts with, where the source gives them: both arms of a choice, the left of a `+`. */
function literalStarts(node: SyntaxNode): string[] {
  if (node.type === 'StringLiteral') return [String(node['value'])];
  if (node.type === 'TemplateLiteral') {
    const head = (node['quasis'] as Array<{ value: { cooked: string } }>)[0]!.value.cooked;
    return head === '' ? [] : [head];
  }
  if (node.type === 'ConditionalExpression') return [...literalStarts(node['consequent'] as SyntaxNode), ...literalStarts(node['alternate'] as SyntaxNode)];
  if (node.type === 'LogicalExpression') return [...literalStarts(node['left'] as SyntaxNode), ...literalStarts(node['right'] as SyntaxNode)];
  if (node.type === 'BinaryExpression' && node['operator'] === '+') return literalStarts(node['left'] as SyntaxNode);
  if (node.type === 'TSAsExpression' || node.type === 'ParenthesizedExpression') return literalStarts(node['expression'] as SyntaxNode);
  return [];
}

/** The identifier a message starts with: the message itself (`message`) or the first part of a template (`${context}: ...`). */
function leadingIdentifier(node: SyntaxNode): string | undefined {
  if (node.type === 'Identifier') return String(node['name']);
  if (node.type === 'TemplateLiteral' && (node['quasis'] as Array<{ value: { cooked: string } }>)[0]!.value.cooked === '') {
    const first = (node['expressions'] as SyntaxNode[])[0];
    return first?.type === 'Identifier' ? String(first['name']) : undefined;
  }
  return undefined;
}

function isNetintelError(node: SyntaxNode): boolean {
  const callee = node['callee'] as SyntaxNode;
  return node.type === 'NewExpression' && callee.type === 'Identifier' && callee['name'] === 'NetintelError' && (node['arguments'] as unknown[]).length >= 2;
}

/** A function's name: its own, or the binding it is assigned to. */
function functionName(node: SyntaxNode, parent: SyntaxNode | undefined): string | undefined {
  const id = node['id'];
  if (isNode(id) && id.type === 'Identifier') return String(id['name']);
  if (parent?.type === 'VariableDeclarator' && isNode(parent['id']) && parent['id'].type === 'Identifier') return String(parent['id']['name']);
  return undefined;
}

const parsed = sourceFiles(SRC).map((file) => ({ file: relative(SRC, file), ast: parseSource(file) }));

/** The helpers that make a NetintelError's message from one of their parameters: name -> that parameter's position. */
function messageHelpers(): Map<string, number> {
  const helpers = new Map<string, number>();
  const visit = (node: SyntaxNode, parent: SyntaxNode | undefined): void => {
    if (/^(FunctionDeclaration|FunctionExpression|ArrowFunctionExpression)$/.test(node.type)) {
      const name = functionName(node, parent);
      const params = (node['params'] as SyntaxNode[]).map((param) => (param.type === 'Identifier' ? String(param['name']) : undefined));
      walk(node['body'] as SyntaxNode, (inner) => {
        if (name === undefined || !isNetintelError(inner)) return;
        const leading = leadingIdentifier((inner['arguments'] as SyntaxNode[])[1]!);
        const position = leading === undefined ? -1 : params.indexOf(leading);
        if (position >= 0) helpers.set(name, position);
      });
    }
    for (const child of childrenOf(node)) visit(child, node);
  };
  for (const { ast } of parsed) visit(ast, undefined);
  return helpers;
}

/** Where src/ gives a message its first words, with those words. */
function messageSites(): Site[] {
  const helpers = messageHelpers();
  const sites: Site[] = [];
  for (const { file, ast } of parsed) {
    walk(ast, (node) => {
      let message: SyntaxNode | undefined;
      if (isNetintelError(node)) message = (node['arguments'] as SyntaxNode[])[1];
      const callee = node['callee'] as SyntaxNode | undefined;
      if (node.type === 'CallExpression' && callee?.type === 'Identifier' && helpers.has(String(callee['name']))) {
        message = (node['arguments'] as SyntaxNode[])[helpers.get(String(callee['name']))!];
      }
      if (message === undefined) return;
      for (const start of literalStarts(message)) sites.push({ file, line: node.loc?.start.line ?? 0, start });
    });
  }
  return sites;
}

describe('the case of the messages written in src/', () => {
  it('starts every NetintelError message in lower case, but for an acronym or a name', () => {
    const sites = messageSites();
    // Some 300 messages are written in src/: far fewer means the scan went blind.
    expect(sites.length).toBeGreaterThan(250);
    const capitalised = sites.filter((site) => capitalisedStart(site.start) !== null).map((site) => `src/${site.file}:${site.line}: ${site.start}`);
    expect(capitalised).toEqual([]);
  });

  it('finds the messages that helpers make from their parameters', () => {
    const helpers = messageHelpers();
    expect(helpers.get('withContext')).toBe(1);
    expect(helpers.get('gunzipWithin')).toBe(2);
  });
});
