import { bulkAnswerSchema, type JsonSchema } from './json-schema.js';
import type { Operation } from './operation.js';
import { SHARED_COMPONENTS } from './record-json-schemas.js';

/**
 * The record schemas of the OpenAPI document (`components.schemas`): those
 * every answer refers to, then each operation's record, the parts only it
 * refers to, and the bulk answer of its records where the API has one;
 * `operations` are every loaded descriptor (loadOperations()), whose
 * records' schemas load here.
 */
export async function recordComponents(operations: readonly Operation[]): Promise<Record<string, JsonSchema>> {
  const components: Record<string, JsonSchema> = { ...SHARED_COMPONENTS };
  const loaded = await Promise.all(operations.map(async ({ record: { json } }) => (json ? { ...json, ...(await json.load()) } : null)));
  for (const json of loaded) {
    if (!json) continue;
    const { name, schema, parts, bulkAnswer } = json;
    components[name] = schema;
    Object.assign(components, parts);
    if (bulkAnswer) components[bulkAnswer] = bulkAnswerSchema(name);
  }
  return components;
}
