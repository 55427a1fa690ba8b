import type { FastifyRequest } from 'fastify';
import { NetintelError } from '../../errors.js';
import type { ApiContext, ApiRoute } from '../api-route.js';
import { bulkAnswer } from '../bulk-answer.js';
import { SMTP_STAGES, type SmtpStage } from '../../engine/smtp/smtp-result.js';

/**
 * The check endpoints: SMTP, e-mail tests, VPN and blacklist. Each is a thin
 * call into its engine; probes go through the target guard first (SSRF).
 * A route whose `handler` is null answers 501 (code not_implemented) after
 * authentication, without charging the caller.
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

interface SmtpTestQuery {
  host: string;
  port?: number;
  tls?: boolean;
  address?: string;
  ehlo?: string;
  quit_after?: SmtpStage;
  ptr?: boolean;
  transcript?: boolean;
}

async function smtpTest(request: FastifyRequest, api: ApiContext): Promise<unknown> {
  const query = request.query as SmtpTestQuery;
  const port = query.port ?? 25;
  api.guard.checkSmtpPort(port);
  let target: { host: string; address: string };
  if (query.address === undefined) target = await api.guard.resolve(query.host, 'SMTP server');
  else {
    // One chosen address of the host (as `netintel smtp --ip`, and remote mode testing each address in turn).
    api.guard.checkAddress(query.address, 'SMTP server address');
    target = { host: query.host.replace(/^\[(.*)\]$/, '$1'), address: query.address };
  }
  const { probeSmtp } = await import('../../engine/smtp/probe-smtp.js');
  return probeSmtp(api.ctx, {
    host: target.host,
    port,
    // The checked address is the one connected to: the name is not resolved again.
    address: target.address,
    ...(query.tls === true ? { tls: port === 465 ? 'implicit' : 'required' } : query.tls === false ? { quitAfter: 'ehlo' as const } : {}),
    ...(query.quit_after === undefined ? {} : { quitAfter: query.quit_after }),
    ...(query.ehlo === undefined ? {} : { ehloName: query.ehlo }),
    ...(query.ptr === undefined ? {} : { reverseDns: query.ptr }),
    ...(query.transcript === undefined ? {} : { transcript: query.transcript }),
  });
}

async function emailTests(request: FastifyRequest, api: ApiContext): Promise<unknown> {
  const query = request.query as { type?: 'smtp' | 'mx' | 'spf' | 'dkim' | 'bimi' | 'dnssec' | 'dane'; domain?: string; server?: string; port?: number; smtp?: boolean; dnssec?: boolean; selector?: string };
  const { checkEmail } = await import('../../engine/mail/check-email.js');
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

export const SMTP_TEST_ROUTE: ApiRoute = {
  network: true,
  method: 'GET',
  url: '/api/smtp-test',
  operationId: 'getSmtpTest',
  summary: 'SMTP server connectivity, TLS and configuration',
  description:
    'Connects to `host` on `port` (default 25) and reports the banner, EHLO extensions and, with `tls=true`, STARTTLS or ' +
    'implicit TLS. The host is resolved once and the checked address is the one connected to; private, loopback, ' +
    'link-local and metadata addresses and ports other than the mail ports are refused.',
  feature: null,
  querystring: {
    type: 'object',
    required: ['host'],
    properties: {
      host: { type: 'string', minLength: 1, maxLength: 255, description: 'SMTP server host name or address.' },
      port: { type: 'integer', minimum: 1, maximum: 65535, default: 25, description: 'SMTP port.' },
      tls: { type: 'boolean', description: 'Test TLS support.' },
      address: { type: 'string', minLength: 1, maxLength: 100, description: 'Connect to this address of the host instead of its first one.' },
      ehlo: { type: 'string', minLength: 1, maxLength: 255, description: 'Name to send in EHLO/HELO.' },
      quit_after: { type: 'string', enum: [...SMTP_STAGES], description: 'Stop after this stage, then QUIT.' },
      ptr: { type: 'boolean', description: 'Check the reverse DNS (PTR, FCrDNS) of the address (default true).' },
      transcript: { type: 'boolean', description: 'Include the conversation.' },
    },
  },
  responseSchema: { $ref: '#/components/schemas/SmtpResult' },
  responseDescription: 'The SMTP probe record of `netintel smtp` (of the first address of the host, or of `address`).',
  examples: [{ query: '?host=mx.example.com&port=25&tls=true' }],
  handler: (request, _reply, api) => smtpTest(request, api),
};

export const EMAIL_TESTS_ROUTE: ApiRoute = {
  network: true,
  method: 'GET',
  url: '/api/email-tests',
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

export const EMAIL_TESTS_BULK_ROUTE: ApiRoute = {
  network: true,
  method: 'POST',
  url: '/api/email-tests/bulk',
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
    const { checkEmail } = await import('../../engine/mail/check-email.js');
    return bulkAnswer(body.domains, (domain) => checkEmail(api.ctx, domain, settings));
  },
};

export const VPN_CHECK_ROUTE: ApiRoute = {
  network: true,
  method: 'GET',
  url: '/api/vpn-check',
  operationId: 'getVpnCheck',
  summary: 'VPN, proxy, Tor and hosting detection for an address',
  description:
    'The security verdict of an address with the evidence behind it; needs a key with premium fields (threat intelligence). ' +
    'Without `ip`, the caller\'s own address (as GET /api/ipinfo).',
  feature: 'premium',
  querystring: {
    type: 'object',
    properties: { ip: { type: 'string', maxLength: 100, description: 'IPv4 or IPv6 address; default the caller\'s.' } },
  },
  responseSchema: { $ref: '#/components/schemas/VpnResult' },
  responseDescription: 'The VPN check record of `netintel vpn`.',
  examples: [{ query: '?ip=198.51.100.7' }],
  handler: async (request, _reply, api) => {
    const { checkVpn } = await import('../../engine/security/check-vpn.js');
    return checkVpn(api.ctx, (request.query as { ip?: string }).ip ?? request.netintel.client, api.dataMode);
  },
};

export const BLACKLIST_CHECK_ROUTE: ApiRoute = {
  network: true,
  method: 'GET',
  url: '/api/blacklist-check',
  operationId: 'getBlacklistCheck',
  summary: 'DNS blacklist (DNSBL) check of an address or a mail domain',
  description: 'Looks the address (or the mail servers of a domain) up in DNS blacklists.',
  feature: null,
  querystring: {
    type: 'object',
    properties: {
      ip: { type: 'string', maxLength: 100, description: 'IPv4 or IPv6 address.' },
      domain: { type: 'string', maxLength: 255, description: 'Domain: the domain lists, and its mail servers\' addresses on the IP lists.' },
      zones: { type: 'string', maxLength: 1000, description: 'The zones to ask, as `netintel blacklist --zones` takes them (default: the default set).' },
    },
  },
  // Exactly one of the two.
  queryRules: { oneOf: [{ required: ['ip'] }, { required: ['domain'] }] },
  responseSchema: { $ref: '#/components/schemas/BlacklistResult' },
  responseDescription: 'The blacklist record of `netintel blacklist`.',
  examples: [{ query: '?ip=192.0.2.1' }, { query: '?domain=example.com' }],
  handler: async (request, _reply, api) => {
    const query = request.query as { ip?: string; domain?: string; zones?: string };
    if ((query.ip === undefined) === (query.domain === undefined)) throw new NetintelError('usage', 'give exactly one of ip or domain');
    const { checkBlacklist } = await import('../../engine/blacklist/check-blacklist.js');
    return checkBlacklist(api.ctx, (query.ip ?? query.domain)!, { zones: query.zones ?? null });
  },
};
