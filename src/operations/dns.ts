import type { CoverageFacts } from '../cli/check-coverage.js';
import type { DnsResult } from '../engine/dns/dns-result.js';
import type { DnssecDnsResult } from '../engine/dns/dnssec/dnssec-report.js';
import type { TrustAnchor } from '../engine/dns/dnssec/trust-anchor.js';
import type { DnsQueryType, DnsRecordType } from '../engine/dns/dns-type.js';
import { isIpAddress } from '../engine/address/ip-address.js';
import type { ErrorCode } from '../errors.js';
import { NetintelError, toNetintelError } from '../errors.js';
import { DNS_SCHEMA } from '../output/schemas/dns-schema.js';
import { lazyHandler } from './lazy-handler.js';
import { defineOperation, type Outcomes } from './operation.js';

/** An item of GET /api/dns-lookup's answer: a type's record, or why that type failed. */
type DnsItem = DnsResult | { query: string; error: { code: ErrorCode; message: string; details?: Record<string, unknown> } };

interface DnsSettings {
  /** `--type` as read (ALL not expanded), or null for the default (A, PTR for an address). */
  types: readonly DnsQueryType[] | null;
  /** The types asked of each target (ALL expanded), or null for the default. */
  asked: readonly DnsRecordType[] | null;
  /** `--dnssec` (or `--trust-anchor`): validate each answer from the trust anchor. */
  dnssec: boolean;
  /** The records of the trust anchor file (`--trust-anchor`, NETINTEL_TRUST_ANCHOR), or undefined for the IANA root KSKs. */
  trustAnchor: TrustAnchor | undefined;
}

/** `netintel dns`: the records of names (an address: its PTR), typed, with rcodes and the resolver that answered. */
export const DNS = defineOperation<DnsSettings, DnsResult>()({
  name: 'dns',
  command: {
    declare(command) {
      command
        .description('DNS records of names (an IP address means a reverse PTR lookup), typed, with rcodes, TTLs and the resolver that answered')
        .argument('[targets...]', 'domain names or IP addresses; read from stdin when piped')
        .addOption(command.createOption('--type <types>', 'A, AAAA, CNAME, MX, NS, SOA, TXT, CAA, PTR, SRV, DS, DNSKEY, RRSIG, NSEC, NSEC3, TLSA, SVCB, HTTPS, comma-separated, or ALL'))
        .addOption(command.createOption('--dnssec', 'ask with the DO bit, show RRSIGs and the AD bit, and validate the chain from the trust anchor'))
        .addHelpText(
          'after',
          [
            '',
            'NXDOMAIN and NODATA are answers (exit 0); SERVFAIL/REFUSED (exit 5) and timeouts (exit 4) are errors.',
            'ALL asks A AAAA CNAME MX NS SOA TXT CAA concurrently (ANY is deprecated by RFC 8482).',
            '--dnssec gives each answer a verdict: secure, insecure, bogus (an error finding) or indeterminate.',
            'Examples:',
            '  netintel dns example.com --type MX',
            '  netintel dns example.com --type ALL -f json',
            '  netintel dns 8.8.8.8                      # PTR',
            '  netintel dns bücher.example --resolver 9.9.9.9 --tcp',
            '  netintel dns --type A,AAAA -f csv < names.txt',
            '  netintel dns example.com --type MX --dnssec',
            '  netintel dns www.example.test --dnssec --trust-anchor Kexample.test.+013+12345.key',
          ].join('\n'),
        );
    },
    refuseRemote(flags) {
      if (flags.dnssec === true) throw new NetintelError('usage', 'dns --dnssec validates on this machine (drop --server, or drop --dnssec)');
    },
    async settings(flags, kit) {
      // The DNS engine (and its sockets, crypto, dns-packet) loads only when this command runs.
      const { expandDnsTypes, parseDnsTypes } = await import('../engine/dns/dns-type.js');
      const types = flags.type === undefined ? null : parseDnsTypes(flags.type as string);
      // A trust anchor named on the command line asks for validation; one from NETINTEL_TRUST_ANCHOR or the config file only says where it starts.
      const dnssec = flags.dnssec === true || kit.options.trustAnchor?.onCommandLine === true;
      return {
        types,
        asked: types === null ? null : expandDnsTypes(types),
        dnssec,
        trustAnchor: dnssec ? await kit.trustAnchor() : undefined,
      };
    },
    run(run) {
      const { asked } = run.settings;
      return run.lookupTargets({
        targets: run.args,
        none: { usage: 'dns needs a domain or an IP address: give one or more, or pipe a list in' },
        single: run.args.length === 1 && (asked === null || asked.length === 1),
        note: ignoredAnswers,
        ...(run.settings.dnssec ? { coverage: dnssecCoverage } : {}),
      });
    },
  },
  async lookup(ctx, settings) {
    const { createDnsLookup, createDnssecLookup, loadDnsEngine } = await import('./dns-lookups.js');
    const dns = await loadDnsEngine();
    return settings.dnssec ? createDnssecLookup(dns, ctx, settings.types, settings.trustAnchor) : createDnsLookup(dns, ctx, settings.types);
  },
  record: {
    columns: DNS_SCHEMA,
    json: { name: 'DnsResult', load: async () => ({ schema: (await import('./record-json-schemas.js')).DNS_RECORD }) },
    view: async () => (await import('../output/human/dns-view.js')).DNS_VIEW,
  },
  api: {
    method: 'GET',
    path: '/api/dns-lookup',
    feature: null,
    // The server's resolvers answer; one type is a record, several an array with a `{query, error}` item for a type that failed.
    async call(remote, query, settings) {
      const asked = settings.asked === null || settings.asked.length === 0 ? null : settings.asked;
      try {
        const response = await remote.get('/api/dns-lookup', { domain: query, type: asked?.join(',') }, remote.answerOf('GET', '/api/dns-lookup', 'dns answer'));
        // One item per type asked, in the order asked, each of the name and the type it stands for: another name's or
        // type's records (or a type left out) would print as this question's answer.
        const types = asked ?? [isIpAddress(query) ? 'PTR' : 'A'];
        const items = Array.isArray(response.body) ? (response.body as DnsItem[]) : [response.body as DnsItem];
        if (Array.isArray(response.body) !== types.length > 1 || items.length !== types.length) {
          throw remote.unfit('dns answer', `asked for ${types.join(',')}, it gave ${Array.isArray(response.body) ? `${items.length} items` : 'one record'}`);
        }
        return items.map((item, i): Outcomes<DnsResult>[number] => {
          const type = types[i]!;
          if ('error' in item) {
            if (item.query.split(' ').at(-1)?.toUpperCase() !== type) throw remote.unfit('dns answer', `item ${i + 1} is for ${JSON.stringify(item.query.slice(0, 100))}, not the ${type} records asked`);
            return { ok: false, query: types.length > 1 ? `${query} ${type}` : query, error: remote.itemError(item.error) };
          }
          remote.answering('dns answer', item, query, 'domain');
          if (item.type !== type) throw remote.unfit('dns answer', `item ${i + 1} holds ${JSON.stringify(String(item.type).slice(0, 20))} records, not the ${type} records asked`);
          return { ok: true, query, value: item };
        });
      } catch (error) {
        const failure = toNetintelError(error);
        // Locally a bad name fails once under its own text, a failed lookup under "name TYPE".
        if (['usage', 'invalid_input'].includes(failure.code) || (asked !== null && asked.length > 1)) return [{ ok: false, query, error: failure }];
        return [{ ok: false, query: `${query} ${asked?.[0] ?? (isIpAddress(query) ? 'PTR' : 'A')}`, error: failure }];
      }
    },
    route: () => ({
      network: true,
      operationId: 'getDns',
      summary: 'DNS records of a domain (an IP address: its PTR)',
      description:
        'The records of `domain` for `type` (A, AAAA, MX, TXT, NS, CNAME, SOA or ALL as documented, and CAA, PTR, SRV; ' +
        'a comma-separated list asks several). One type answers its record; several answer an array with one item per type, ' +
        'a failed type as `{query, error}`. NXDOMAIN and NODATA are answers (`status`). `resolver` (ip[:port]) asks that ' +
        'resolver instead of the server\'s; private, loopback and link-local resolvers and ports other than 53 are refused.',
      querystring: {
        type: 'object',
        required: ['domain'],
        properties: {
          domain: { type: 'string', minLength: 1, maxLength: 300, description: 'Domain name (IDN accepted) or IP address (reverse lookup).' },
          type: { type: 'string', maxLength: 100, description: 'A, AAAA, MX, TXT, NS, CNAME, SOA, CAA, PTR, SRV or ALL; comma-separated for several.' },
          resolver: { type: 'string', maxLength: 60, description: 'A public resolver to ask (ip or ip:port).' },
        },
      },
      responseSchema: {
        oneOf: [{ $ref: '#/components/schemas/DnsResult' }, { type: 'array', items: { oneOf: [{ $ref: '#/components/schemas/DnsResult' }, { $ref: '#/components/schemas/QueryError' }] } }],
      },
      responseDescription: 'The DNS record of `netintel dns` (one type), or an array of them (several types).',
      examples: [{ query: '?domain=example.com&type=MX' }, { query: '?domain=example.com&type=ALL' }],
      handler: lazyHandler(async () => (await import('./dns-answer.js')).dnsLookup),
    }),
  },
});

/**
 * A record whose answer held records for names off the question's chain,
 * or of another type: they were ignored (RFC 2181 §5.4.1), and a person should know the
 * resolver sent them.
 */
function ignoredAnswers(record: DnsResult): string | null {
  if (!(record.ignored_answers > 0)) return null;
  const { domain, type, ignored_answers: count, resolver } = record;
  const records = count === 1 ? '1 record' : `${count} records`;
  return `${domain} ${type}: ${resolver} also sent ${records} of another name or type, not ${domain} ${type} nor its aliases; ignored, not an answer`;
}

/** `--dnssec`: a verdict left undecided because a question of the chain got no answer was checked in part (exit 7), never in full. */
function dnssecCoverage(result: DnsResult): CoverageFacts {
  const error = (result as Partial<DnssecDnsResult>).dnssec?.error ?? null;
  return { checked: error === null ? 'all' : 'some', failure: error };
}
