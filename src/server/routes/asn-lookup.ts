import type { FastifyRequest } from 'fastify';
import { isAsnText, splitAsnBulk } from '../../engine/asn/lookup-asn.js';
import { isIpAddress, parseIpAddress, quoteInput } from '../../engine/ip/ip-address.js';
import { NetintelError } from '../../errors.js';
import type { ApiRoute } from '../api-route.js';
import { bulkAnswer } from '../bulk-answer.js';

interface AsnQuery {
  ip?: string;
  asn?: string;
  bulk?: string;
}

function bulkItems(request: FastifyRequest): number {
  const { bulk } = request.query as AsnQuery;
  return bulk === undefined ? 1 : Math.max(splitAsnBulk(bulk).length, 1);
}

export const ASN_LOOKUP_ROUTE: ApiRoute = {
  method: 'GET',
  url: '/api/asn-lookup',
  operationId: 'getAsn',
  summary: 'ASN information by IP address, by AS number, or for a mixed list',
  description:
    'Exactly one of `ip` (the AS and announced route holding an address), `asn` (an AS by number: organisation, ' +
    'every routed prefix, counts) or `bulk` (a comma-separated list mixing both; at most the plan\'s batch size, ' +
    'each item counted against the limits). The record is `netintel asn`\'s.',
  feature: null,
  querystring: {
    type: 'object',
    properties: {
      ip: { type: 'string', maxLength: 100, description: 'IP address to look up.' },
      asn: { type: 'string', maxLength: 12, pattern: '^(?:[Aa][Ss])?[0-9]{1,10}$', description: 'AS number (15169 or AS15169).' },
      bulk: { type: 'string', maxLength: 10_000, description: 'Comma-separated IP addresses and AS numbers.' },
    },
  },
  // Exactly one of the three.
  queryRules: { oneOf: [{ required: ['ip'] }, { required: ['asn'] }, { required: ['bulk'] }] },
  responseSchema: {
    oneOf: [{ $ref: '#/components/schemas/AsnResult' }, { $ref: '#/components/schemas/AsnBulkAnswer' }],
  },
  responseDescription: 'The ASN record (`ip` or `asn`), or a bulk answer (`bulk`): one item per query in order, and a summary.',
  examples: [{ query: '?ip=8.8.8.8' }, { query: '?asn=AS15169' }, { query: '?bulk=8.8.8.8,AS13335,1.1.1.1' }],
  items: bulkItems,
  batched: true,
  handler: (request, _reply, api) => {
    const query = request.query as AsnQuery;
    const given = (['ip', 'asn', 'bulk'] as const).filter((name) => query[name] !== undefined);
    if (given.length !== 1) {
      throw new NetintelError('usage', `give exactly one of ip, asn or bulk${given.length > 1 ? ` (got ${given.join(', ')})` : ''}`, {
        details: { given },
      });
    }
    if (query.ip !== undefined) {
      if (!isIpAddress(query.ip)) parseIpAddress(query.ip);
      return api.lookupAsn(query.ip);
    }
    if (query.asn !== undefined) {
      if (!isAsnText(query.asn)) throw new NetintelError('invalid_input', `${quoteInput(query.asn)} is not an AS number`, { details: { input: query.asn } });
      return api.lookupAsn(query.asn);
    }
    const queries = splitAsnBulk(query.bulk!);
    if (queries.length === 0) throw new NetintelError('usage', 'bulk is empty: give comma-separated IP addresses and AS numbers');
    return bulkAnswer(queries, (item) => api.lookupAsn(item));
  },
};
