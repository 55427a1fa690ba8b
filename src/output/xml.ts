import { XMLBuilder } from 'fast-xml-parser';

/**
 * XML layout (stable, documented in docs/output-formats.md):
 *
 *   <?xml version="1.0" encoding="UTF-8"?>
 *   <netintel kind="ip">
 *     <record> ...one element per key, nested objects as nested elements... </record>
 *     <error query="..." code="invalid_input">message</error>
 *   </netintel>
 *
 * A null value is an empty element with nil="true"; an array is a sequence
 * of <item> elements inside the key's element. Characters XML 1.0 cannot
 * carry (NUL and other C0 controls) are replaced with U+FFFD.
 */
const builder = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  format: true,
  indentBy: '  ',
  suppressEmptyNode: true,
  suppressBooleanAttributes: false,
});

// eslint-disable-next-line no-control-regex
const XML_INVALID = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g;

function clean(text: string): string {
  return text.replace(XML_INVALID, '\ufffd');
}

function toBuilderTree(value: unknown): unknown {
  if (value === null || value === undefined) return { '@_nil': 'true' };
  if (Array.isArray(value)) return { item: value.map(toBuilderTree) };
  if (typeof value === 'object') {
    // No prototype: a key from the data (a zone named `__proto__`) is an element like any other.
    const tree: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const [key, child] of Object.entries(value)) tree[key] = toBuilderTree(child);
    return tree;
  }
  return typeof value === 'string' ? clean(value) : String(value);
}

export function xmlHeader(kind: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<netintel kind="${clean(kind)}">\n`;
}

export function xmlFooter(): string {
  return '</netintel>\n';
}

function indent(fragment: string): string {
  return fragment
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => `  ${line}\n`)
    .join('');
}

export function xmlRecord(record: unknown): string {
  return indent(builder.build({ record: toBuilderTree(record) }) as string);
}

export function xmlError(query: string, code: string, message: string): string {
  return indent(builder.build({ error: { '@_query': clean(query), '@_code': code, '#text': clean(message) } }) as string);
}
