import type { PlanTable } from '../keys/plans.js';
import type { ApiRoute, JsonSchema } from './api-route.js';
import { recordComponents } from '../operations/api-components.js';
import type { Operation } from '../operations/operation.js';
import { quotaSchema } from './quota-schema.js';

/**
 * The OpenAPI 3.1 document of the API, built from the route table (the same
 * query and body schemas fastify validates with) and the record schemas of
 * the operations' records (src/operations, written against the engine's result
 * types), served at /openapi.json and rendered at /docs. The contract test
 * (test/server/openapi-contract.ts) validates every answer the tests get
 * against it. `operations` are every loaded descriptor (loadOperations()),
 * whose records are the document's schemas.
 */
export async function buildOpenApiDocument(input: { routes: readonly ApiRoute[]; operations: readonly Operation[]; plans: PlanTable; version: string }): Promise<Record<string, unknown>> {
  const records = await recordComponents(input.operations);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of input.routes) {
    paths[route.url] ??= {};
    paths[route.url]![route.method.toLowerCase()] = operation(route);
  }
  paths['/api/quota'] = {
    get: {
      operationId: 'getQuota',
      summary: 'The caller\'s plan and what is left of its allowance (never charged)',
      description: 'Looks at the caller\'s limits without charging them; works with or without a key.',
      tags: ['account'],
      security: [{}, { ApiKey: [] }],
      responses: {
        '200': jsonResponse('The plan, its limits and the remaining allowance.', ref('Quota')),
        '401': responseRef('Unauthorized'),
        '403': responseRef('Forbidden'),
        '405': responseRef('MethodNotAllowed'),
        '408': responseRef('RequestTimeout'),
        '431': responseRef('RequestHeaderFieldsTooLarge'),
        '500': responseRef('InternalError'),
        '502': responseRef('Upstream'),
      },
    },
  };
  paths['/healthz'] = {
    get: {
      operationId: 'getHealth',
      summary: 'Liveness and the state of the rate-limit store',
      description: 'Never charged and never refused for a key: for load balancers and probes.',
      tags: ['operations'],
      security: [{}],
      responses: {
        '200': jsonResponse('Serving.', ref('Health')),
        '405': responseRef('MethodNotAllowed'),
        '408': responseRef('RequestTimeout'),
        '431': responseRef('RequestHeaderFieldsTooLarge'),
        '503': { description: 'The rate-limit store does not answer.', headers: rateLimitHeadersIfKnown(), content: { 'application/json': { schema: ref('Health') } } },
      },
    },
  };
  paths['/openapi.json'] = {
    get: {
      operationId: 'getOpenApi',
      summary: 'This document',
      description: 'The OpenAPI 3.1 document of the API.',
      tags: ['operations'],
      security: [{}],
      responses: {
        '200': jsonResponse('The OpenAPI document.', {
          type: 'object',
          required: ['openapi', 'info', 'paths'],
          properties: { openapi: { type: 'string' }, info: { type: 'object' }, paths: { type: 'object' } },
          additionalProperties: true,
        }),
        '405': responseRef('MethodNotAllowed'),
        '408': responseRef('RequestTimeout'),
        '431': responseRef('RequestHeaderFieldsTooLarge'),
      },
    },
  };
  paths['/docs'] = {
    get: {
      operationId: 'getDocs',
      summary: 'This document as a readable page',
      description: 'One self-contained HTML page: the endpoints, the plans of this server, the error codes.',
      tags: ['operations'],
      security: [{}],
      responses: {
        '200': { description: 'The docs page.', headers: RATE_LIMIT_HEADERS, content: { 'text/html': { schema: { type: 'string' } } } },
        '405': responseRef('MethodNotAllowed'),
        '408': responseRef('RequestTimeout'),
        '431': responseRef('RequestHeaderFieldsTooLarge'),
      },
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'netintel API',
      version: input.version,
      description:
        'IP geolocation, ASN, DNS, e-mail server tests, VPN and blacklist checks (the API\'s endpoints, as docs/api.md lists them). ' +
        'The free tier needs no key; an API key (header X-API-Key) gives higher limits, premium fields and bulk processing. ' +
        'Errors are RFC 9457 problem+json documents with a stable `code`. Every answer carries X-RateLimit-* headers describing ' +
        'the daily window; the burst bucket has X-RateLimit-Burst-*. A path the API does not have answers 404, a method a path ' +
        'does not have answers 405 with Allow; on any path, a request that cannot be parsed (a malformed percent-encoding) answers 400, ' +
        'a request too slow to arrive 408, a body over the size limit 413 ' +
        'and a request line or headers over theirs 431; all with a problem document. A query parameter an operation does not ' +
        'declare is refused with 400, never ignored. See /docs for plans and limits.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/' }],
    tags: [
      { name: 'lookups', description: 'IP, ASN and DNS lookups from local data and the server\'s resolvers.' },
      { name: 'mail', description: 'E-mail server tests and blacklist checks.' },
      { name: 'account', description: 'The caller\'s plan.' },
      { name: 'operations', description: 'Health and this document.' },
    ],
    paths,
    components: {
      securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'A key made with `netintel keys create` (ni_<id>_<secret>).' } },
      headers: HEADER_DEFINITIONS,
      responses: problemResponses(input.routes.some((route) => route.handler === null)),
      schemas: {
        ...records,
        Health: HEALTH,
        Quota: quotaSchema(Object.keys(input.plans.plans)),
      },
    },
  };
}

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const responseRef = (name: string): JsonSchema => ({ $ref: `#/components/responses/${name}` });

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': { $ref: '#/components/headers/X-RateLimit-Limit' },
  'X-RateLimit-Remaining': { $ref: '#/components/headers/X-RateLimit-Remaining' },
  'X-RateLimit-Reset': { $ref: '#/components/headers/X-RateLimit-Reset' },
  'X-RateLimit-Burst-Limit': { $ref: '#/components/headers/X-RateLimit-Burst-Limit' },
  'X-RateLimit-Burst-Remaining': { $ref: '#/components/headers/X-RateLimit-Burst-Remaining' },
};

// The rate-limit headers are on every response (docs/api.md, Plans and limits).
const HEADER_DEFINITIONS = {
  'X-RateLimit-Limit': { description: 'Lookups allowed per UTC day (the daily window).', required: true, schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Remaining': { description: 'Lookups left in the daily window.', required: true, schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Reset': { description: 'Unix time (seconds) at which the daily window resets: the next 00:00 UTC.', required: true, schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Burst-Limit': { description: 'Capacity of the burst bucket (the plan\'s burst).', required: true, schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Burst-Remaining': { description: 'Whole tokens in the burst bucket; it refills at the plan\'s per-minute rate.', required: true, schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-RetryAfter': { description: 'On 429: seconds to wait before the same request would be accepted.', required: true, schema: { type: 'integer', minimum: 1 } },
  'Retry-After': { description: 'On 429: the same seconds (RFC 9110 §10.2.3).', required: true, schema: { type: 'integer', minimum: 1 } },
  'WWW-Authenticate': { description: 'On 401: the challenge (RFC 9110 §11.6.1): ApiKey realm="netintel", header="X-API-Key".', required: true, schema: { type: 'string' } },
  Allow: { description: 'On 405: the methods the path has (RFC 9110 §10.2.1).', schema: { type: 'string' } },
  'X-Netintel-Withheld': { description: 'Free tier: the groups of the IP record left out (network, security).', schema: { type: 'string' } },
};

/** The rate-limit headers where the limits' store may be what failed (502, a degraded /healthz): sent when it answered. */
function rateLimitHeadersIfKnown(): Record<string, unknown> {
  return Object.fromEntries(
    Object.keys(RATE_LIMIT_HEADERS).map((name) => {
      const { required: _required, ...header } = HEADER_DEFINITIONS[name as keyof typeof HEADER_DEFINITIONS] as Record<string, unknown>;
      return [name, { ...header, description: `${String(header.description)} Absent when the rate-limit store did not answer.` }];
    }),
  );
}

function jsonResponse(description: string, schema: JsonSchema, extraHeaders: Record<string, unknown> = {}): Record<string, unknown> {
  return { description, headers: { ...RATE_LIMIT_HEADERS, ...extraHeaders }, content: { 'application/json': { schema } } };
}

function problem(description: string, extraHeaders: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    description,
    headers: { ...RATE_LIMIT_HEADERS, ...extraHeaders },
    content: { 'application/problem+json': { schema: ref('Problem') } },
  };
}

function problemResponses(pending: boolean): Record<string, unknown> {
  const responses: Record<string, unknown> = {
    BadRequest: problem('Invalid input (code usage or invalid_input): a parameter, its combination with others, or the body.'),
    Unauthorized: problem('API key missing (on a key-only endpoint), malformed, unknown or revoked (code unauthorized).', {
      'WWW-Authenticate': { $ref: '#/components/headers/WWW-Authenticate' },
    }),
    Forbidden: problem('The plan does not include the feature or the batch size, or a probe target is refused (code forbidden).'),
    NotFound: problem('No entry for the object named and no answer can be formed (code not_found); also any path the API does not have.'),
    MethodNotAllowed: problem('The path does not have this method (code usage); Allow lists the ones it has.', { Allow: { $ref: '#/components/headers/Allow' } }),
    RequestTimeout: problem('The request was not received in time: headers or body too slow (code timeout); the connection is closed.'),
    PayloadTooLarge: problem('The request body is over the server\'s size limit (code usage; details.limit_bytes).'),
    RequestHeaderFieldsTooLarge: problem('The request line or the headers are over the server\'s size limit (code usage); on any path.'),
    UnsupportedMediaType: problem('The request body is not application/json (code usage).'),
    TooManyRequests: problem('Over the burst or the daily limit (code rate_limited); the body\'s details say which and when to retry.', {
      'X-RateLimit-RetryAfter': { $ref: '#/components/headers/X-RateLimit-RetryAfter' },
      'Retry-After': { $ref: '#/components/headers/Retry-After' },
    }),
    InternalError: problem('A bug in the server (code internal); it has been logged.'),
    Upstream: {
      ...problem('A server the lookup needed, or the shared rate-limit store, failed or did not answer in a usable way (code unreachable, upstream or tls).'),
      headers: rateLimitHeadersIfKnown(),
    },
    DataUnavailable: problem('A local dataset the lookup needs is missing or invalid (code data_unavailable).'),
    Timeout: problem('No answer before the deadline: a peer\'s or the request\'s own (code timeout).'),
  };
  if (pending) responses.NotImplemented = problem('The endpoint\'s engine is not built yet (code not_implemented).');
  return responses;
}

/** The statuses every API operation can answer, and the ones some add. */
function responsesOf(route: ApiRoute): Record<string, unknown> {
  const produces = route.produces ?? ['application/json'];
  const content: Record<string, unknown> = {};
  for (const type of produces) {
    const bare = type.split(';')[0]!.trim();
    content[bare] = bare === 'application/json' ? { schema: route.responseSchema ?? {} } : { schema: { type: 'string' } };
  }
  const example = route.examples?.find((item) => item.response !== undefined)?.response;
  if (example !== undefined && content['application/json']) (content['application/json'] as Record<string, unknown>).example = example;
  const extraHeaders = route.url === '/api/ipinfo' ? { 'X-Netintel-Withheld': { $ref: '#/components/headers/X-Netintel-Withheld' } } : {};
  const responses: Record<string, unknown> = {
    '200': { description: route.responseDescription, headers: { ...RATE_LIMIT_HEADERS, ...extraHeaders }, content },
    '400': responseRef('BadRequest'),
    '401': responseRef('Unauthorized'),
    '403': responseRef('Forbidden'),
    '404': responseRef('NotFound'),
    '405': responseRef('MethodNotAllowed'),
    '408': responseRef('RequestTimeout'),
  };
  if (route.body) {
    responses['413'] = responseRef('PayloadTooLarge');
    responses['415'] = responseRef('UnsupportedMediaType');
  }
  responses['431'] = responseRef('RequestHeaderFieldsTooLarge');
  responses['429'] = responseRef('TooManyRequests');
  responses['500'] = responseRef('InternalError');
  if (route.handler === null) responses['501'] = responseRef('NotImplemented');
  // Every API route: the limits' shared store (Redis) can be unreachable too.
  responses['502'] = responseRef('Upstream');
  responses['503'] = responseRef('DataUnavailable');
  if (route.network) responses['504'] = responseRef('Timeout');
  return responses;
}

/**
 * The query parameters: one per name; or, where the route has rules across
 * them, the whole query as one form-exploded object parameter whose schema
 * carries the rules (OpenAPI 3.1 §4.8.12.4: `style: form`, `explode: true`
 * spreads an object's members into name=value pairs).
 */
function parametersOf(route: ApiRoute): Record<string, unknown>[] {
  const query = (route.querystring?.properties ?? {}) as Record<string, JsonSchema>;
  const required = (route.querystring?.required as string[] | undefined) ?? [];
  if (route.queryRules) {
    return [
      {
        name: 'query',
        in: 'query',
        style: 'form',
        explode: true,
        required: false,
        description: 'The query parameters, with the rules that hold between them.',
        schema: { type: 'object', properties: query, ...(required.length > 0 ? { required } : {}), additionalProperties: false, ...route.queryRules },
      },
    ];
  }
  return Object.entries(query).map(([name, schema]) => ({
    name,
    in: 'query',
    required: required.includes(name),
    ...(schema.description ? { description: schema.description } : {}),
    schema: withoutDescription(schema),
  }));
}

function operation(route: ApiRoute): Record<string, unknown> {
  const op: Record<string, unknown> = {
    operationId: route.operationId,
    summary: route.summary,
    description: route.handler === null ? `${route.description}\n\nNot available yet: answers 501 (${route.pending}).` : route.description,
    tags: [route.group ?? 'lookups'],
    security: route.feature === null ? [{}, { ApiKey: [] }] : [{ ApiKey: [] }],
    parameters: parametersOf(route),
    responses: responsesOf(route),
  };
  const samples = codeSamples(route);
  if (samples.length > 0) op['x-codeSamples'] = samples;
  if (route.feature !== null) op['x-netintel-plan-feature'] = route.feature;
  if (route.batched) op['x-netintel-batched'] = true;
  if (route.body) {
    const example = route.examples?.find((item) => item.body !== undefined)?.body;
    op.requestBody = { required: true, content: { 'application/json': { schema: route.body, ...(example ? { example } : {}) } } };
  }
  return op;
}

/** curl lines of the route's examples (Redocly's x-codeSamples); NETINTEL_SERVER holds the server's address, as for the CLI. */
function codeSamples(route: ApiRoute): Array<{ lang: string; label: string; source: string }> {
  const key = route.feature === null ? '' : "-H 'X-API-Key: ni_…' ";
  return (route.examples ?? []).map((example) => ({
    lang: 'Shell',
    label: 'curl',
    source:
      example.body === undefined
        ? `curl ${key}"$NETINTEL_SERVER${route.url}${example.query ?? ''}"`
        : `curl ${key}-H 'content-type: application/json' -d '${JSON.stringify(example.body)}' "$NETINTEL_SERVER${route.url}${example.query ?? ''}"`,
  }));
}

function withoutDescription(schema: JsonSchema): JsonSchema {
  const { description: _description, ...rest } = schema;
  return rest;
}

const HEALTH: JsonSchema = {
  type: 'object',
  required: ['status', 'version', 'uptime_seconds', 'limits'],
  properties: {
    status: { type: 'string', enum: ['ok', 'degraded'] },
    version: { type: 'string' },
    uptime_seconds: { type: 'integer' },
    limits: { type: 'object', required: ['store', 'ok'], properties: { store: { type: 'string', enum: ['memory', 'redis'] }, ok: { type: 'boolean' } } },
  },
};
