import type { FastifyRequest } from 'fastify';
import { NetintelError } from '../../errors.js';
import type { ApiContext, ApiRoute } from '../api-route.js';
import { bulkAnswer } from '../bulk-answer.js';

/**
 * The check endpoints: SMTP, e-mail tests, VPN and blacklist. Each is a thin
 * call into its engine; probes go through the target guard first (SSRF).
 * A route whose `handler` is null answers 501 (code not_implemented) after
 * authentication, without charging the caller.
 */

/** E-mail tests as the server runs them: SMTP probes never reach special-purpose addresses unless allowed. */
function mailOptions(api: ApiContext) {
  return { smtp: { allowReserved: api.guard.allowPrivate } };
}

async function smtpTest(request: FastifyRequest, api: ApiContext): Promise<unknown> {
  const query = request.query as { host: string; port?: number; tls?: boolean };
  const port = query.port ?? 25;
  api.guard.checkSmtpPort(port);
  const target = await api.guard.resolve(query.host, 'SMTP server');
  const { probeSmtp } = await import('../../engine/smtp/probe-smtp.js');
  return probeSmtp(api.ctx, {
    host: target.host,
    port,
    // The checked address is the one connected to: the name is not resolved again.
    address: target.address,
    ...(query.tls === true ? { tls: port === 465 ? 'implicit' : 'required' } : query.tls === false ? { quitAfter: 'ehlo' as const } : {}),
  });
}

async function emailTests(request: FastifyRequest, api: ApiContext): Promise<unknown> {
  const query = request.query as { type?: 'smtp' | 'mx' | 'spf'; domain?: string; server?: string; port?: number };
  const { checkEmail } = await import('../../engine/mail/check-email.js');
  if (query.type === undefined) {
    if (query.domain === undefined) throw new NetintelError('usage', 'give domain (the general test), or type with domain or server');
    if (query.server !== undefined || query.port !== undefined) throw new NetintelError('usage', 'server and port go with type=smtp');
    return checkEmail(api.ctx, query.domain, mailOptions(api));
  }
  if (query.type !== 'smtp') {
    if (query.domain === undefined) throw new NetintelError('usage', `type=${query.type} needs domain`);
    return checkEmail(api.ctx, query.domain, { ...mailOptions(api), type: query.type });
  }
  const port = query.port ?? 25;
  api.guard.checkSmtpPort(port);
  if (query.server !== undefined) {
    const target = await api.guard.resolve(query.server, 'mail server');
    return checkEmail(api.ctx, query.domain ?? null, { type: 'smtp', server: target.host, port, smtp: { allowReserved: api.guard.allowPrivate, address: target.address } });
  }
  if (query.domain === undefined) throw new NetintelError('usage', 'type=smtp needs server (or domain: its MX hosts)');
  return checkEmail(api.ctx, query.domain, { ...mailOptions(api), type: 'smtp', port });
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
    },
  },
  responseDescription: 'The SMTP probe record of `netintel smtp` (of the first address of the host).',
  examples: [{ query: '?host=mx.example.com&port=25&tls=true' }],
  handler: (request, _reply, api) => smtpTest(request, api),
};

export const EMAIL_TESTS_ROUTE: ApiRoute = {
  network: true,
  method: 'GET',
  url: '/api/email-tests',
  operationId: 'getEmailTests',
  summary: 'E-mail tests: typed (smtp, mx, spf) or general (domain only)',
  description:
    'Form 1: `type` smtp (with `server`, optional `port`), mx or spf (with `domain`). Form 2: only `domain`: MX records, ' +
    'SPF validation and SMTP connectivity of the domain\'s mail servers.',
  feature: null,
  querystring: {
    type: 'object',
    properties: {
      type: { type: 'string', enum: ['smtp', 'mx', 'spf'], description: 'Form 1: the test to run.' },
      domain: { type: 'string', minLength: 1, maxLength: 255, description: 'Domain to test (mx, spf, form 2).' },
      server: { type: 'string', minLength: 1, maxLength: 255, description: 'Mail server host name (smtp).' },
      port: { type: 'integer', minimum: 1, maximum: 65535, description: 'Server port (smtp).' },
    },
  },
  responseDescription: 'The e-mail test record of `netintel email`.',
  examples: [{ query: '?type=mx&domain=example.com' }, { query: '?domain=example.com' }],
  handler: (request, _reply, api) => emailTests(request, api),
};

interface EmailBulkBody {
  domains: string[];
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
    },
  },
  responseDescription: 'One item per domain in order (`record` or `error`), and a summary.',
  examples: [{ body: { domains: ['example.com', 'example.org'] } }],
  items: (request: FastifyRequest) => (request.body as EmailBulkBody).domains.length,
  batched: true,
  handler: async (request, _reply, api) => {
    const { domains } = request.body as EmailBulkBody;
    const { checkEmail } = await import('../../engine/mail/check-email.js');
    return bulkAnswer(domains, (domain) => checkEmail(api.ctx, domain, mailOptions(api)));
  },
};

export const VPN_CHECK_ROUTE: ApiRoute = {
  network: true,
  method: 'GET',
  url: '/api/vpn-check',
  operationId: 'getVpnCheck',
  summary: 'VPN, proxy, Tor and hosting detection for an address',
  description: 'The security verdict of an address with the evidence behind it; needs a key with premium fields (threat intelligence).',
  feature: 'premium',
  querystring: {
    type: 'object',
    required: ['ip'],
    properties: { ip: { type: 'string', maxLength: 100, description: 'IPv4 or IPv6 address.' } },
  },
  responseDescription: 'The VPN check record of `netintel vpn`.',
  examples: [{ query: '?ip=198.51.100.7' }],
  handler: async (request, _reply, api) => {
    const { checkVpn } = await import('../../engine/security/check-vpn.js');
    return checkVpn(api.ctx, (request.query as { ip: string }).ip, api.dataMode);
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
  responseDescription: 'The blacklist record of `netintel blacklist`.',
  examples: [{ query: '?ip=192.0.2.1' }, { query: '?domain=example.com' }],
  handler: async (request, _reply, api) => {
    const query = request.query as { ip?: string; domain?: string; zones?: string };
    if ((query.ip === undefined) === (query.domain === undefined)) throw new NetintelError('usage', 'give exactly one of ip or domain');
    const { checkBlacklist } = await import('../../engine/blacklist/check-blacklist.js');
    return checkBlacklist(api.ctx, (query.ip ?? query.domain)!, { zones: query.zones ?? null });
  },
};
