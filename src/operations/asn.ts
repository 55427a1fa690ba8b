import type { FastifyRequest } from 'fastify';
import type { AsnResult } from '../engine/asn/lookup-asn.js';
import { NetintelError } from '../errors.js';
import { ASN_SCHEMA } from '../output/schemas/asn-schema.js';
import { defineOperation } from './operation.js';
import { failed } from './outcomes.js';

/**
 * The items of a comma-separated list mixing IP addresses and AS numbers:
 * an `asn` target, and the `bulk` form of GET /api/asn-lookup (docs/api.md, Endpoints).
 */
export function splitAsnBulk(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

interface AsnQuery {
  ip?: string;
  asn?: string;
  bulk?: string;
}

/** `netintel asn`: an AS by number, or the AS and route announcing an address. */
export const ASN = defineOperation<Record<string, never>, AsnResult>()({
  name: 'asn',
  defaults: {},
  command: {
    declare(command) {
      command
        .description('an autonomous system by number (organisation, routed prefixes, counts) or the AS announcing an IP (route)')
        .argument('<targets...>', 'AS15169, 15169 or an IP address; a comma-separated list mixes them')
        .addHelpText('after', '\nExamples:\n  netintel asn AS15169\n  netintel asn 8.8.8.8 -f json\n  netintel asn 8.8.8.8,AS13335,1.1.1.1 -f csv');
    },
    settings: () => ({}),
    run(run) {
      const queries = run.args.flatMap(splitAsnBulk);
      // Only commas: nothing to look up, and nothing to read from stdin either.
      if (queries.length === 0) return run.emit([[]], { single: false, bulk: false });
      return run.lookupTargets({ targets: queries, none: { usage: 'asn needs an AS number or an IP address' } });
    },
  },
  async lookup(ctx) {
    const { lookupAsn } = await import('../engine/asn/lookup-asn.js');
    return (query) => {
      try {
        return [{ ok: true, query, value: lookupAsn(ctx, query) }];
      } catch (error) {
        return [failed(query, error)];
      }
    };
  },
  record: {
    columns: ASN_SCHEMA,
    json: { name: 'AsnResult', bulkAnswer: 'AsnBulkAnswer', load: async () => ({ schema: (await import('./record-json-schemas.js')).ASN_RECORD }) },
    view: async () => (await import('../output/human/asn-view.js')).ASN_VIEW,
  },
  api: {
    method: 'GET',
    path: '/api/asn-lookup',
    feature: null,
    // Every run asks in batches of the plan's size, through the bulk form; each record must name its query (subject `asn`).
    batch: {
      applies: () => true,
      size: (plan) => plan.batch,
      async send(remote, targets) {
        const queries = targets.map((target) => target.text);
        const answer = remote.bulkAnswer('AsnBulkAnswer', 'asn bulk answer');
        return remote.bulkOutcomes<AsnResult>((await remote.get('/api/asn-lookup', { bulk: queries.join(',') }, answer)).body, queries, answer.name, 'asn');
      },
    },
    route: () => ({
      operationId: 'getAsn',
      summary: 'ASN information by IP address, by AS number, or for a mixed list',
      description:
        'Exactly one of `ip` (the AS and announced route holding an address), `asn` (an AS by number: organisation, ' +
        'every routed prefix, counts) or `bulk` (a comma-separated list mixing both; at most the plan\'s batch size, ' +
        'each item counted against the limits). The record is `netintel asn`\'s.',
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
      items: (request: FastifyRequest) => {
        const { bulk } = request.query as AsnQuery;
        return bulk === undefined ? 1 : Math.max(splitAsnBulk(bulk).length, 1);
      },
      batched: true,
      handler: async (request, _reply, api) => {
        const query = request.query as AsnQuery;
        const given = (['ip', 'asn', 'bulk'] as const).filter((name) => query[name] !== undefined);
        if (given.length !== 1) {
          throw new NetintelError('usage', `give exactly one of ip, asn or bulk${given.length > 1 ? ` (got ${given.join(', ')})` : ''}`, {
            details: { given },
          });
        }
        const [{ isAsnText }, { isIpAddress, parseIpAddress, quoteInput }] = await Promise.all([import('../engine/asn/lookup-asn.js'), import('../engine/address/ip-address.js')]);
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
        const { bulkAnswer } = await import('./bulk-answer.js');
        return bulkAnswer(queries, (item) => api.lookupAsn(item));
      },
    }),
  },
});
