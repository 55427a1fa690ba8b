/**
 * One naming convention for every record's keys (docs/api.md, Record keys): snake_case in
 * the OpenAPI document's schemas and in the JSON and NDJSON the end-to-end
 * corpus prints. Keys of free-form maps (return codes, bit values) are not
 * identifiers and are left out.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadPlanTable } from '../../src/keys/plans.js';
import { buildOpenApiDocument } from '../../src/server/openapi.js';
import { apiRoutes } from '../../src/server/routes/route-table.js';
import { loadOperations } from '../../src/operations/operations.js';

const SNAKE_CASE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const GOLDEN_DIR = fileURLToPath(new URL('../e2e/golden/', import.meta.url));

/** Every property name of every schema under `node`, with where it is. */
function schemaPropertyNames(node: unknown, at: string, out: Array<[string, string]> = []): Array<[string, string]> {
  if (Array.isArray(node)) node.forEach((item, index) => schemaPropertyNames(item, `${at}/${index}`, out));
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'properties' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
        // A map of member names to their schemas: each name is a key, each value a schema (a member may be called `properties`).
        for (const [name, member] of Object.entries(value)) {
          out.push([name, `${at}/properties/${name}`]);
          schemaPropertyNames(member, `${at}/properties/${name}`, out);
        }
        continue;
      }
      schemaPropertyNames(value, `${at}/${key}`, out);
    }
  }
  return out;
}

/**
 * The object keys of JSON text. The goldens put placeholders (`<ms>`) where
 * values vary, so the text is not parsed: a string followed by a colon is a key.
 */
export function jsonKeys(text: string): string[] {
  const keys: string[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '"') continue;
    let end = i + 1;
    while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
    let next = end + 1;
    while (text[next] === ' ' || text[next] === '\n' || text[next] === '\t' || text[next] === '\r') next++;
    if (text[next] === ':') keys.push(JSON.parse(text.slice(i, end + 1)) as string);
    i = end;
  }
  return keys;
}

function goldenFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? goldenFiles(join(dir, entry.name)) : [join(dir, entry.name)]));
}

/** The stdout of a golden whose command printed JSON or NDJSON, or null. */
function jsonStdout(golden: string): string | null {
  const [command = ''] = golden.split('\n', 1);
  if (!/ -f (?:json|ndjson)\b|--format (?:json|ndjson)\b/.test(command)) return null;
  const start = golden.indexOf('\n--- stdout\n');
  const end = golden.indexOf('\n--- stderr', start);
  return start < 0 ? null : golden.slice(start, end < 0 ? undefined : end);
}

describe('record keys', () => {
  it('are snake_case in every schema of the OpenAPI document', async () => {
    const plans = loadPlanTable();
    const operations = await loadOperations();
    const document = await buildOpenApiDocument({ routes: apiRoutes(plans, operations), operations, plans, version: 'test' });
    const names = schemaPropertyNames(document.components, '#/components');
    expect(names.length).toBeGreaterThan(100);
    expect(names.filter(([name]) => !SNAKE_CASE.test(name)).map(([name, at]) => `${name} at ${at}`)).toEqual([]);
  });

  it('are snake_case in the JSON and NDJSON of every end-to-end golden', () => {
    const offending: string[] = [];
    let checked = 0;
    for (const file of goldenFiles(GOLDEN_DIR)) {
      const stdout = jsonStdout(readFileSync(file, 'utf8'));
      if (stdout === null) continue;
      checked++;
      for (const key of jsonKeys(stdout)) {
        if (IDENTIFIER.test(key) && !SNAKE_CASE.test(key)) offending.push(`${relative(GOLDEN_DIR, file)}: ${key}`);
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect([...new Set(offending)]).toEqual([]);
  });

  it('reads the keys of JSON text with placeholders, not the strings among its values', () => {
    expect(jsonKeys('{"a_b": <ms>, "c": "d: e", "f": {"g\\"h": ["i", "j"]}}')).toEqual(['a_b', 'c', 'f', 'g"h']);
  });
});
