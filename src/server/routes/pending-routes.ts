import type { FastifyRequest } from 'fastify';
import type { ApiRoute } from '../api-route.js';

/**
 * SPEC's endpoints whose engines are still being built. Each is complete
 * but for `handler`: until it is set the route answers 501 (code
 * not_implemented) after authentication, without charging the caller.
 */

export const SMTP_TEST_ROUTE: ApiRoute = {
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
  responseDescription: 'The SMTP probe record of `netintel smtp`.',
  examples: [{ query: '?host=mx.example.com&port=25&tls=true' }],
  handler: null,
  pending: 'the SMTP probe engine is being built',
};

export const EMAIL_TESTS_ROUTE: ApiRoute = {
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
  handler: null,
  pending: 'the e-mail test engine is being built',
};

interface EmailBulkBody {
  domains: string[];
}

export const EMAIL_TESTS_BULK_ROUTE: ApiRoute = {
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
  handler: null,
  pending: 'the e-mail test engine is being built',
};

export const VPN_CHECK_ROUTE: ApiRoute = {
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
  handler: null,
  pending: 'VPN detection is being built',
};

export const BLACKLIST_CHECK_ROUTE: ApiRoute = {
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
      domain: { type: 'string', maxLength: 255, description: 'Domain: its mail servers\' addresses are checked.' },
    },
  },
  responseDescription: 'The blacklist record of `netintel blacklist`.',
  examples: [{ query: '?ip=192.0.2.1' }, { query: '?domain=example.com' }],
  handler: null,
  pending: 'the blacklist check is being built',
};
