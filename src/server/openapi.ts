import { ERROR_CODES } from '../errors.js';
import type { PlanTable } from '../keys/plans.js';
import type { ApiRoute, JsonSchema } from './api-route.js';

/**
 * The OpenAPI 3.1 document of the API, built from the route table (the same
 * schemas fastify validates with), served at /openapi.json and rendered at
 * /docs.
 */
export function buildOpenApiDocument(input: { routes: readonly ApiRoute[]; plans: PlanTable; version: string }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of input.routes) {
    paths[route.url] ??= {};
    paths[route.url]![route.method.toLowerCase()] = operation(route);
  }
  paths['/api/quota'] = {
    get: {
      operationId: 'getQuota',
      summary: 'The caller\'s plan and what is left of its allowance (never charged)',
      tags: ['account'],
      security: [{}, { ApiKey: [] }],
      responses: {
        '200': { description: 'The plan, its limits and the remaining allowance.', headers: RATE_LIMIT_HEADERS, content: { 'application/json': { schema: { $ref: '#/components/schemas/Quota' } } } },
        '401': { $ref: '#/components/responses/Unauthorized' },
      },
    },
  };
  paths['/healthz'] = {
    get: {
      operationId: 'getHealth',
      summary: 'Liveness and the state of the rate-limit store',
      tags: ['operations'],
      security: [{}],
      responses: {
        '200': { description: 'Serving.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Health' } } } },
        '503': { description: 'The rate-limit store does not answer.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Health' } } } },
      },
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'netintel API',
      version: input.version,
      description:
        'IP geolocation, ASN, DNS, e-mail server tests, VPN and blacklist checks (the service specification\'s endpoints). ' +
        'The free tier needs no key; an API key (header X-API-Key) gives higher limits, premium fields and bulk processing. ' +
        'Errors are RFC 9457 problem+json documents with a stable `code`. Every answer carries X-RateLimit-* headers describing ' +
        'the daily window; the burst bucket has X-RateLimit-Burst-*. See /docs for plans and limits.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/' }],
    tags: [
      { name: 'lookups', description: 'IP, ASN and DNS lookups from local data and the server\'s resolvers.' },
      { name: 'mail', description: 'E-mail server tests and blacklist checks.' },
      { name: 'account', description: 'The caller\'s plan.' },
      { name: 'operations', description: 'Health.' },
    ],
    paths,
    components: {
      securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'A key made with `netintel keys create` (ni_<id>_<secret>).' } },
      headers: HEADER_DEFINITIONS,
      responses: problemResponses(),
      schemas: { ...SCHEMAS, Quota: quotaSchema(input.plans) },
    },
  };
}

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': { $ref: '#/components/headers/X-RateLimit-Limit' },
  'X-RateLimit-Remaining': { $ref: '#/components/headers/X-RateLimit-Remaining' },
  'X-RateLimit-Reset': { $ref: '#/components/headers/X-RateLimit-Reset' },
  'X-RateLimit-Burst-Limit': { $ref: '#/components/headers/X-RateLimit-Burst-Limit' },
  'X-RateLimit-Burst-Remaining': { $ref: '#/components/headers/X-RateLimit-Burst-Remaining' },
};

const HEADER_DEFINITIONS = {
  'X-RateLimit-Limit': { description: 'Lookups allowed per UTC day (the daily window).', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Lookups left in the daily window.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Unix time (seconds) at which the daily window resets: the next 00:00 UTC.', schema: { type: 'integer' } },
  'X-RateLimit-Burst-Limit': { description: 'Capacity of the burst bucket (the plan\'s burst).', schema: { type: 'integer' } },
  'X-RateLimit-Burst-Remaining': { description: 'Whole tokens in the burst bucket; it refills at the plan\'s per-minute rate.', schema: { type: 'integer' } },
  'X-RateLimit-RetryAfter': { description: 'On 429: seconds to wait before the same request would be accepted.', schema: { type: 'integer' } },
  'Retry-After': { description: 'On 429: the same seconds (RFC 9110).', schema: { type: 'integer' } },
  'X-Netintel-Withheld': { description: 'Free tier: the groups of the IP record left out (network, security).', schema: { type: 'string' } },
};

function problem(description: string, extraHeaders: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    description,
    headers: { ...RATE_LIMIT_HEADERS, ...extraHeaders },
    content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
  };
}

function problemResponses(): Record<string, unknown> {
  return {
    BadRequest: problem('Invalid input (code usage or invalid_input).'),
    Unauthorized: problem('API key missing (on a key-only endpoint), malformed, unknown or revoked (code unauthorized).'),
    Forbidden: problem('The plan does not include the feature or the batch size, or a probe target is refused (code forbidden).'),
    TooManyRequests: problem('Over the burst or the daily limit (code rate_limited); the body\'s details say which and when to retry.', {
      'X-RateLimit-RetryAfter': { $ref: '#/components/headers/X-RateLimit-RetryAfter' },
      'Retry-After': { $ref: '#/components/headers/Retry-After' },
    }),
    NotImplemented: problem('The endpoint\'s engine is not built yet (code not_implemented).'),
    Upstream: problem('A server the lookup needed failed or did not answer (unreachable, upstream, tls; timeout is 504).'),
  };
}

function operation(route: ApiRoute): Record<string, unknown> {
  const query = (route.querystring?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((route.querystring?.required as string[] | undefined) ?? []);
  const produces = route.produces ?? ['application/json'];
  const content: Record<string, unknown> = {};
  for (const type of produces) {
    const bare = type.split(';')[0]!;
    content[bare] = bare === 'application/json' && route.responseSchema ? { schema: route.responseSchema } : { schema: { type: 'string' } };
  }
  const responses: Record<string, unknown> = {
    '200': { description: route.responseDescription, headers: RATE_LIMIT_HEADERS, content },
    '400': { $ref: '#/components/responses/BadRequest' },
    '401': { $ref: '#/components/responses/Unauthorized' },
    '403': { $ref: '#/components/responses/Forbidden' },
    '429': { $ref: '#/components/responses/TooManyRequests' },
  };
  if (route.handler === null) responses['501'] = { $ref: '#/components/responses/NotImplemented' };
  if (route.url !== '/api/ipinfo' && route.url !== '/api/bulk') responses['502'] = { $ref: '#/components/responses/Upstream' };
  const op: Record<string, unknown> = {
    operationId: route.operationId,
    summary: route.summary,
    description: route.handler === null ? `${route.description}\n\nNot available yet: answers 501 (${route.pending}).` : route.description,
    tags: [route.url.includes('email') || route.url.includes('smtp') || route.url.includes('blacklist') ? 'mail' : 'lookups'],
    security: route.feature === null ? [{}, { ApiKey: [] }] : [{ ApiKey: [] }],
    parameters: Object.entries(query).map(([name, schema]) => ({
      name,
      in: 'query',
      required: required.has(name),
      description: schema.description,
      schema: withoutDescription(schema),
    })),
    responses,
  };
  if (route.feature !== null) op['x-netintel-plan-feature'] = route.feature;
  if (route.batched) op['x-netintel-batched'] = true;
  if (route.body) {
    const example = route.examples?.find((item) => item.body !== undefined)?.body;
    op.requestBody = { required: true, content: { 'application/json': { schema: route.body, ...(example ? { example } : {}) } } };
  }
  return op;
}

function withoutDescription(schema: JsonSchema): JsonSchema {
  const { description: _description, ...rest } = schema;
  return rest;
}

const NULLABLE_STRING = { type: ['string', 'null'] };
const NULLABLE_NUMBER = { type: ['number', 'null'] };
const NULLABLE_BOOLEAN = { type: ['boolean', 'null'] };

const SCHEMAS: Record<string, unknown> = {
  Problem: {
    type: 'object',
    description: 'RFC 9457 problem details with netintel\'s stable error `code`.',
    required: ['type', 'title', 'status', 'detail', 'code'],
    properties: {
      type: { type: 'string', description: 'URI reference of the code\'s documentation (/docs#problem-CODE).' },
      title: { type: 'string' },
      status: { type: 'integer' },
      detail: { type: 'string', description: 'What went wrong, for people.' },
      code: { type: 'string', enum: Object.keys(ERROR_CODES) },
      instance: { type: 'string', description: 'The request path.' },
      details: { type: 'object', description: 'Facts about the error (on 429: limit, plan, retryAfterSeconds, resetAt, ...).' },
    },
  },
  ItemError: {
    type: 'object',
    required: ['code', 'message'],
    properties: { code: { type: 'string', enum: Object.keys(ERROR_CODES) }, message: { type: 'string' }, details: { type: 'object' } },
  },
  QueryError: {
    type: 'object',
    required: ['query', 'error'],
    properties: { query: { type: 'string' }, error: { $ref: '#/components/schemas/ItemError' } },
  },
  IpInfoRecord: {
    type: 'object',
    description: 'SPEC\'s IP information record. null: the data has no value. Free tier: network and security are left out and `note` says so.',
    required: ['ip', 'type', 'location'],
    properties: {
      ip: { type: 'string' },
      type: { type: 'string', enum: ['ipv4', 'ipv6'] },
      location: {
        type: 'object',
        properties: {
          country: NULLABLE_STRING,
          country_code: NULLABLE_STRING,
          region: NULLABLE_STRING,
          region_code: NULLABLE_STRING,
          city: NULLABLE_STRING,
          latitude: NULLABLE_NUMBER,
          longitude: NULLABLE_NUMBER,
          timezone: NULLABLE_STRING,
          zip: NULLABLE_STRING,
        },
      },
      network: {
        type: 'object',
        properties: { isp: NULLABLE_STRING, organization: NULLABLE_STRING, asn: { type: ['integer', 'null'] }, domain: NULLABLE_STRING },
      },
      security: {
        type: 'object',
        properties: {
          is_vpn: NULLABLE_BOOLEAN,
          is_proxy: NULLABLE_BOOLEAN,
          is_tor: NULLABLE_BOOLEAN,
          is_hosting: NULLABLE_BOOLEAN,
          threat_level: { type: ['string', 'null'], enum: ['low', 'medium', 'high', null] },
        },
      },
      reserved: { ...NULLABLE_STRING, description: 'The special-purpose block of the address, or null.' },
      note: { type: 'string', description: 'Free tier only: which fields need a key.' },
    },
  },
  AsnResult: {
    type: 'object',
    required: ['kind', 'query', 'asn'],
    properties: {
      kind: { const: 'asn' },
      query: { type: 'string' },
      asn: { type: 'integer' },
      organization: NULLABLE_STRING,
      ip: NULLABLE_STRING,
      route: { ...NULLABLE_STRING, description: 'The announced CIDR holding `ip`.' },
      prefixes: { type: ['object', 'null'], properties: { ipv4: { type: 'array', items: { type: 'string' } }, ipv6: { type: 'array', items: { type: 'string' } } } },
      counts: {
        type: ['object', 'null'],
        properties: {
          ipv4Prefixes: { type: 'integer' },
          ipv6Prefixes: { type: 'integer' },
          ipv4Addresses: { type: 'integer' },
          ipv6Addresses: { type: 'string', description: 'Decimal (exceeds 2^53).' },
        },
      },
    },
  },
  DnsResult: {
    type: 'object',
    required: ['kind', 'domain', 'type', 'status', 'rcode', 'answers'],
    properties: {
      kind: { const: 'dns' },
      target: { type: 'string' },
      domain: { type: 'string', description: 'ASCII (punycode) form.' },
      domainUnicode: { type: 'string' },
      type: { type: 'string' },
      status: { type: 'string', enum: ['answer', 'nodata', 'nxdomain'] },
      rcode: { type: 'string' },
      answers: {
        type: 'array',
        items: { type: 'object', properties: { name: { type: 'string' }, type: { type: 'string' }, ttlSeconds: { type: 'integer' }, data: {} } },
      },
      resolver: { type: 'string' },
      transport: { type: 'string', enum: ['udp', 'tcp'] },
      latencyMs: { type: 'number' },
    },
  },
  Health: {
    type: 'object',
    properties: {
      status: { type: 'string', enum: ['ok', 'degraded'] },
      version: { type: 'string' },
      uptimeSeconds: { type: 'integer' },
      limits: { type: 'object', properties: { store: { type: 'string', enum: ['memory', 'redis'] }, ok: { type: 'boolean' } } },
    },
  },
};

function quotaSchema(plans: PlanTable): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      kind: { const: 'quota' },
      plan: { type: 'string', enum: Object.keys(plans.plans) },
      title: { type: 'string' },
      keyId: NULLABLE_STRING,
      client: { type: 'string', description: 'The caller\'s address as the server sees it.' },
      features: { type: 'array', items: { type: 'string' } },
      daily: { type: 'object', properties: { limit: { type: 'integer' }, remaining: { type: 'integer' }, resetAt: { type: 'string', format: 'date-time' } } },
      burst: { type: 'object', properties: { capacity: { type: 'integer' }, remaining: { type: 'integer' }, perMinute: { type: 'number' } } },
      batch: { type: 'integer' },
      bulkMax: { type: ['integer', 'null'] },
    },
  };
}
