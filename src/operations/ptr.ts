import type { FastifyRequest } from 'fastify';
import type { PtrName, PtrResult } from '../engine/dns/reverse-names.js';
import { recordFromSchema } from './declare-record.js';
import { arrayOf, described, eg, int, oneOfStrings, record, str } from './json-schema.js';
import { defineOperation } from './operation.js';
import { oneRecordEach } from './outcomes.js';

/** The PTR record of an address (docs/commands/ptr.md): its JSON Schema is where its columns come from. */
const PTR_RECORD = record<PtrResult>(
  {
    kind: { const: 'ptr' },
    ip: described(eg(str, '192.0.2.1'), 'The address asked, in canonical text (RFC 5952 for IPv6).'),
    reverse_name: described(eg(str, '1.2.0.192.in-addr.arpa'), 'The name queried: the in-addr.arpa or ip6.arpa name of the address.'),
    status: described(oneOfStrings(['answer', 'nodata', 'nxdomain']), 'answer: PTR records; nodata: the name exists without one; nxdomain: no such name.'),
    names: described(arrayOf(record<PtrName>({ name: eg(str, 'host.example.com'), ttl_seconds: eg(int, 3600) })), 'The PTR names in answer order, each with its TTL.'),
    resolver: described(str, 'The resolver that answered, host:port.'),
  },
  { description: 'The reverse DNS of an address: the names its PTR records give, with their TTLs.' },
);

/** `netintel ptr`: the reverse DNS of IPv4 and IPv6 addresses, the PTR names with their TTLs. */
export const PTR = defineOperation<Record<string, never>, PtrResult>()({
  name: 'ptr',
  defaults: {},
  command: {
    declare(command) {
      command
        .description('reverse DNS of IP addresses: the PTR names of each, with their TTLs and the resolver that answered')
        .argument('[addresses...]', 'IPv4/IPv6 addresses; read from stdin (one per line) when piped')
        .addHelpText(
          'after',
          [
            '',
            'NXDOMAIN and NODATA are answers (no names, exit 0); SERVFAIL/REFUSED (exit 5) and timeouts (exit 4) are errors.',
            'Examples:',
            '  netintel ptr 8.8.8.8',
            '  netintel ptr 2001:4860:4860::8888 -f json',
            '  cut -d" " -f1 access.log | sort -u | netintel ptr -f csv',
          ].join('\n'),
        );
    },
    settings: () => ({}),
    run: (run) => run.lookupTargets({ targets: run.args, none: { usage: 'ptr needs an IP address: give one or more, or pipe a list in' } }),
  },
  async lookup(ctx) {
    const { lookupPtr } = await import('../engine/dns/reverse-names.js');
    return oneRecordEach((address) => lookupPtr(ctx, address));
  },
  record: recordFromSchema({
    name: 'PtrResult',
    schema: PTR_RECORD,
    kind: 'ptr',
    identity: ['ip'],
    tableColumns: ['ip', 'status', 'names'],
    mainValue: ['names'],
    // CSV cells and -f value show the names alone, space-separated (for scripts); json, xml and the views keep the TTLs.
    presentColumn: (value, column) => {
      const ptr = value as PtrResult;
      return column === 'names' ? ptr.names.map((each) => each.name).join(' ') : (ptr as unknown as Record<string, unknown>)[column];
    },
    view: async () => (await import('../output/human/ptr-view.js')).PTR_VIEW,
  }),
  api: {
    method: 'GET',
    path: '/api/ptr',
    // A DNS question, as GET /api/dns-lookup is: every plan, the free tier included.
    feature: null,
    query: (ip) => ({ ip: ip ?? undefined }),
    subject: () => 'ip',
    route: () => ({
      network: true,
      operationId: 'getPtr',
      summary: 'Reverse DNS of an IP address: its PTR names with their TTLs',
      description: 'The PTR names of `ip` (IPv4 or IPv6) from the server\'s resolvers, with their TTLs. NXDOMAIN and NODATA are answers (`status`, no names).',
      querystring: {
        type: 'object',
        required: ['ip'],
        properties: { ip: { type: 'string', minLength: 1, maxLength: 100, description: 'IPv4 or IPv6 address.' } },
      },
      responseDescription: 'The PTR record of `netintel ptr -f json`.',
      examples: [{ query: '?ip=8.8.8.8' }],
      handler: async (request: FastifyRequest, _reply, api) => {
        const { lookupPtr } = await import('../engine/dns/reverse-names.js');
        return lookupPtr(api.ctx, (request.query as { ip: string }).ip);
      },
    }),
  },
});
