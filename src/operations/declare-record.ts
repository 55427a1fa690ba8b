import type { HumanView } from '../output/human/view.js';
import type { RecordSchema } from '../output/record-schema.js';
import type { JsonSchema } from './json-schema.js';
import type { RecordDeclaration } from './operation.js';

/** What a record declared from its JSON Schema says besides the schema. */
export interface RecordFromSchema {
  /** The OpenAPI component's name (`PtrResult`). */
  name: string;
  /** The record's JSON Schema: its columns are read from it. */
  schema: JsonSchema;
  /** The record's kind (its `kind` member). */
  kind: string;
  /** Columns always kept, whatever `--fields` selects (the record's identity). */
  identity: readonly string[];
  /** The compact column set of the horizontal table (many records); default every column. */
  tableColumns?: readonly string[];
  /** What `-f value` prints without `--fields`; default the identity. */
  mainValue?: readonly string[];
  /** Text views only: a column shown differently from its value (see RecordSchema.presentColumn). */
  presentColumn?: (record: unknown, column: string) => unknown;
  /** The data licence's credit shown under human views (RecordSchema.credit). */
  credit?: string;
  view?: () => Promise<HumanView>;
}

/**
 * A record declared once, by its JSON Schema: the columns of CSV, tables
 * and `--fields` are the schema's members as dot paths (an object's members
 * are a group; an array, a scalar or `kind` is one column, `kind` left out),
 * the OpenAPI component is the schema itself.
 */
export function recordFromSchema(record: RecordFromSchema): RecordDeclaration {
  const groups: Record<string, string[]> = {};
  const columns = leaves(record.schema, '', groups).filter((column) => column !== 'kind');
  const columnSchema: RecordSchema = {
    kind: record.kind,
    columns,
    groups,
    identity: record.identity,
    tableColumns: record.tableColumns ?? columns,
    ...(record.mainValue ? { mainValue: record.mainValue } : {}),
    ...(record.presentColumn ? { presentColumn: record.presentColumn } : {}),
    ...(record.credit ? { credit: record.credit } : {}),
  };
  const json = { name: record.name, load: async () => ({ schema: record.schema }) };
  return { columns: columnSchema, json, ...(record.view ? { view: record.view } : {}) };
}

function leaves(schema: JsonSchema, prefix: string, groups: Record<string, string[]>): string[] {
  // A member that is an object or null (`nullable(record(...))`) has the object's columns, empty when it is null.
  const object = Array.isArray(schema.anyOf) ? (schema.anyOf as JsonSchema[]).find((each) => each.type === 'object') : schema;
  const properties = object?.type === 'object' ? (object.properties as Record<string, JsonSchema> | undefined) : undefined;
  if (properties === undefined) return prefix === '' ? [] : [prefix];
  const paths = Object.entries(properties).flatMap(([key, member]) => leaves(member, prefix === '' ? key : `${prefix}.${key}`, groups));
  if (prefix !== '' && !prefix.includes('.')) groups[prefix] = paths;
  return paths;
}
