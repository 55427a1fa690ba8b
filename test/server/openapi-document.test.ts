import { createConfig, lintFromString } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import { loadPlanTable } from '../../src/keys/plans.js';
import { buildOpenApiDocument } from '../../src/server/openapi.js';
import { recordComponents } from '../../src/operations/api-components.js';
import { loadOperations } from '../../src/operations/operations.js';

const operations = await loadOperations();
const RECORD_SCHEMAS = await recordComponents(operations);
import { apiRoutes } from '../../src/server/routes/route-table.js';
import { ASN_SCHEMA } from '../../src/output/schemas/asn-schema.js';
import { BLACKLIST_SCHEMA } from '../../src/output/schemas/blacklist-schema.js';
import { DNS_SCHEMA } from '../../src/output/schemas/dns-schema.js';
import { EMAIL_SCHEMA } from '../../src/output/schemas/email-schema.js';
import { IP_SCHEMA } from '../../src/output/schemas/ip-schema.js';
import { SMTP_SCHEMA } from '../../src/output/schemas/smtp-schema.js';
import { VPN_SCHEMA } from '../../src/output/schemas/vpn-schema.js';
import type { RecordSchema } from '../../src/output/record-schema.js';
import { createOpenApiContract } from './openapi-contract.js';

const plans = loadPlanTable();
const document = await buildOpenApiDocument({ routes: apiRoutes(plans, operations), operations, plans, version: '1.2.3' });

describe('the OpenAPI document', () => {
  it('passes Redocly\'s recommended rules without an error', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(document, null, 2), absoluteRef: '/openapi.json', config });
    const format = (items: typeof problems) => items.map((item) => `${item.severity} ${item.ruleId}: ${item.message} at ${item.location[0]?.pointer ?? ''}`);
    const warnings = problems.filter((item) => item.severity === 'warn');
    if (warnings.length > 0) console.warn(`Redocly warnings:\n${format(warnings).join('\n')}`);
    expect(format(problems.filter((item) => item.severity === 'error'))).toEqual([]);
  });

  it('gives every response of every API operation a JSON schema and an RFC 9457 body for every error status', () => {
    const paths = document.paths as Record<string, Record<string, { responses: Record<string, { $ref?: string; content?: Record<string, { schema: unknown }> }> }>>;
    for (const [path, methods] of Object.entries(paths).filter(([name]) => name.startsWith('/api/'))) {
      for (const [method, operation] of Object.entries(methods)) {
        const ok = operation.responses['200']!;
        expect(ok.content, `${method} ${path} 200`).toBeDefined();
        for (const [type, media] of Object.entries(ok.content!)) {
          if (type === 'application/json') expect(media.schema, `${method} ${path}`).not.toEqual({ type: 'string' });
        }
        for (const status of Object.keys(operation.responses).filter((code) => Number(code) >= 400)) {
          const response = operation.responses[status]!;
          expect(response.$ref ?? '', `${method} ${path} ${status}`).toMatch(/^#\/components\/responses\//);
        }
      }
    }
    const responses = (document.components as { responses: Record<string, { content: Record<string, unknown> }> }).responses;
    for (const response of Object.values(responses)) expect(Object.keys(response.content)).toEqual(['application/problem+json']);
  });

  it('documents 413 and 415 for the bodies, 502 and 504 for the probes, 429 and 401 everywhere on the API', () => {
    const paths = document.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>;
    for (const route of apiRoutes(plans, operations)) {
      const statuses = Object.keys(paths[route.url]![route.method.toLowerCase()]!.responses);
      expect(statuses).toEqual(expect.arrayContaining(['200', '400', '401', '403', '404', '405', '429', '500', '502', '503']));
      if (route.body) expect(statuses).toEqual(expect.arrayContaining(['413', '415']));
      if (route.network) expect(statuses).toContain('504');
    }
  });

  // The output layer's columns and the API's schemas describe the same records.
  const kinds: Array<[string, RecordSchema, string]> = [
    ['asn', ASN_SCHEMA, 'AsnResult'],
    ['blacklist', BLACKLIST_SCHEMA, 'BlacklistResult'],
    ['dns', DNS_SCHEMA, 'DnsResult'],
    ['email', EMAIL_SCHEMA, 'EmailReport'],
    ['ip', IP_SCHEMA, 'IpInfoRecord'],
    ['smtp', SMTP_SCHEMA, 'SmtpResult'],
    ['vpn', VPN_SCHEMA, 'VpnResult'],
  ];
  it.each(kinds)('names every column of the %s output schema in its JSON schema', (_kind, schema, name) => {
    const missing = schema.columns.filter((column) => {
      let node = RECORD_SCHEMAS[name] as Record<string, any> | undefined;
      for (const key of column.split('.')) {
        while (node && !node.properties && (node.anyOf || node.$ref)) {
          node = node.$ref ? (RECORD_SCHEMAS[String(node.$ref).split('/').pop()!] as Record<string, any>) : node.anyOf.find((item: Record<string, any>) => item.properties || item.$ref);
        }
        node = node?.properties?.[key];
        if (!node) return true;
      }
      return false;
    });
    expect(missing).toEqual([]);
  });

  it('has a contract checker that refuses what the document does not allow', () => {
    const contract = createOpenApiContract(JSON.parse(JSON.stringify(document)));
    const json = { 'content-type': 'application/json; charset=utf-8' };
    expect(contract.check({ method: 'GET', url: '/api/asn-lookup?asn=1', status: 200, headers: json, body: '{"kind":"asn"}' })[0]).toMatch(/does not match/);
    expect(contract.check({ method: 'GET', url: '/api/asn-lookup?asn=1', status: 418, headers: json, body: '{}' })[0]).toMatch(/not documented/);
    expect(contract.check({ method: 'GET', url: '/api/asn-lookup', status: 400, headers: json, body: '{}' })[0]).toMatch(/content-type/);
    const problem = { type: '/docs#problem-usage', title: 'Bad flag or argument', status: 400, detail: 'x', code: 'usage', instance: '/api/asn-lookup' };
    const limits = { 'x-ratelimit-limit': '1000', 'x-ratelimit-remaining': '999', 'x-ratelimit-reset': '1893542400', 'x-ratelimit-burst-limit': '20', 'x-ratelimit-burst-remaining': '19' };
    expect(contract.check({ method: 'GET', url: '/api/asn-lookup', status: 400, headers: { 'content-type': 'application/problem+json', ...limits }, body: JSON.stringify(problem) })).toEqual([]);
    expect(contract.check({ method: 'GET', url: '/api/asn-lookup', status: 400, headers: { 'content-type': 'application/problem+json' }, body: JSON.stringify(problem) })[0]).toMatch(/X-RateLimit-Limit is missing/);
    const unauthorized = { ...problem, status: 401, code: 'unauthorized', type: '/docs#problem-unauthorized' };
    expect(contract.check({ method: 'GET', url: '/api/asn-lookup', status: 401, headers: { 'content-type': 'application/problem+json', ...limits }, body: JSON.stringify(unauthorized) })[0]).toMatch(/WWW-Authenticate is missing/);
    expect(contract.check({ method: 'GET', url: '/nope', status: 200, headers: json, body: '{}' })).toHaveLength(1);
    expect(contract.queryBreaksRules('GET', '/api/asn-lookup?ip=1.1.1.1&asn=1')).toBe(true);
    expect(contract.queryBreaksRules('GET', '/api/email-tests?type=spf')).toBe(true);
    expect(contract.queryBreaksRules('GET', '/api/email-tests?domain=example.com&server=mx.example.com')).toBe(true);
    expect(contract.queryBreaksRules('GET', '/api/email-tests?type=smtp&server=mx.example.com')).toBe(false);
    expect(contract.queryBreaksRules('GET', '/api/blacklist-check')).toBe(true);
  });
});
