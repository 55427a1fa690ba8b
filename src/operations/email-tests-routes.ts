import type { FastifyRequest } from 'fastify';
import { NetintelError } from '../errors.js';
import type { ApiContext, ApiRoute } from '../server/api-route.js';

/**
 * The routes of the e-mail tests (docs/api.md, Endpoints): GET
 * /api/email-tests, which the `email` operation serves and `mx`, `spf`,
 * `dkim` and `bimi` ask remotely (its form 1), and POST
 * /api/email-tests/bulk, its bulk form. SMTP probes and MTA-STS policy
 * fetches meet the context's connect guard (SSRF: docs/design.md, The
 * public-target guard) at connect time.
 */

/**
 * The general test's settings (`netintel email --port N`, `--no-smtp`,
 * `--no-dnssec`): the port is checked like any probe's. SMTP probes and
 * MTA-STS policy fetches meet the context's connect guard (build-server.ts)
 * at connect time.
 */
function generalOptions(api: ApiContext, settings: { port?: number; smtp?: boolean; dnssec?: boolean }) {
  if (settings.port !== undefined) api.guard.checkSmtpPort(settings.port);
  return {
    ...(settings.port === undefined ? {} : { port: settings.port }),
    ...(settings.smtp === false ? { skipSmtp: true } : {}),
    ...(settings.dnssec === false ? { skipDnssec: true } : {}),
  };
}

async function emailTests(request: FastifyRequest, api: ApiContext): Promise<unknown> {
  const query = request.query as { type?: 'smtp' | 'mx' | 'spf' | 'dkim' | 'bimi' | 'dnssec' | 'dane'; domain?: string; server?: string; port?: number; smtp?: boolean; dnssec?: boolean; selector?: string };
  const { checkEmail } = await import('../engine/mail/check-email.js');
  if (query.selector !== undefined && query.type !== 'dkim' && query.type !== 'bimi') throw new NetintelError('usage', 'selector goes with type=dkim or type=bimi');
  if (query.type === undefined) {
    if (query.domain === undefined) throw new NetintelError('usage', 'give domain (the general test), or type with domain or server');
    if (query.server !== undefined) throw new NetintelError('usage', 'server goes with type=smtp');
    return checkEmail(api.ctx, query.domain, generalOptions(api, query));
  }
  if (query.smtp !== undefined) throw new NetintelError('usage', 'smtp=false goes with the general test (no type)');
  if (query.dnssec !== undefined) throw new NetintelError('usage', 'dnssec=false goes with the general test (no type)');
  if (query.type !== 'smtp') {
    if (query.domain === undefined) throw new NetintelError('usage', `type=${query.type} needs domain`);
    if (query.type === 'dane') return checkEmail(api.ctx, query.domain, { type: 'dane', ...generalOptions(api, { ...(query.port === undefined ? {} : { port: query.port }) }) });
    const selectors = query.selector?.split(',').map((item) => item.trim()).filter(Boolean);
    return checkEmail(api.ctx, query.domain, {
      type: query.type,
      ...(selectors && query.type === 'dkim' ? { dkimSelectors: selectors } : {}),
      ...(selectors && query.type === 'bimi' ? { bimiSelector: selectors[0] } : {}),
    });
  }
  const port = query.port ?? 25;
  api.guard.checkSmtpPort(port);
  if (query.server !== undefined) {
    const target = await api.guard.resolve(query.server, 'mail server');
    return checkEmail(api.ctx, query.domain ?? null, { type: 'smtp', server: target.host, port, smtp: { address: target.address } });
  }
  if (query.domain === undefined) throw new NetintelError('usage', 'type=smtp needs server (or domain: its MX hosts)');
  return checkEmail(api.ctx, query.domain, { type: 'smtp', port });
}

const EMAIL_TESTS_ROUTE: ApiRoute = {
  network: true,
  method: 'GET',
  url: '/api/email-tests',
  group: 'mail',
  operationId: 'getEmailTests',
  summary: 'E-mail tests: typed (smtp, mx, spf, dkim, bimi, dnssec, dane) or general (domain only)',
  description:
    'Form 1: `type` smtp (with `server`, optional `port`), or mx, spf, dkim (optional `selector`, a comma-separated list; ' +
    'else common selectors are probed), bimi (optional `selector`, default `default`), dnssec (the domain\'s and each MX ' +
    'host\'s DNSSEC chain, validated from the root trust anchor) or dane (TLSA of each MX host matched with the certificate ' +
    'its port 25 presents) with `domain`. Form 2: only `domain`: MX, SPF, DMARC, MTA-STS, TLS-RPT, DKIM, BIMI, DNSSEC, ' +
    'SMTP connectivity and DANE of the domain\'s mail servers.',
  feature: null,
  querystring: {
    type: 'object',
    properties: {
      type: { type: 'string', enum: ['smtp', 'mx', 'spf', 'dkim', 'bimi', 'dnssec', 'dane'], description: 'Form 1: the test to run.' },
      selector: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9._,-]+$', description: 'dkim: selectors to look at (comma-separated); bimi: the BIMI selector.' },
      domain: { type: 'string', minLength: 1, maxLength: 255, description: 'Domain to test (mx, spf, form 2).' },
      server: { type: 'string', minLength: 1, maxLength: 255, description: 'Mail server host name (smtp).' },
      port: { type: 'integer', minimum: 1, maximum: 65535, description: 'Server port (smtp; form 2: the port of the MX probes).' },
      smtp: { type: 'boolean', description: 'Form 2: false leaves the SMTP connections out (default true).' },
      dnssec: { type: 'boolean', description: 'Form 2: false leaves DNSSEC validation out, and so DANE, which rests on it (default true).' },
    },
  },
  queryRules: {
    // server goes with type=smtp; smtp=false and dnssec=false only with the general test.
    dependentRequired: { server: ['type'] },
    oneOf: [
      { description: 'Form 2, the general test: domain, without type.', required: ['domain'], properties: { type: false, selector: false } },
      { description: 'Form 1, mx, spf, dnssec or dane: type and domain.', required: ['type', 'domain'], properties: { type: { enum: ['mx', 'spf', 'dnssec', 'dane'] }, smtp: false, dnssec: false, selector: false } },
      { description: 'Form 1, dkim or bimi: type and domain, optional selector.', required: ['type', 'domain'], properties: { type: { enum: ['dkim', 'bimi'] }, smtp: false, dnssec: false } },
      {
        description: 'Form 1, smtp: type=smtp with server (or domain: its MX hosts).',
        required: ['type'],
        properties: { type: { const: 'smtp' }, smtp: false, dnssec: false, selector: false },
        anyOf: [{ required: ['server'] }, { required: ['domain'] }],
      },
    ],
  },
  responseSchema: { $ref: '#/components/schemas/EmailReport' },
  responseDescription: 'The e-mail test record of `netintel email`.',
  examples: [{ query: '?type=mx&domain=example.com' }, { query: '?type=dkim&domain=example.com&selector=selector1,selector2' }, { query: '?domain=example.com' }, { query: '?domain=example.com&smtp=false&dnssec=false' }],
  handler: (request, _reply, api) => emailTests(request, api),
};

interface EmailBulkBody {
  domains: string[];
  port?: number;
  smtp?: boolean;
  dnssec?: boolean;
}

const EMAIL_TESTS_BULK_ROUTE: ApiRoute = {
  network: true,
  method: 'POST',
  url: '/api/email-tests/bulk',
  group: 'mail',
  operationId: 'postEmailTestsBulk',
  summary: 'General e-mail tests of many domains',
  description:
    'Runs the general test (form 2 of GET /api/email-tests) on each domain; at most the plan\'s batch size ' +
    '(free 10, key plans 50), every domain counted against the limits. The answer keeps input order with a summary.',
  feature: null,
  body: {
    type: 'object',
    required: ['domains'],
    additionalProperties: false,
    properties: {
      domains: { type: 'array', minItems: 1, maxItems: 1000, items: { type: 'string', minLength: 1, maxLength: 255 } },
      port: { type: 'integer', minimum: 1, maximum: 65535, description: 'The port of the MX probes (default 25).' },
      smtp: { type: 'boolean', description: 'false leaves the SMTP connections out (default true).' },
      dnssec: { type: 'boolean', description: 'false leaves DNSSEC validation out, and so DANE, which rests on it (default true).' },
    },
  },
  responseSchema: { $ref: '#/components/schemas/EmailBulkAnswer' },
  responseDescription: 'One item per domain in order (`record` or `error`), and a summary.',
  examples: [{ body: { domains: ['example.com', 'example.org'] } }],
  items: (request: FastifyRequest) => (request.body as EmailBulkBody).domains.length,
  batched: true,
  handler: async (request, _reply, api) => {
    const body = request.body as EmailBulkBody;
    const settings = generalOptions(api, body);
    const { checkEmail } = await import('../engine/mail/check-email.js');
    const { bulkAnswer } = await import('./bulk-answer.js');
    return bulkAnswer(body.domains, (domain) => checkEmail(api.ctx, domain, settings));
  },
};

/** The routes the `email` operation serves. */
export function emailTestsRoutes(): ApiRoute[] {
  return [EMAIL_TESTS_ROUTE, EMAIL_TESTS_BULK_ROUTE];
}
