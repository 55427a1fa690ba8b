import { dereference, validate, type OutputUnit, type Schema } from '@cfworker/json-schema';
import { REMOTE_LIMITS } from './remote-limits.js';

/**
 * The parts of the server's OpenAPI document (src/server/openapi.ts, served
 * at /openapi.json) that the checks read: each operation's answers and the
 * record schemas they refer to (`#/components/schemas/...`).
 */
export interface PublishedApi {
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, unknown> };
}

/** What an answer must be. */
export interface ExpectedAnswer {
  /** A JSON pointer into the published document to the schema the answer must match. */
  schema: string;
  /** What the answer is, in messages: `ip record`, `asn bulk answer`. */
  name: string;
  /** Largest body accepted, decoded (REMOTE_LIMITS). */
  maxOctets: number;
}

/** Checks answers against the schemas of the published document. */
export interface AnswerCheck {
  /**
   * What `method path` answers on success: its 200 application/json schema in
   * the document, named by the record's `kind` (`vpn record`), with the
   * record cap.
   */
  ofRoute(method: 'GET' | 'POST', path: string): ExpectedAnswer;
  /** What is wrong with `value` as `expected`, or null when it matches. */
  problem(expected: ExpectedAnswer, value: unknown): string | null;
}

/** A record schema of the document by name, with the record cap: `recordAnswer('IpInfoRecord', 'ip record')`. */
export function recordAnswer(component: string, name: string): ExpectedAnswer {
  return { schema: `/components/schemas/${component}`, name, maxOctets: REMOTE_LIMITS.recordOctets };
}

/** A bulk answer schema of the document by name, with the bulk cap. */
export function bulkAnswer(component: string, name: string): ExpectedAnswer {
  return { schema: `/components/schemas/${component}`, name, maxOctets: REMOTE_LIMITS.bulkOctets };
}

const DOCUMENT_ID = 'https://netintel.invalid/openapi.json';

/** Longest account of a mismatch: its words may quote a member name the server chose. */
const MAX_PROBLEM_CHARS = 300;

/**
 * Answer checks over `document`. The validator interprets the schemas
 * (JSON Schema 2020-12, as OpenAPI 3.1 uses them) rather than compiling
 * them to code, since a run checks a few answers and compiling a large
 * record such as the e-mail report would cost more than all of its checks.
 * The check is the document as published: objects stay open to members it
 * does not name.
 */
export function createAnswerCheck(document: PublishedApi): AnswerCheck {
  // A copy: the validator marks each schema it indexes, and the record schemas are shared with the server's modules.
  const lookup = dereference({ ...structuredClone(document), $id: DOCUMENT_ID } as Schema);
  const roots = new Map<string, Schema>();
  const rootOf = (pointer: string): Schema => {
    let root = roots.get(pointer);
    if (!root) {
      root = { $ref: `${DOCUMENT_ID}#${pointer}` };
      if (lookup[root.$ref!] === undefined) throw new Error(`the published API has no schema at ${pointer}`);
      roots.set(pointer, root);
    }
    return root;
  };

  return {
    ofRoute(method, path) {
      const pointer = `/paths/${escape(path)}/${method.toLowerCase()}/responses/200/content/${escape('application/json')}/schema`;
      const schema = at(document, pointer);
      if (schema === undefined) throw new Error(`the published API has no JSON answer for ${method} ${path}`);
      const ref = (schema as { $ref?: unknown }).$ref;
      const record = typeof ref === 'string' ? at(document, ref.slice(1)) : undefined;
      const kind = (record as { properties?: { kind?: { const?: unknown } } } | undefined)?.properties?.kind?.const;
      return { schema: pointer, name: typeof kind === 'string' ? `${kind} record` : `answer to ${method} ${path}`, maxOctets: REMOTE_LIMITS.recordOctets };
    },

    problem(expected, value) {
      // The validator recurses with the data: bound the depth first, without recursing.
      if (deeperThan(value, REMOTE_LIMITS.depth)) return `nested deeper than ${REMOTE_LIMITS.depth} levels`;
      const result = validate(value, rootOf(expected.schema), '2020-12', lookup, true);
      if (result.valid) return null;
      const text = describe(result.errors);
      return text.length > MAX_PROBLEM_CHARS ? `${text.slice(0, MAX_PROBLEM_CHARS)}…` : text;
    },
  };
}

/** Errors that only say a part below them failed; the part itself says what is wrong. */
const SUMMARY_KEYWORDS = new Set(['$ref', 'properties', 'items', 'prefixItems', 'allOf', 'anyOf', 'oneOf', 'dependentSchemas', 'additionalProperties', 'contains', 'not', 'if']);

/** The most telling error of a failed validation: the first one that is not a summary, where in the answer it is. */
function describe(errors: readonly OutputUnit[]): string {
  const leaf = errors.find((error) => !SUMMARY_KEYWORDS.has(error.keyword)) ?? errors[0];
  if (!leaf) return 'does not match its schema';
  const where = leaf.instanceLocation.replace(/^#/, '');
  // A `false` schema is a member the record must not have (a free-tier IP answer's network).
  const what = leaf.keyword === 'false' ? 'must not be present.' : leaf.error;
  const said = what.replace(/\.$/, '');
  return where === '' ? said : `at ${where}: ${said}`;
}

/** True when arrays and objects in `value` nest deeper than `limit` (the value itself is level 1). */
function deeperThan(value: unknown, limit: number): boolean {
  const pending: Array<{ node: object; level: number }> = [];
  if (value !== null && typeof value === 'object') pending.push({ node: value, level: 1 });
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    if (item.level > limit) return true;
    for (const child of Array.isArray(item.node) ? item.node : Object.values(item.node)) {
      if (child !== null && typeof child === 'object') pending.push({ node: child as object, level: item.level + 1 });
    }
  }
  return false;
}

/** A path segment of a JSON pointer (RFC 6901 §3). */
function escape(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

function at(document: unknown, pointer: string): unknown {
  let node: unknown = document;
  for (const part of pointer.split('/').slice(1)) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[part.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  return node;
}
