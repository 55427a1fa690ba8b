import type { FastifyRequest } from 'fastify';
import type { IpInfoRecord } from '../../engine/ip/ip-record.js';
import type { PlanTable } from '../../keys/plans.js';
import type { ApiRoute } from '../api-route.js';
import { bulkAnswer } from '../bulk-answer.js';

/** The data groups POST /api/bulk's `fields` may name (docs/api.md, Endpoints). */
export const BULK_FIELDS = ['location', 'security', 'network'] as const;

interface BulkBody {
  ips: string[];
  fields?: Array<(typeof BULK_FIELDS)[number]>;
}

/** The record with only the groups asked for; the address, its type and the other top-level facts stay. */
function withFields(record: IpInfoRecord, fields: readonly string[] | undefined): unknown {
  if (fields === undefined) return record;
  const shaped: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (!(BULK_FIELDS as readonly string[]).includes(key) || fields.includes(key)) shaped[key] = value;
  }
  return shaped;
}

/** POST /api/bulk; its body limit (docs/api.md, Plans and limits: at most 100 addresses) comes from the plans file. */
export function bulkRoute(plans: PlanTable): ApiRoute {
  return {
    method: 'POST',
    url: '/api/bulk',
    operationId: 'postBulk',
    summary: 'IP information records of many addresses in one request',
    description:
      `Looks up at most ${plans.bulkMax} addresses; needs a plan with bulk processing (Pro, Enterprise). ` +
      '`fields` picks the data groups (location, security, network; default all). Every address counts against the limits. ' +
      'The answer keeps the order of `ips`, echoes each address as `query`, and gives an error item for an address that fails.',
    feature: 'bulk',
    body: {
      type: 'object',
      required: ['ips'],
      additionalProperties: false,
      properties: {
        ips: { type: 'array', minItems: 1, maxItems: plans.bulkMax, items: { type: 'string', maxLength: 100 } },
        fields: { type: 'array', uniqueItems: true, items: { type: 'string', enum: [...BULK_FIELDS] } },
      },
    },
    responseSchema: { $ref: '#/components/schemas/IpBulkAnswer' },
    responseDescription: 'One item per address in order (`record` or `error`), and a summary.',
    examples: [{ body: { ips: ['8.8.8.8', '1.1.1.1', 'not-an-ip'], fields: ['location', 'network'] } }],
    items: (request: FastifyRequest) => (request.body as BulkBody).ips.length,
    handler: (request, _reply, api) => {
      const body = request.body as BulkBody;
      return bulkAnswer(body.ips, (ip) => withFields(api.lookupIp(ip), body.fields));
    },
  };
}
