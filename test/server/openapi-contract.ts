/**
 * The OpenAPI document as a contract: given a request and the answer the
 * server gave, says what in the answer the document does not allow. The
 * status must be documented for the operation (a path the API does not
 * have: 404; a method the path does not have: 404 or 405; OPTIONS: 204), the media type
 * must be one of the response's, and the body must validate against its
 * schema (Ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses it).
 *
 * Validation is stricter than the published document: every object schema
 * that lists its properties is closed (additionalProperties: false), so a
 * field the server sends but the document does not name fails here.
 *
 * Beyond the document, every error message a JSON answer carries (a
 * problem's detail, a bulk item's or a check's error) starts in lower case
 * unless it starts with an acronym or a name (docs/development.md).
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { capitalisedErrorMessages } from '../support/message-case.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

type Json = Record<string, any>;

export interface ContractExchange {
  method: string;
  /** The path with its query string. */
  url: string;
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  /** The body as received; undefined when not seen (a stream). */
  body: string | Buffer | undefined;
}

export interface OpenApiContract {
  document: Json;
  /** What is wrong with the answer; empty when the document allows it. */
  check(exchange: ContractExchange): string[];
  /** The operation a request hits, or null. */
  operationOf(method: string, path: string): { path: string; method: string; operation: Json } | null;
  /**
   * Whether a query breaks the operation's documented rules between
   * parameters (the form-exploded `query` object), null when the operation
   * has no such rules.
   */
  queryBreaksRules(method: string, url: string): boolean | null;
}

/** Closes every object schema that lists its properties (a copy; the document is left as served). */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Json = {};
  for (const [key, value] of Object.entries(schema)) copy[key] = key === 'example' || key === 'examples' ? value : closed(value);
  if (copy.properties && copy.additionalProperties === undefined && copy.type === 'object') copy.additionalProperties = false;
  return copy;
}

function pointer(document: Json, ref: string): Json {
  return ref
    .slice(2)
    .split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce((node: Json, part) => node[part], document);
}

function mediaTypeOf(header: ContractExchange['headers'][string]): string | null {
  if (header === undefined) return null;
  return String(header).split(';')[0]!.trim().toLowerCase();
}

export function createOpenApiContract(document: Json): OpenApiContract {
  const strict = closed(document) as Json;
  // The problem document is extensible (RFC 9457 §3.2): extension members stay allowed.
  delete strict.components.schemas.Problem.additionalProperties;
  strict.$id = 'https://netintel.invalid/openapi.json';
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema(strict);
  const validators = new Map<string, ValidateFunction>();
  const validatorAt = (jsonPointer: string): ValidateFunction => {
    let validate = validators.get(jsonPointer);
    if (!validate) {
      validate = ajv.compile({ $ref: `${strict.$id}#${jsonPointer}` });
      validators.set(jsonPointer, validate);
    }
    return validate;
  };
  const escape = (part: string) => part.replaceAll('~', '~0').replaceAll('/', '~1');
  const queryAjv = new Ajv2020({ strict: false, coerceTypes: true });

  const operationOf: OpenApiContract['operationOf'] = (method, path) => {
    const item = document.paths[path] as Json | undefined;
    if (!item) return null;
    const lower = method.toLowerCase();
    // HEAD is GET without the body (RFC 9110 §9.3.2).
    const operation = item[lower] ?? (lower === 'head' ? item.get : undefined);
    return operation ? { path, method: item[lower] ? lower : 'get', operation } : null;
  };

  /** The response object for a status and its JSON pointer, following one $ref. */
  const responseAt = (path: string, method: string, status: number): { response: Json; at: string } | null => {
    const at = `/paths/${escape(path)}/${method}/responses/${status}`;
    const response = document.paths[path][method].responses[String(status)] as Json | undefined;
    if (!response) return null;
    if (typeof response.$ref === 'string') return { response: pointer(document, response.$ref), at: response.$ref.slice(1) };
    return { response, at };
  };

  const checkBody = (exchange: ContractExchange, response: Json, at: string): string[] => {
    const problems: string[] = [];
    const content = response.content as Json | undefined;
    const bodyText = exchange.body === undefined ? undefined : Buffer.isBuffer(exchange.body) ? exchange.body.toString('utf8') : exchange.body;
    if (!content) {
      if (bodyText) problems.push(`a body where the document has none (${at})`);
      return problems;
    }
    // A HEAD answer has the GET answer's headers and no body.
    if (exchange.method.toUpperCase() === 'HEAD') return problems;
    const type = mediaTypeOf(exchange.headers['content-type']);
    if (type === null || !content[type]) {
      problems.push(`content-type ${String(exchange.headers['content-type'])} is not one of ${Object.keys(content).join(', ')} (${at})`);
      return problems;
    }
    if (bodyText === undefined) return problems;
    if (type === 'application/json' || type.endsWith('+json')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(bodyText);
      } catch {
        return [`the ${type} body is not JSON: ${bodyText.slice(0, 200)}`];
      }
      const validate = validatorAt(`${at}/content/${escape(type)}/schema`);
      if (!validate(parsed)) {
        problems.push(
          `the body does not match ${at} (${type}): ${ajv.errorsText(validate.errors, { separator: '; ' }).slice(0, 1500)}; body: ${bodyText.slice(0, 500)}`,
        );
      }
      if (type === 'application/problem+json' && (parsed as Json)?.status !== exchange.status) {
        problems.push(`the problem's status ${(parsed as Json)?.status} is not the answer's ${exchange.status}`);
      }
      for (const message of capitalisedErrorMessages(parsed)) problems.push(`an error message starts with a capitalised word: ${message.slice(0, 200)}`);
    }
    return problems;
  };

  const checkHeaders = (exchange: ContractExchange, response: Json): string[] => {
    const problems: string[] = [];
    for (const [name, header] of Object.entries((response.headers ?? {}) as Json)) {
      const value = exchange.headers[name.toLowerCase()];
      const definition = typeof header.$ref === 'string' ? pointer(document, header.$ref) : header;
      if (value === undefined) {
        if (definition.required === true) problems.push(`header ${name} is missing`);
        continue;
      }
      if (definition.schema?.type === 'integer' && !/^\d+$/.test(String(value))) problems.push(`header ${name}: ${String(value)} is not an integer`);
    }
    return problems;
  };

  const BEFORE_ROUTING: Record<number, string> = { 400: 'BadRequest', 408: 'RequestTimeout', 413: 'PayloadTooLarge', 431: 'RequestHeaderFieldsTooLarge' };
  const beforeRouting = (status: number): { response: Json; at: string } | undefined => {
    const name = BEFORE_ROUTING[status];
    return name === undefined ? undefined : { response: pointer(document, `#/components/responses/${name}`), at: `/components/responses/${name}` };
  };

  return {
    document,
    operationOf,
    check(exchange) {
      const path = exchange.url.split('?')[0]!;
      const found = operationOf(exchange.method, path);
      if (!found) {
        const known = document.paths[path] !== undefined;
        // The document's answers for any request: a path it does not have, a method a path does not have, and the
        // refusals that come before routing (slow request, body or headers over their limits).
        const anywhere: Record<number, string> = { ...BEFORE_ROUTING, 404: 'NotFound' };
        if (known) anywhere[405] = 'MethodNotAllowed';
        // OPTIONS on a path the API has, or on the server as a whole: 204 with Allow, no body (RFC 9110 §9.3.7).
        if (exchange.method === 'OPTIONS' && (known || path === '*') && exchange.status === 204) {
          return exchange.headers.allow === undefined ? [`OPTIONS ${path} -> 204: no Allow header`] : exchange.body !== undefined && exchange.body.length > 0 ? [`OPTIONS ${path} -> 204: a body`] : [];
        }
        const name = anywhere[exchange.status];
        if (!name) return [`${exchange.method} ${path}: status ${exchange.status}, expected ${Object.keys(anywhere).join(', ')} (no such operation)`];
        return checkBody(exchange, pointer(document, `#/components/responses/${name}`), `/components/responses/${name}`).map(
          (problem) => `${exchange.method} ${exchange.url.slice(0, 300)} -> ${exchange.status}: ${problem}`,
        );
      }
      // A request that breaks the documented rules between parameters is never answered as a success.
      if (exchange.status < 300 && this.queryBreaksRules(exchange.method, exchange.url) === true) {
        return [`${exchange.method} ${exchange.url.slice(0, 300)} -> ${exchange.status}: the query breaks the operation's documented parameter rules, yet succeeded`];
      }
      // The refusals that come before routing can answer any request, a documented operation's too.
      const response = responseAt(found.path, found.method, exchange.status) ?? beforeRouting(exchange.status);
      if (!response) {
        return [`${exchange.method} ${path}: status ${exchange.status} is not documented (documented: ${Object.keys(found.operation.responses).join(', ')})`];
      }
      return [...checkBody(exchange, response.response, response.at), ...checkHeaders(exchange, response.response)].map(
        (problem) => `${exchange.method} ${exchange.url.slice(0, 300)} -> ${exchange.status}: ${problem}`,
      );
    },
    queryBreaksRules(method, url) {
      const found = operationOf(method, url.split('?')[0]!);
      const parameter = (found?.operation.parameters as Json[] | undefined)?.find((item) => item.style === 'form' && item.explode === true && item.schema?.type === 'object');
      if (!parameter) return null;
      const query: Json = {};
      for (const [name, value] of new URLSearchParams(url.split('?')[1] ?? '')) query[name] = value;
      // Only the rules between parameters: each parameter's own checks are the route's and answer 400 anyway.
      const { properties: _properties, additionalProperties: _additional, ...rules } = parameter.schema as Json;
      return !queryAjv.validate(rules, query);
    },
  };
}

const contracts = new Map<string, OpenApiContract>();

/** The contract of a served /openapi.json (compiled once per distinct document). */
export function contractOf(documentText: string): OpenApiContract {
  let contract = contracts.get(documentText);
  if (!contract) {
    contract = createOpenApiContract(JSON.parse(documentText) as Json);
    contracts.set(documentText, contract);
  }
  return contract;
}
