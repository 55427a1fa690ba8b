/** A JSON Schema object (draft 2020-12 as OpenAPI 3.1 uses it; fastify validates with Ajv). */
export type JsonSchema = Record<string, unknown>;

/**
 * Builders of the JSON Schemas of records (the OpenAPI document's
 * components): `record<T>()` takes exactly the keys of T (a key missing or
 * extra is a compile error), and every key is required, as the engine
 * promises (every key always present).
 */

export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
export const str: JsonSchema = { type: 'string' };
export const int: JsonSchema = { type: 'integer' };
export const num: JsonSchema = { type: 'number' };
export const bool: JsonSchema = { type: 'boolean' };
export const strings: JsonSchema = { type: 'array', items: str };

/** `schema` with an example value (JSON Schema 2020-12 `examples`), shown in the docs' example answers. */
export function eg(schema: JsonSchema, example: unknown): JsonSchema {
  return { ...schema, examples: [example] };
}

/** `schema` or null. */
export function nullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === 'string' && Object.keys(schema).every((key) => key === 'type' || key === 'description' || key === 'examples')) {
    return { ...schema, type: [schema.type, 'null'] };
  }
  if (Array.isArray(schema.enum)) return { ...schema, type: [...new Set([...(Array.isArray(schema.type) ? schema.type : [schema.type ?? 'string']), 'null'])], enum: [...schema.enum, null] };
  return { anyOf: [schema, { type: 'null' }] };
}

export function described(schema: JsonSchema, description: string): JsonSchema {
  return { ...schema, description };
}

export function oneOfStrings<T extends string>(values: readonly T[]): JsonSchema {
  return { type: 'string', enum: [...values] };
}

export const arrayOf = (items: JsonSchema): JsonSchema => ({ type: 'array', items });

/**
 * An object schema with exactly the keys of T, all required unless
 * `options.required` names the ones that are.
 */
export function record<T>(properties: { [K in keyof T]-?: JsonSchema }, options: { description?: string; required?: ReadonlyArray<keyof T & string> } = {}): JsonSchema {
  return {
    type: 'object',
    ...(options.description ? { description: options.description } : {}),
    required: [...(options.required ?? Object.keys(properties))],
    properties,
  };
}

/** A bulk answer of records of one kind: one item per query in order, and counts. */
export function bulkAnswerSchema(recordName: string): JsonSchema {
  return {
    type: 'object',
    required: ['results', 'summary'],
    properties: {
      results: {
        type: 'array',
        description: 'One item per query, in the order sent.',
        items: {
          oneOf: [
            { type: 'object', required: ['query', 'record'], properties: { query: { type: 'string' }, record: ref(recordName) } },
            { type: 'object', required: ['query', 'error'], properties: { query: { type: 'string' }, error: ref('ItemError') } },
          ],
        },
      },
      summary: {
        type: 'object',
        required: ['total', 'succeeded', 'failed', 'errors'],
        properties: {
          total: { type: 'integer' },
          succeeded: { type: 'integer' },
          failed: { type: 'integer' },
          errors: { type: 'object', additionalProperties: { type: 'integer' }, description: 'Failed items by error code.' },
        },
      },
    },
  };
}
